#include "fabric-switch.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/fabric-channel.h"
#include "ns3/pointer.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(FabricSwitch);

// ---------------- QueueHistogram ----------------

uint32_t
QueueHistogram::Bin(uint64_t v)
{
    if (v < 16)
    {
        return uint32_t(v);
    }
    uint32_t octave = 63 - __builtin_clzll(v); // >= 4
    uint32_t sub = uint32_t((v >> (octave - 4)) & 15);
    return (octave - 3) * 16 + sub;
}

uint64_t
QueueHistogram::BinUpper(uint32_t b)
{
    if (b < 16)
    {
        return b;
    }
    uint32_t octave = b / 16 + 3;
    uint64_t sub = b % 16;
    return ((16 + sub + 1) << (octave - 4)) - 1;
}

void
QueueHistogram::Add(uint64_t bytes, uint64_t weight)
{
    m_bins[Bin(bytes)] += weight;
    m_total += weight;
}

void
QueueHistogram::Merge(const QueueHistogram& o)
{
    for (size_t i = 0; i < m_bins.size(); ++i)
    {
        m_bins[i] += o.m_bins[i];
    }
    m_total += o.m_total;
}

std::vector<std::pair<uint32_t, uint64_t>>
QueueHistogram::NonEmptyBins() const
{
    std::vector<std::pair<uint32_t, uint64_t>> bins;
    for (size_t i = 0; i < m_bins.size(); ++i)
    {
        if (m_bins[i] != 0)
        {
            bins.emplace_back(uint32_t(i), m_bins[i]);
        }
    }
    return bins;
}

void
QueueHistogram::AddBins(const std::vector<std::pair<uint32_t, uint64_t>>& bins)
{
    for (const auto& [bin, count] : bins)
    {
        NS_ABORT_MSG_IF(bin >= m_bins.size(), "QueueHistogram::AddBins: bin " << bin);
        m_bins[bin] += count;
        m_total += count;
    }
}

uint64_t
QueueHistogram::Quantile(double q) const
{
    if (m_total == 0)
    {
        return 0;
    }
    uint64_t need = uint64_t(q * double(m_total));
    need = std::max<uint64_t>(need, 1);
    uint64_t acc = 0;
    for (uint32_t b = 0; b < m_bins.size(); ++b)
    {
        acc += m_bins[b];
        if (acc >= need)
        {
            return BinUpper(b);
        }
    }
    return BinUpper(uint32_t(m_bins.size() - 1));
}

// ---------------- FabricSwitch ----------------

TypeId
FabricSwitch::GetTypeId()
{
    static TypeId tid = TypeId("ns3::FabricSwitch")
                            .SetParent<Object>()
                            .SetGroupName("Fabric")
                            .AddConstructor<FabricSwitch>()
                            .AddAttribute("EcmpSeed",
                                          "Per-switch seed of the ECMP 5-tuple hash.",
                                          UintegerValue(0),
                                          MakeUintegerAccessor(&FabricSwitch::m_seed),
                                          MakeUintegerChecker<uint32_t>())
                            .AddAttribute("RouteView",
                                          "Keep a per-destination index into the distinct "
                                          "next-hop sets (2 bytes per destination host, filled "
                                          "on first use; FabricTopologyHelper turns it off when "
                                          "all switches' views would pass 512 MiB); off, every "
                                          "frame asks the route table. Same routes either way.",
                                          BooleanValue(true),
                                          MakeBooleanAccessor(&FabricSwitch::m_routeView),
                                          MakeBooleanChecker())
                            // Read-only: they put the MMU and the watchdog (and their trace
                            // sources) in the Config namespace under the switch's node.
                            .AddAttribute("Mmu",
                                          "The switch's shared-buffer MMU (read-only).",
                                          TypeId::ATTR_GET,
                                          PointerValue(),
                                          MakePointerAccessor(&FabricSwitch::m_mmu),
                                          MakePointerChecker<SharedBufferMmu>())
                            .AddAttribute("PfcWatchdog",
                                          "The switch's PFC watchdog (read-only).",
                                          TypeId::ATTR_GET,
                                          PointerValue(),
                                          MakePointerAccessor(&FabricSwitch::m_watchdog),
                                          MakePointerChecker<PfcWatchdog>());
    return tid;
}

FabricSwitch::FabricSwitch()
    : m_topoId(0)
    , m_seed(0)
{
    m_mmu = CreateObject<SharedBufferMmu>();
    m_watchdog = CreateObject<PfcWatchdog>();
    m_rng = CreateObject<UniformRandomVariable>();
}

void
FabricSwitch::DoDispose()
{
    m_watchdog->Dispose();
    m_watchdog = nullptr;
    m_ports.clear();
    m_routes = nullptr;
    m_mmu = nullptr;
    Object::DoDispose();
}

void
FabricSwitch::DoInitialize()
{
    m_watchdog->Start(this);
    Object::DoInitialize();
}

void
FabricSwitch::SetTopologyId(uint32_t id)
{
    m_topoId = id;
}

void
FabricSwitch::AddPort(Ptr<SwitchPort> port)
{
    port->SetSwitch(this, uint32_t(m_ports.size()));
    m_ports.push_back(port);
}

void
FabricSwitch::SetRouteTable(Ptr<FabricRouteTable> table)
{
    m_routes = table;
    m_hopSetOf.clear();
    m_hopSets.clear();
    m_hopPorts.clear();
}

void
FabricSwitch::PrefetchForward(uint32_t in, const FabricPacket* p, unsigned ahead) const
{
    if (ahead == 2)
    {
        m_mmu->PrefetchPort(in, p->priority);
    }
    if (p->dstHost >= m_hopSetOf.size())
    {
        return;
    }
    if (ahead == 2)
    {
        __builtin_prefetch(&m_hopSetOf[p->dstHost]);
        return;
    }
    const uint16_t set = m_hopSetOf[p->dstHost];
    if (set == kUnknownSet || m_hopSets[set].count == 0)
    {
        return;
    }
    const HopSet nh = m_hopSets[set];
    const uint32_t out = m_hopPorts[nh.start + (nh.count == 1 ? 0 : EcmpIndex(p, nh.count))];
    m_ports[out]->PrefetchAsEgress(p->priority);
}

void
FabricSwitch::DisableRouteView()
{
    m_routeView = false;
    m_hopSetOf.clear();
    m_hopSets.clear();
    m_hopPorts.clear();
}

FabricSwitch::HopSpan
FabricSwitch::LearnHops(uint32_t dstHost)
{
    const std::vector<uint16_t>& nh = m_routes->NextHops(m_topoId, dstHost);
    if (!m_routeView)
    {
        return {nh.data(), uint32_t(nh.size())};
    }
    size_t set = 0;
    for (; set < m_hopSets.size(); ++set)
    {
        const HopSet& h = m_hopSets[set];
        if (h.count == nh.size() && std::equal(nh.begin(), nh.end(), m_hopPorts.begin() + h.start))
        {
            break;
        }
    }
    if (set == m_hopSets.size())
    {
        NS_ABORT_MSG_IF(set == kUnknownSet,
                        "FabricSwitch: more than " << kUnknownSet << " distinct next-hop sets");
        m_hopSets.push_back({uint32_t(m_hopPorts.size()), uint32_t(nh.size())});
        m_hopPorts.insert(m_hopPorts.end(), nh.begin(), nh.end());
    }
    if (dstHost >= m_hopSetOf.size())
    {
        m_hopSetOf.resize(dstHost + 1, kUnknownSet);
    }
    m_hopSetOf[dstHost] = uint16_t(set);
    return {m_hopPorts.data() + m_hopSets[set].start, m_hopSets[set].count};
}

void
FabricSwitch::ConfigureBuffer(uint64_t nicRateBps, uint32_t mtuFrameBytes)
{
    std::vector<SharedBufferMmu::PortInfo> info;
    for (auto& p : m_ports)
    {
        SharedBufferMmu::PortInfo pi;
        pi.rateBps = p->GetRateBps();
        pi.delay = p->GetFabricChannel() ? p->GetFabricChannel()->GetDelay() : Time(0);
        info.push_back(pi);
    }
    m_mmu->Configure(info, nicRateBps, mtuFrameBytes);
}

uint32_t
FabricSwitch::EcmpIndex(const FabricPacket* p, uint32_t n) const
{
    // splitmix64-style mixing of the 5-tuple (IPv4 src/dst, UDP ports, protocol 17) and seed.
    // Seed and switch id both enter, so neighbouring tiers do not make correlated choices.
    uint64_t h = ((uint64_t(m_seed) << 32) | m_topoId) ^ 0x9e3779b97f4a7c15ULL;
    auto mix = [&h](uint64_t v)
    {
        h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
        h ^= h >> 30;
        h *= 0xbf58476d1ce4e5b9ULL;
        h ^= h >> 27;
        h *= 0x94d049bb133111ebULL;
        h ^= h >> 31;
    };
    mix((uint64_t(p->srcHost) << 32) | p->dstHost);
    mix((uint64_t(p->sport) << 16) | p->dport);
    mix(17);
    return uint32_t(h % n);
}

bool
FabricSwitch::ShouldMarkEcn(uint64_t q, uint64_t kmin, uint64_t kmax, double pmax)
{
    if (q <= kmin)
    {
        return false;
    }
    if (q > kmax)
    {
        return true;
    }
    double prob = pmax * double(q - kmin) / double(kmax - kmin);
    ++m_ecnDraws;
    return m_rng->GetValue() < prob;
}

void
FabricSwitch::Forward(SwitchPort* in, FabricPacket* p)
{
    if (p->ttl <= 1)
    {
        in->DropPacket(p, DropReason::TtlExpired);
        return;
    }
    p->ttl--;
    const HopSpan nh = HopsTo(p->dstHost);
    if (nh.count == 0)
    {
        in->DropPacket(p, DropReason::NoRoute);
        return;
    }
    uint32_t out = nh.ports[nh.count == 1 ? 0 : EcmpIndex(p, nh.count)];
    SwitchPort* op = PeekPointer(m_ports[out]);
    if (!op->IsLinkUp())
    {
        in->DropPacket(p, DropReason::LinkDown);
        return;
    }
    if (op->IsWatchdogDropping(p->priority))
    {
        op->DropPacket(p, DropReason::PfcWatchdog);
        return;
    }
    uint32_t inIdx = in->GetPortIndex();
    if (!m_mmu->Admit(inIdx, p->priority, p->frameBytes))
    {
        in->DropPacket(p, DropReason::BufferOverflow);
        return;
    }
    p->ingressPort = inIdx;
    if (m_mmu->ShouldPause(inIdx, p->priority))
    {
        in->PausePeer(p->priority);
    }
    m_qhist.Add(op->TotalQueueBytes());
    op->Enqueue(p);
}

void
FabricSwitch::OnDequeue(SwitchPort* out, FabricPacket* p)
{
    uint32_t in = p->ingressPort;
    m_mmu->Release(in, p->priority, p->frameBytes);
    SwitchPort* ip = PeekPointer(m_ports[in]);
    if (ip->IsPausingPeer(p->priority) && m_mmu->ShouldResume(in, p->priority))
    {
        ip->ResumePeer(p->priority);
    }
}

int64_t
FabricSwitch::AssignStreams(int64_t stream)
{
    m_rng->SetStream(stream);
    return 1;
}

void
QueueHistogram::VisitMemo(MemoRecord& r)
{
    r.SumBlock(m_bins.data(), m_bins.size());
    r.Sum(m_total);
}

void
FabricSwitch::ProbeRest(MemoProbe& probe) const
{
    if (m_mmu && m_mmu->TotalUsedBytes() != 0)
    {
        probe.Block("switch " + std::to_string(m_topoId) + ": its buffer holds "
                    + std::to_string(m_mmu->TotalUsedBytes()) + " bytes");
    }
    for (const Ptr<SwitchPort>& port : m_ports)
    {
        port->ProbeRest(probe);
    }
}

void
FabricSwitch::VisitMemo(MemoRecord& r)
{
    m_qhist.VisitMemo(r);
    r.Fault(m_ecnDraws, "random ECN marking draws");
    for (const Ptr<SwitchPort>& port : m_ports)
    {
        port->VisitMemo(r);
    }
}

} // namespace ns3
