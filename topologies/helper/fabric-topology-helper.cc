#include "fabric-topology-helper.h"

#include "unit-conversions.h"

#include "ns3/abort.h"
#include "ns3/double.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{

namespace
{

/// Route table view over the topology's BFS next-hop sets (shared, swapped on link changes).
class TopologyRouteTable : public FabricRouteTable
{
  public:
    explicit TopologyRouteTable(std::shared_ptr<fabricsim::Routing> r)
        : m_r(std::move(r))
    {
    }

    const std::vector<uint16_t>& NextHops(uint32_t node, uint32_t dstHost) const override
    {
        return m_r->NextHops(node, dstHost);
    }

  private:
    std::shared_ptr<fabricsim::Routing> m_r;
};

/// Shortest-path routes with some (node, destination) entries forced (non-minimal routing).
class OverrideRouteTable : public FabricRouteTable
{
  public:
    using Overrides = std::map<std::pair<uint32_t, uint32_t>, std::vector<uint16_t>>;

    OverrideRouteTable(std::shared_ptr<fabricsim::Routing> r, Overrides o)
        : m_r(std::move(r))
        , m_o(std::move(o))
    {
    }

    const std::vector<uint16_t>& NextHops(uint32_t node, uint32_t dstHost) const override
    {
        auto it = m_o.find({node, dstHost});
        return it != m_o.end() ? it->second : m_r->NextHops(node, dstHost);
    }

  private:
    std::shared_ptr<fabricsim::Routing> m_r;
    Overrides m_o;
};

} // namespace

FabricTopologyHelper::FabricTopologyHelper(const fabricsim::Topology& topo)
    : m_topo(topo)
    , m_linkDown(topo.links.size(), false)
    , m_mtu(1000)
    , m_nicRateBps(0)
    , m_installed(false)
{
    m_nicFactory.SetTypeId("ns3::RdmaNic");
    m_portFactory.SetTypeId("ns3::SwitchPort");
    m_mmuFactory.SetTypeId("ns3::SharedBufferMmu");
    m_switchFactory.SetTypeId("ns3::FabricSwitch");
}

FabricTopologyHelper::~FabricTopologyHelper() = default;

void
FabricTopologyHelper::SetNicAttribute(const std::string& n, const AttributeValue& v)
{
    m_nicFactory.Set(n, v);
}

void
FabricTopologyHelper::SetSwitchPortAttribute(const std::string& n, const AttributeValue& v)
{
    m_portFactory.Set(n, v);
}

void
FabricTopologyHelper::SetMmuAttribute(const std::string& n, const AttributeValue& v)
{
    m_mmuFactory.Set(n, v);
}

void
FabricTopologyHelper::SetSwitchAttribute(const std::string& n, const AttributeValue& v)
{
    m_switchFactory.Set(n, v);
}

void
FabricTopologyHelper::SetEcn(const EcnConfig& ecn)
{
    m_ecn = ecn;
}

void
FabricTopologyHelper::SetSystemIds(const std::vector<uint32_t>& systemIds)
{
    m_systemIds = systemIds;
}

void
FabricTopologyHelper::SetMtu(uint32_t mtu)
{
    m_mtu = mtu;
}

void
FabricTopologyHelper::Install()
{
    NS_ABORT_MSG_IF(m_installed, "FabricTopologyHelper::Install called twice");
    m_installed = true;
    size_t n = m_topo.nodes.size();
    NS_ABORT_MSG_IF(!m_systemIds.empty() && m_systemIds.size() != n,
                    "FabricTopologyHelper::SetSystemIds: " << m_systemIds.size() << " ids for " << n
                                                           << " nodes");
    for (size_t i = 0; i < n; ++i)
    {
        m_nodes.Add(CreateObject<Node>(m_systemIds.empty() ? 0 : m_systemIds[i]));
    }
    m_ports.assign(n, {});
    m_switches.assign(n, nullptr);
    for (size_t i = 0; i < n; ++i)
    {
        if (m_topo.nodes[i].kind == fabricsim::NodeKind::Switch)
        {
            auto sw = m_switchFactory.Create<FabricSwitch>();
            sw->SetTopologyId(uint32_t(i));
            m_nodes.Get(uint32_t(i))->AggregateObject(sw);
            m_switches[i] = sw;
        }
    }
    m_nicRateBps = 0;
    for (size_t l = 0; l < m_topo.links.size(); ++l)
    {
        const auto& link = m_topo.links[l];
        auto ch = CreateObject<FabricChannel>();
        ch->SetAttribute("Delay", TimeValue(PicoSeconds(int64_t(link.spec.delayPs))));
        ch->SetAttribute("LossRate", DoubleValue(link.spec.lossRate));
        m_links.push_back(ch);
        for (uint32_t end : {link.a, link.b})
        {
            Ptr<FabricNetDevice> dev;
            Ptr<Node> node = m_nodes.Get(end);
            const auto& tn = m_topo.nodes[end];
            if (tn.kind == fabricsim::NodeKind::Host)
            {
                auto nic = m_nicFactory.Create<RdmaNic>();
                nic->SetHostIndex(tn.hostIndex);
                dev = nic;
                m_nicRateBps = std::max<uint64_t>(m_nicRateBps, uint64_t(link.spec.rateBps));
            }
            else
            {
                dev = m_portFactory.Create<SwitchPort>();
            }
            dev->SetAttribute("DataRate", DataRateValue(DataRate(uint64_t(link.spec.rateBps))));
            dev->SetAttribute("Mtu", UintegerValue(m_mtu));
            dev->SetAddress(Mac48Address::Allocate());
            node->AddDevice(dev);
            dev->Attach(ch);
            m_ports[end].push_back(dev);
            if (m_switches[end])
            {
                m_switches[end]->AddPort(DynamicCast<SwitchPort>(dev));
            }
        }
    }
    if (m_nicRateBps == 0)
    {
        m_nicRateBps = 100000000000ULL;
    }
    uint32_t mtuFrame = RoceSize::DataFrame(m_mtu, false);
    for (auto& sw : m_switches)
    {
        if (!sw)
        {
            continue;
        }
        sw->SetMmu(m_mmuFactory.Create<SharedBufferMmu>());
        sw->ConfigureBuffer(m_nicRateBps, mtuFrame);
        for (uint32_t p = 0; p < sw->GetNPorts(); ++p)
        {
            auto port = sw->GetPort(p);
            double scale
                = m_ecn.refRateBps ? double(port->GetRateBps()) / double(m_ecn.refRateBps) : 1.0;
            port->SetEcn(uint64_t(double(m_ecn.kminBytes) * scale),
                         uint64_t(double(m_ecn.kmaxBytes) * scale),
                         m_ecn.pmax);
            port->SetAttribute("EcnEnabled", BooleanValue(m_ecn.enabled));
        }
    }
    InstallRoutes();
}

void
FabricTopologyHelper::InstallRoutes()
{
    m_routing = std::make_shared<fabricsim::Routing>(m_topo, m_linkDown);
    PublishRoutes();
}

void
FabricTopologyHelper::PublishRoutes()
{
    // The plain table when nothing is overridden: no lookup on the forwarding path then.
    Ptr<FabricRouteTable> table;
    if (m_routeOverrides.empty())
    {
        table = Create<TopologyRouteTable>(m_routing);
    }
    else
    {
        table = Create<OverrideRouteTable>(m_routing, m_routeOverrides);
    }
    // The switches' own route views cost 2 bytes per switch and destination host when full:
    // 28 MB at 10k hosts, but over a GB past about 60k. Past the budget the switches read
    // the shared table instead (the same routes, a few more loads a hop).
    constexpr uint64_t kRouteViewBudget = uint64_t(512) << 20;
    uint64_t switches = 0;
    for (const auto& sw : m_switches)
    {
        switches += sw ? 1 : 0;
    }
    const bool views = switches * m_topo.NumHosts() * 2 <= kRouteViewBudget;
    for (auto& sw : m_switches)
    {
        if (sw)
        {
            sw->SetRouteTable(table);
            if (!views)
            {
                sw->DisableRouteView();
            }
        }
    }
    m_table = table;
    ++m_routeEpoch;
}

const fabricsim::Routing&
FabricTopologyHelper::GetRouting() const
{
    return *m_routing;
}

int64_t
FabricTopologyHelper::AssignStreams(int64_t stream)
{
    int64_t s = stream;
    for (auto& ch : m_links)
    {
        s += ch->AssignStreams(s);
    }
    for (auto& sw : m_switches)
    {
        if (sw)
        {
            s += sw->AssignStreams(s);
        }
    }
    for (auto& nic : GetAllNics())
    {
        s += nic->AssignStreams(s);
    }
    return s - stream;
}

Ptr<Node>
FabricTopologyHelper::GetNode(uint32_t id) const
{
    return m_nodes.Get(id);
}

Ptr<Node>
FabricTopologyHelper::GetHostNode(uint32_t host) const
{
    return m_nodes.Get(m_topo.hosts.at(host));
}

Ptr<RdmaNic>
FabricTopologyHelper::GetNic(uint32_t host, uint32_t port) const
{
    return DynamicCast<RdmaNic>(m_ports.at(m_topo.hosts.at(host)).at(port));
}

std::vector<Ptr<RdmaNic>>
FabricTopologyHelper::GetAllNics() const
{
    std::vector<Ptr<RdmaNic>> v;
    for (uint32_t h = 0; h < m_topo.NumHosts(); ++h)
    {
        for (auto& d : m_ports[m_topo.hosts[h]])
        {
            v.push_back(DynamicCast<RdmaNic>(d));
        }
    }
    return v;
}

std::vector<Ptr<FabricSwitch>>
FabricTopologyHelper::GetAllSwitches() const
{
    std::vector<Ptr<FabricSwitch>> v;
    for (auto& s : m_switches)
    {
        if (s)
        {
            v.push_back(s);
        }
    }
    return v;
}

Ptr<FabricSwitch>
FabricTopologyHelper::GetSwitch(uint32_t id) const
{
    return m_switches.at(id);
}

Ptr<FabricChannel>
FabricTopologyHelper::GetLink(uint32_t id) const
{
    return m_links.at(id);
}

Ptr<RdmaNic>
FabricTopologyHelper::NicToward(uint32_t src, uint32_t dst, uint16_t sport) const
{
    uint32_t node = m_topo.hosts.at(src);
    const auto& nh = m_routing->NextHops(node, dst);
    NS_ABORT_MSG_IF(nh.empty(), "no route from host " << src << " to host " << dst);
    uint16_t port = nh[sport % nh.size()];
    return DynamicCast<RdmaNic>(m_ports[node][port]);
}

Time
FabricTopologyHelper::BaseRtt(uint32_t src, uint32_t dst) const
{
    using fabricsim::units::CheckedAdd;
    using fabricsim::units::TransmitPs;
    int64_t ps = 0;
    uint64_t dataWire = RoceSize::DataFrame(m_mtu, false) + RoceSize::kWireOverhead;
    uint64_t ackWire = RoceSize::kAckFrame + RoceSize::kWireOverhead;
    for (uint32_t l : m_routing->Path(src, dst))
    {
        const auto& s = m_topo.links[l].spec;
        uint64_t bps = uint64_t(s.rateBps);
        ps = CheckedAdd(ps, CheckedAdd(int64_t(s.delayPs), s.delayPs, "base RTT"), "base RTT");
        ps = CheckedAdd(ps, TransmitPs(dataWire, bps) + TransmitPs(ackWire, bps), "base RTT");
    }
    return PicoSeconds(ps);
}

uint64_t
FabricTopologyHelper::BottleneckBps(uint32_t src, uint32_t dst) const
{
    uint64_t b = UINT64_MAX;
    for (uint32_t l : m_routing->Path(src, dst))
    {
        b = std::min<uint64_t>(b, uint64_t(m_topo.links[l].spec.rateBps));
    }
    return b;
}

uint64_t
FabricTopologyHelper::WireBytes(uint64_t payload) const
{
    using fabricsim::units::CheckedAdd;
    using fabricsim::units::CheckedMul;
    uint64_t packets = std::max<uint64_t>(1, payload / m_mtu + (payload % m_mtu != 0));
    uint64_t perPacket = RoceSize::DataFrame(0, false) + RoceSize::kWireOverhead;
    return CheckedAdd(
        payload,
        CheckedAdd(CheckedMul(packets, perPacket, "wire bytes"), RoceSize::kReth, "wire bytes"),
        "wire bytes");
}

Time
FabricTopologyHelper::IdealFct(uint32_t src, uint32_t dst, uint64_t payload) const
{
    // The whole flow serialised at the bottleneck, after one frame's round trip; checked, since
    // 64-bit bytes x 8e12 wraps from 2.3 MB on.
    const int64_t tx = fabricsim::units::TransmitPs(WireBytes(payload), BottleneckBps(src, dst));
    return PicoSeconds(
        fabricsim::units::CheckedAdd(BaseRtt(src, dst).GetPicoSeconds(), tx, "ideal FCT"));
}

Ptr<RdmaQueuePair>
FabricTopologyHelper::Connect(uint32_t src,
                              uint32_t dst,
                              uint8_t priority,
                              uint16_t sport,
                              const ObjectFactory& cc,
                              Callback<void, uint64_t> onDelivered)
{
    Ptr<RdmaNic> from = NicToward(src, dst, sport);
    Ptr<RdmaNic> to = NicToward(dst, src, sport);
    return from->Connect(
        to, priority, sport, cc.Create<CongestionControl>(), BaseRtt(src, dst), onDelivered);
}

void
FabricTopologyHelper::SetLinkState(uint32_t linkId, bool up)
{
    m_linkDown.at(linkId) = !up;
    m_links[linkId]->SetUp(up);
    InstallRoutes();
    // Shortest paths adapt to the failure; overrides do not, and may now point into a loop.
    if (!m_routeOverrides.empty())
    {
        if (auto loop
            = fabricsim::FindForwardingLoop(m_topo, *m_routing, m_routeOverrides, m_linkDown))
        {
            m_loops.emplace_back(Simulator::Now(), *loop);
        }
    }
}

void
FabricTopologyHelper::SetRouteOverride(uint32_t node,
                                       uint32_t dstHost,
                                       const std::vector<uint16_t>& ports)
{
    NS_ABORT_MSG_IF(node >= m_topo.nodes.size()
                        || m_topo.nodes[node].kind != fabricsim::NodeKind::Switch,
                    "route override: node " << node << " is not a switch");
    NS_ABORT_MSG_IF(dstHost >= m_topo.NumHosts(), "route override: no host " << dstHost);
    m_routeOverrides[{node, dstHost}] = ports;
    if (m_installed)
    {
        PublishRoutes();
    }
}

void
FabricTopologyHelper::ScheduleLinkState(uint32_t linkId, Time at, bool up)
{
    NS_ABORT_MSG_IF(linkId >= m_links.size(), "link id " << linkId << " out of range");
    Simulator::Schedule(at, &FabricTopologyHelper::SetLinkState, this, linkId, up);
}

void
FabricTopologyHelper::EnablePcapHost(uint32_t host, const std::string& dir)
{
    const auto& ports = m_ports.at(m_topo.hosts.at(host));
    for (size_t p = 0; p < ports.size(); ++p)
    {
        ports[p]->EnablePcap(dir + "/host" + std::to_string(host) + "-" + std::to_string(p)
                             + ".pcap");
    }
}

void
FabricTopologyHelper::EnablePcapSwitch(uint32_t id, const std::string& dir)
{
    const auto& ports = m_ports.at(id);
    for (size_t p = 0; p < ports.size(); ++p)
    {
        ports[p]->EnablePcap(dir + "/" + m_topo.nodes[id].name + "-" + std::to_string(p) + ".pcap");
    }
}

} // namespace ns3
