/*
 * The packet transport's side of the collective memo (memo-fabric.h): the part of the fabric
 * a group can reach (FabricTopologyHelper::GetMemoScope), probed for rest and recorded or
 * written field by field (link-memo.h), switches first, then the other devices.
 */
#include "packet-transport.h"

#include "ns3/simulator.h"

#include <algorithm>
#include <set>
#include <stdexcept>

namespace fabricsim
{

using namespace ns3;

const MemoScope&
PacketTransport::ScopeOf(const std::vector<uint32_t>& hosts) const
{
    std::vector<uint32_t> key = hosts;
    std::sort(key.begin(), key.end());
    key.erase(std::unique(key.begin(), key.end()), key.end());
    auto& entry = m_scopes[key];
    if (entry.second.links.empty() || entry.first != m_fabric.GetRouteEpoch())
    {
        entry = {m_fabric.GetRouteEpoch(), m_fabric.GetMemoScope(key)};
    }
    return entry.second;
}

FabricProbe
PacketTransport::Probe(const std::vector<uint32_t>& hosts) const
{
    const MemoScope& scope = ScopeOf(hosts);
    MemoProbe probe(Simulator::Now());
    probe.Reserve(m_probeSize);
    probe.Mix(m_fabric.GetRouteEpoch());
    for (const Ptr<FabricSwitch>& sw : scope.switches)
    {
        sw->ProbeRest(probe);
    }
    for (const Ptr<FabricChannel>& link : scope.links)
    {
        link->ProbeRest(probe);
    }
    for (const Ptr<FabricNetDevice>& dev : scope.devices)
    {
        dev->ProbeRest(probe);
    }
    FabricProbe out;
    out.notAtRest = probe.Blocker();
    if (out.notAtRest.empty())
    {
        out.state = probe.TakeState();
        out.signalState = probe.TakeSignalState();
        m_probeSize = std::max(m_probeSize, out.state.size());
    }
    return out;
}

bool
PacketTransport::ScopeClosed(const std::vector<uint32_t>& hosts) const
{
    const MemoScope& scope = ScopeOf(hosts);
    std::set<const FabricNetDevice*> own;
    for (uint32_t h : hosts)
    {
        Ptr<Node> node = m_fabric.GetHostNode(h);
        for (uint32_t d = 0; d < node->GetNDevices(); ++d)
        {
            own.insert(dynamic_cast<const FabricNetDevice*>(PeekPointer(node->GetDevice(d))));
        }
    }
    for (const Ptr<FabricNetDevice>& dev : scope.devices)
    {
        if (!own.count(PeekPointer(dev)))
        {
            return false;
        }
    }
    return true;
}

bool
PacketTransport::ScopesOverlap(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b) const
{
    const MemoScope& sa = ScopeOf(a);
    const MemoScope& sb = ScopeOf(b);
    std::set<const Object*> seen;
    for (const Ptr<FabricSwitch>& sw : sa.switches)
    {
        seen.insert(PeekPointer(sw));
    }
    for (const Ptr<FabricChannel>& l : sa.links)
    {
        seen.insert(PeekPointer(l));
    }
    for (const Ptr<FabricSwitch>& sw : sb.switches)
    {
        if (seen.count(PeekPointer(sw)))
        {
            return true;
        }
    }
    for (const Ptr<FabricChannel>& l : sb.links)
    {
        if (seen.count(PeekPointer(l)))
        {
            return true;
        }
    }
    for (uint32_t x : a)
    {
        if (std::find(b.begin(), b.end(), x) != b.end())
        {
            return true;
        }
    }
    return false;
}

void
PacketTransport::VisitScope(const MemoScope& scope, MemoRecord& record) const
{
    for (const Ptr<FabricSwitch>& sw : scope.switches)
    {
        sw->VisitMemo(record);
    }
    for (const Ptr<FabricNetDevice>& dev : scope.devices)
    {
        dev->VisitMemo(record);
    }
}

uint64_t
PacketTransport::BeginSpan(const std::vector<uint32_t>& hosts)
{
    const uint64_t id = m_nextSpan++;
    auto it = m_spans.emplace(id, Span{hosts, MemoRecord(Simulator::Now())}).first;
    VisitScope(ScopeOf(hosts), it->second.record);
    return id;
}

FabricSpan
PacketTransport::EndSpan(uint64_t id)
{
    auto it = m_spans.find(id);
    if (it == m_spans.end())
    {
        throw std::logic_error("PacketTransport::EndSpan: no span " + std::to_string(id));
    }
    MemoRecord& record = it->second.record;
    record.Finish();
    VisitScope(ScopeOf(it->second.hosts), record);
    FabricSpan span;
    span.delta = record.Delta();
    span.signalled = record.Signalled();
    span.unusable = record.Unusable();
    m_spans.erase(it);
    return span;
}

void
PacketTransport::ApplySpan(const std::vector<uint32_t>& hosts,
                           int64_t startPs,
                           const FabricSpan& span)
{
    MemoRecord record(PicoSeconds(startPs), span.delta);
    VisitScope(ScopeOf(hosts), record);
    if (!record.Consumed())
    {
        throw std::logic_error(
            "PacketTransport::ApplySpan: the span was recorded on other objects");
    }
}

} // namespace fabricsim
