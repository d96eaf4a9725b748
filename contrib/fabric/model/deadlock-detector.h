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
#include <functional>
#include <map>
#include <unordered_map>
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
 * What one check sees of the switches and NICs one process simulates (all of them, but on a
 * rank of a distributed run): its paused egress queues that hold frames, described then; every
 * (switch, ingress port, class) it pauses with where the frames from there wait (its own paused
 * queues' ports) or that they drain; and the data frames its ports sent so far. The check is
 * decided on the union of every rank's snapshot of the same time.
 */
struct DeadlockSnapshot
{
    struct Pausing
    {
        uint32_t node = 0; ///< topology id of the pausing switch
        uint32_t port = 0; ///< its ingress port whose peer it pauses
        uint8_t priority = 0;
        bool drains = false;             ///< some frames from there sit in unpaused queues
        std::vector<uint32_t> waitPorts; ///< else: its paused queues (ports) holding them
    };

    Time at;
    uint64_t sent = 0;
    std::vector<DeadlockHop> paused;
    std::vector<Pausing> pausing;
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

    /// Run one check now, decided now on this process's snapshot.
    void Check();

    /**
     * Decide each periodic check \p delay after its snapshot, on the snapshots of \p ranks
     * processes: this one's and those AddSnapshot gives (a run across MPI ranks; \p send hands
     * this process's to the others, to arrive by then). The decision runs after every other event
     * of its picosecond, so a deadlock stops every rank at the same instant. With one rank the
     * same delay keeps a run on one process deciding as a partitioned one does.
     */
    void SetDecision(Time delay,
                     uint32_t ranks,
                     std::function<void(const DeadlockSnapshot&)> send = nullptr);

    /// Another rank's snapshot of a periodic check.
    void AddSnapshot(DeadlockSnapshot snapshot);

    /// This process's snapshot now.
    DeadlockSnapshot TakeSnapshot();

    /// Decide on snapshots of one time (the reports name that time).
    void Decide(std::vector<DeadlockSnapshot> parts);

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
    /// Decides the check of time \p ps on the snapshots gathered for it.
    void DecideWaiting(int64_t ps);
    /// Whether this process simulates switch \p s.
    bool IsLocal(uint32_t s) const;
    /// This process's paused egress queues holding frames, in switch, port, class order.
    void CollectPaused();
    /// A cycle of the wait-for graph among m_paused (empty if none), its edges from \p pausing
    /// (by PausingKey).
    std::vector<uint32_t> FindCycle(
        const std::unordered_map<uint64_t, const DeadlockSnapshot::Pausing*>& pausing) const;
    uint64_t PausingKey(uint32_t sw, uint32_t port, uint8_t prio) const;
    /// Queues (indexes into m_paused) holding frames that B got on ingress q, class c; false
    /// when some of those frames sit in a queue that is not paused (B will drain them).
    bool StuckTargets(uint32_t b, uint32_t q, uint8_t c, std::vector<uint32_t>& targets) const;
    DeadlockHop Describe(const QueueKey& k) const;
    /// Data frames sent by this process's ports.
    uint64_t DataFramesSent() const;
    void Report(DeadlockReport r);

    Time m_interval;
    Time m_stallTime;

    std::vector<Ptr<FabricSwitch>> m_switches;
    std::vector<Ptr<FabricNetDevice>> m_endpoints;
    std::vector<uint32_t> m_portBase; ///< first flat port index of each switch
    std::vector<PortPeer> m_peers;    ///< per flat port
    std::vector<int32_t> m_vertex;    ///< per flat port x 8: index in m_paused, or -1

    std::unordered_map<uint32_t, uint32_t> m_switchOf; ///< topology id -> index in m_switches
    std::vector<QueueKey> m_paused;
    std::vector<DeadlockHop> m_pausedHops; ///< per m_paused, as the snapshots described them
    std::vector<QueueKey> m_candidate;     ///< cycle seen at the previous check (to confirm)
    bool m_haveBaseline = false;
    uint64_t m_lastSent = 0;
    Time m_lastCheck;
    Time m_stalledFor;
    bool m_reported = false; ///< the current deadlock was reported already
    std::vector<DeadlockReport> m_reports;
    EventId m_event;
    Time m_delay;         ///< SetDecision
    uint32_t m_ranks = 1; ///< SetDecision
    std::function<void(const DeadlockSnapshot&)> m_send;
    std::map<int64_t, std::vector<DeadlockSnapshot>> m_waiting; ///< by snapshot time (ps)
    TracedCallback<const DeadlockReport&> m_trace;
};

} // namespace ns3

#endif
