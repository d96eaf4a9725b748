/*
 * A shared-buffer Ethernet switch for RoCE fabrics: any number of SwitchPorts, per-flow ECMP on
 * a seeded 5-tuple hash over precomputed next-hop sets, the MMU's admission and PFC decisions,
 * ECN marking, TTL, and drop accounting with reasons. Aggregated to an ns-3 Node.
 */
#ifndef FABRICSIM_FABRIC_SWITCH_H
#define FABRICSIM_FABRIC_SWITCH_H

#include "fabric-route-table.h"
#include "pfc-watchdog.h"
#include "shared-buffer-mmu.h"
#include "switch-port.h"

#include "ns3/object.h"
#include "ns3/random-variable-stream.h"

#include <vector>

namespace ns3
{

/// Log-spaced histogram of queue bytes (64 octaves x 16 steps): p99 without storing samples.
class QueueHistogram
{
  public:
    void Add(uint64_t bytes, uint64_t weight = 1);
    void Merge(const QueueHistogram& o);
    /// Smallest recorded value v with at least q of the weight at or below v (bin upper edge).
    uint64_t Quantile(double q) const;
    uint64_t Count() const
    {
        return m_total;
    }

    /// Every bin and the count (link-memo.h): a span adds its samples.
    void VisitMemo(MemoRecord& record);

    /// The non-empty bins as (bin, count), and adding such a list: how a rank of a distributed
    /// run sends its histogram to the one that merges them.
    std::vector<std::pair<uint32_t, uint64_t>> NonEmptyBins() const;
    void AddBins(const std::vector<std::pair<uint32_t, uint64_t>>& bins);

  private:
    static uint32_t Bin(uint64_t v);
    static uint64_t BinUpper(uint32_t b);
    std::vector<uint64_t> m_bins = std::vector<uint64_t>(64 * 16 + 1, 0);
    uint64_t m_total = 0;
};

class alignas(64) FabricSwitch : public Object
{
  public:
    static TypeId GetTypeId();
    FabricSwitch();

    /// Topology node id of this switch (the route table is indexed by it).
    void SetTopologyId(uint32_t id);
    uint32_t GetTopologyId() const
    {
        return m_topoId;
    }

    void AddPort(Ptr<SwitchPort> port);
    uint32_t GetNPorts() const
    {
        return uint32_t(m_ports.size());
    }
    Ptr<SwitchPort> GetPort(uint32_t i) const
    {
        return m_ports[i];
    }

    void SetRouteTable(Ptr<FabricRouteTable> table);
    /// Turns the switch's own route view off (RouteView): the topology helper does when the
    /// views of all switches would exceed its memory budget.
    void DisableRouteView();
    /// Use `mmu` (configured by the caller's attributes) instead of the default one.
    void SetMmu(Ptr<SharedBufferMmu> mmu)
    {
        m_mmu = mmu;
    }

    Ptr<SharedBufferMmu> GetMmu() const
    {
        return m_mmu;
    }

    /// The switch's PFC watchdog (configured by the ns3::PfcWatchdog attribute defaults).
    Ptr<PfcWatchdog> GetPfcWatchdog() const
    {
        return m_watchdog;
    }

    /// Size the MMU once all ports are attached; nicRateBps = host NIC speed.
    void ConfigureBuffer(uint64_t nicRateBps, uint32_t mtuFrameBytes);

    /// A frame arrived on port `in`.
    void Forward(SwitchPort* in, FabricPacket* p);

    /// Starts loading what Forward will read for \p p arriving on port \p in, \p ahead
    /// events before (the scheduler's look-ahead; only a hint): at 2 the route entry and the
    /// port's buffer record, at 1 (the route entry loaded) the output port it leads to.
    void PrefetchForward(uint32_t in, const FabricPacket* p, unsigned ahead) const;
    void OnDequeue(SwitchPort* out, FabricPacket* p);

    /// Egress port index the ECMP hash picks among `n` for this frame.
    uint32_t EcmpIndex(const FabricPacket* p, uint32_t n) const;

    bool ShouldMarkEcn(uint64_t queueBytes, uint64_t kmin, uint64_t kmax, double pmax);

    const QueueHistogram& GetQueueHistogram() const
    {
        return m_qhist;
    }

    int64_t AssignStreams(int64_t stream);

    /// At rest: the shared buffer holds nothing and every port is at rest.
    void ProbeRest(MemoProbe& probe) const;
    /// The switch's own counters, then every port's (link-memo.h).
    void VisitMemo(MemoRecord& record);

  protected:
    void DoDispose() override;
    /// Starts the PFC watchdog once every port is attached (at simulation start).
    void DoInitialize() override;

  private:
    // What Forward reads, in the switch's first two cache lines (the class is line-aligned;
    // ns-3's Object header takes 32 bytes).
    std::vector<Ptr<SwitchPort>> m_ports;
    uint32_t m_topoId;
    uint32_t m_seed;
    Ptr<FabricRouteTable> m_routes;
    Ptr<SharedBufferMmu> m_mmu;
    /// The route table as this switch reads it (RouteView): a set index per destination host
    /// (filled on first use), the distinct next-hop sets as ranges of one port array. One load
    /// on the hop, instead of the table's chain of vectors; cleared when the table changes.
    struct HopSet
    {
        uint32_t start;
        uint32_t count;
    };
    /// Next-hop ports as Forward reads them: valid until the next lookup.
    struct HopSpan
    {
        const uint16_t* ports;
        uint32_t count;
    };
    static constexpr uint16_t kUnknownSet = UINT16_MAX;
    bool m_routeView = true;
    std::vector<uint16_t> m_hopSetOf;
    std::vector<HopSet> m_hopSets;
    std::vector<uint16_t> m_hopPorts;
    HopSpan HopsTo(uint32_t dstHost)
    {
        if (dstHost < m_hopSetOf.size() && m_hopSetOf[dstHost] != kUnknownSet)
        {
            const HopSet& h = m_hopSets[m_hopSetOf[dstHost]];
            return {m_hopPorts.data() + h.start, h.count};
        }
        return LearnHops(dstHost);
    }
    HopSpan LearnHops(uint32_t dstHost);
    Ptr<PfcWatchdog> m_watchdog;
    Ptr<UniformRandomVariable> m_rng;
    QueueHistogram m_qhist;
    uint64_t m_ecnDraws = 0; ///< random ECN marking decisions (a replay cannot redraw them)
};

} // namespace ns3

#endif
