/*
 * PFC deadlock detection over a whole fabric. A periodic check builds the wait-for graph of
 * egress queues that hold frames while their peer pauses them: queue (A, p, c) waits for queue
 * (B, p', c) when B, the switch behind A's port p, pauses that port on class c and every frame
 * B holds from that ingress sits in paused egress queues such as (B, p', c). Such frames can
 * never leave, so B can never send XON: a cycle in this graph is a cyclic buffer dependency, a
 * deadlock. The check also notices a fabric where nothing at all is transmitted for a while
 * although frames are queued. Both are reported (trace source "Deadlock") with the queues
 * involved and how long they have been paused.
 */
#ifndef FABRICSIM_DEADLOCK_DETECTOR_H
#define FABRICSIM_DEADLOCK_DETECTOR_H

#include "fabric-switch.h"

#include "ns3/event-id.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/traced-callback.h"

#include <array>
#include <vector>

namespace ns3
{

/// One paused egress queue named in a deadlock report.
struct DeadlockHop
{
    uint32_t node = 0;     ///< topology id of the switch holding the queue
    uint32_t port = 0;     ///< its egress port
    uint8_t priority = 0;  ///< the paused class
    uint32_t peerNode = 0; ///< topology id of the node pausing it (UINT32_MAX if unknown)
    uint32_t peerPort = 0; ///< port of the peer facing this queue
    bool peerIsSwitch = false;
    Time pausedFor; ///< uninterrupted pause so far
    uint64_t queuedBytes = 0;
    uint64_t queuedFrames = 0;
};

/// What the detector found.
struct DeadlockReport
{
    bool cycle = false; ///< true: cyclic buffer dependency (hops in wait-for order); false: stall
    Time time;          ///< when it was confirmed
    Time stalledFor;    ///< how long no frame (PFC frames aside) had been transmitted
    std::vector<DeadlockHop> hops; ///< the cycle, or every paused non-empty queue for a stall
};

/**
 * \brief Finds PFC deadlocks (cycles of paused queues) and fabric-wide stalls.
 */
class DeadlockDetector : public Object
{
  public:
    static TypeId GetTypeId();
    DeadlockDetector();

    /**
     * Watch `switches`; `endpoints` (NIC ports) count for the stall check. Checks start one
     * CheckInterval from now, and only when CheckInterval > 0.
     */
    void Install(const std::vector<Ptr<FabricSwitch>>& switches,
                 const std::vector<Ptr<FabricNetDevice>>& endpoints);

    /// Reports so far (a persisting deadlock is reported once until it clears).
    const std::vector<DeadlockReport>& GetReports() const
    {
        return m_reports;
    }

    /// Run one check now (also used by the periodic event).
    void Check();

    typedef void (*DeadlockTracedCallback)(const DeadlockReport& report);

  protected:
    void DoDispose() override;

  private:
    struct QueueKey
    {
        uint32_t sw;
        uint32_t port;
        uint8_t prio;
        bool operator==(const QueueKey& o) const
        {
            return sw == o.sw && port == o.port && prio == o.prio;
        }
    };

    struct PortPeer
    {
        int32_t sw = -1; ///< index in m_switches, -1 for a NIC
        uint32_t port = 0;
        uint32_t node = UINT32_MAX;
    };

    void Periodic();
    /// Paused egress queues holding frames, in switch, port, class order.
    void CollectPaused();
    /// A cycle of the wait-for graph among m_paused (empty if none).
    std::vector<uint32_t> FindCycle();
    /// Queues (indexes into m_paused) holding frames that B got on ingress q, class c; false
    /// when some of those frames sit in a queue that is not paused (B will drain them).
    bool StuckTargets(uint32_t b, uint32_t q, uint8_t c, std::vector<uint32_t>& targets) const;
    DeadlockHop Describe(const QueueKey& k) const;
    uint64_t DataFramesSent() const;
    void Report(DeadlockReport r);

    Time m_interval;
    Time m_stallTime;

    std::vector<Ptr<FabricSwitch>> m_switches;
    std::vector<Ptr<FabricNetDevice>> m_endpoints;
    std::vector<uint32_t> m_portBase; ///< first flat port index of each switch
    std::vector<PortPeer> m_peers;    ///< per flat port
    std::vector<int32_t> m_vertex;    ///< per flat port x 8: index in m_paused, or -1

    std::vector<QueueKey> m_paused;
    std::vector<QueueKey> m_candidate; ///< cycle seen at the previous check (to confirm)
    bool m_haveBaseline = false;
    uint64_t m_lastSent = 0;
    Time m_lastCheck;
    Time m_stalledFor;
    bool m_reported = false; ///< the current deadlock was reported already
    std::vector<DeadlockReport> m_reports;
    EventId m_event;
    TracedCallback<const DeadlockReport&> m_trace;
};

} // namespace ns3

#endif
