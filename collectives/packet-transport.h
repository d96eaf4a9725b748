/*
 * Packet-level Transport: each (src, dst, channel) is an RDMA reliable connection (queue pair)
 * on the installed ns-3 fabric, opened on first use with its own UDP source port so ECMP can
 * spread channels; a message is one RDMA WRITE and is delivered when its last byte arrived in
 * order at the receiver. Run() returns as soon as no message is in flight and no callback is
 * pending, so a collective that stalls ends the run (and is reported) instead of idling.
 */
#ifndef FABRICSIM_PACKET_TRANSPORT_H
#define FABRICSIM_PACKET_TRANSPORT_H

#include "memo-fabric.h"
#include "transport.h"

#include "ns3/event-id.h"
#include "ns3/fabric-topology-helper.h"
#include "ns3/object-factory.h"

#include <deque>
#include <map>
#include <memory>
#include <tuple>
#include <vector>

namespace fabricsim
{

/// How the packet transport opens its queue pairs.
struct PacketTransportOptions
{
    uint8_t m_priority = 3;     ///< data traffic class
    uint16_t m_basePort = 1024; ///< UDP source port of channel 0; channel c uses base + c
    int64_t m_stopPs = 0;       ///< watchdog: Run() stops at this absolute time (0 = none)
    /// Stall watchdog: Run() stops once messages are in flight and none has been delivered for
    /// this long (0 = none). Waiting on timers with nothing in flight is not a stall, so a
    /// workload may idle between arrivals for any time.
    int64_t m_stallPs = 0;
};

class PacketTransport
    : public Transport
    , public MemoFabric
{
  public:
    /**
     * \param fabric an installed fabric; ranks are its hosts in order
     * \param cc congestion-control factory for every queue pair
     */
    PacketTransport(ns3::FabricTopologyHelper& fabric,
                    const ns3::ObjectFactory& cc,
                    const PacketTransportOptions& opt = {});
    ~PacketTransport() override;

    void Send(uint32_t src,
              uint32_t dst,
              uint32_t channel,
              uint64_t bytes,
              Callback onDelivered) override;
    int64_t NowPs() const override;
    void Schedule(int64_t delayPs, Callback fn) override;
    uint32_t NumRanks() const override;
    void Run() override;
    std::string Name() const override;

    /// True when the last Run() ended at a watchdog (the stop time or a stall) with work left.
    bool StoppedByWatchdog() const
    {
        return m_watchdogFired;
    }

    /// Which watchdog ended the last Run() and when; empty when none did.
    std::string WatchdogReport() const;

    std::string StopReport() const override
    {
        return WatchdogReport();
    }

    bool ReachedStopTime() const override
    {
        return m_watchdogFired && !m_stalled;
    }

    /// Messages sent and not yet delivered.
    uint64_t InFlight() const
    {
        return m_inFlight;
    }

    /// Queue pairs opened so far.
    size_t Connections() const
    {
        return m_conns.size();
    }

    /// "host 3 -> host 4 channel 0: 2 message(s), 1048576 bytes unacknowledged" per busy QP.
    std::vector<std::string> InFlightReport() const;

    /// InFlightReport(), then the watchdog's line when one stopped the run.
    std::vector<std::string> StuckReport() const override;

    MemoFabric* GetMemoFabric() override
    {
        return this;
    }

    FabricProbe Probe(const std::vector<uint32_t>& hosts) const override;
    bool ScopeClosed(const std::vector<uint32_t>& hosts) const override;
    bool ScopesOverlap(const std::vector<uint32_t>& a,
                       const std::vector<uint32_t>& b) const override;
    uint64_t BeginSpan(const std::vector<uint32_t>& hosts) override;
    FabricSpan EndSpan(uint64_t id) override;
    void ApplySpan(const std::vector<uint32_t>& hosts,
                   int64_t startPs,
                   const FabricSpan& span) override;

  private:
    struct Connection
    {
        uint32_t m_src = 0;
        uint32_t m_dst = 0;
        uint32_t m_channel = 0;
        ns3::Ptr<ns3::RdmaQueuePair> m_qp;
        std::deque<Callback> m_pending; ///< delivery callbacks in posting order
    };

    /// The memo's scope of \p hosts (cached per group and route epoch).
    const ns3::MemoScope& ScopeOf(const std::vector<uint32_t>& hosts) const;
    void VisitScope(const ns3::MemoScope& scope, ns3::MemoRecord& record) const;

    void Delivered(size_t conn, uint64_t bytes);
    void MaybeStop();
    /// Checks for a stall \p delayPs from now (m_stallPs after the last delivery).
    void ArmStallCheck(int64_t delayPs);

    ns3::FabricTopologyHelper& m_fabric;
    ns3::ObjectFactory m_cc;
    PacketTransportOptions m_opt;
    std::vector<Connection> m_conns;
    std::map<std::tuple<uint32_t, uint32_t, uint32_t>, size_t> m_connIndex;
    uint64_t m_inFlight = 0;
    uint64_t m_timers = 0;
    bool m_running = false;
    bool m_watchdogFired = false;
    bool m_stalled = false;       ///< the stall watchdog (not the stop time) ended the run
    int64_t m_lastProgressPs = 0; ///< last delivery, or last moment with nothing in flight
    ns3::EventId m_watchdog;
    ns3::EventId m_stallCheck;
    struct Span
    {
        std::vector<uint32_t> hosts;
        ns3::MemoRecord record;
    };

    mutable std::map<std::vector<uint32_t>, std::pair<uint64_t, ns3::MemoScope>> m_scopes;
    std::map<uint64_t, Span> m_spans;
    mutable size_t m_probeSize = 0; ///< the largest probe yet (its room is reserved)
    uint64_t m_nextSpan = 0;
    /// Cleared on destruction: queue-pair callbacks outlive this object in the NICs.
    std::shared_ptr<bool> m_alive = std::make_shared<bool>(true);
};

} // namespace fabricsim

#endif
