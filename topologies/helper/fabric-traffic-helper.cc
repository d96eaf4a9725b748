#include "fabric-traffic-helper.h"

#include "ns3/simulator.h"

namespace ns3
{

FabricTrafficHelper::FabricTrafficHelper(FabricTopologyHelper& fabric)
    : m_fabric(fabric)
{
}

uint32_t
FabricTrafficHelper::AddFlow(uint32_t src, uint32_t dst, uint64_t bytes, Time start, uint8_t priority, const ObjectFactory& cc)
{
    FlowRecord f;
    f.id = uint32_t(m_flows.size());
    f.src = src;
    f.dst = dst;
    // Source ports per (src, dst) pair, like a NIC's per-connection UDP source port.
    uint16_t& next = m_nextPort[{src, dst}];
    f.sport = uint16_t(49152 + (next++ % 16384));
    f.priority = priority;
    f.sizeBytes = bytes;
    f.start = start;
    f.ideal = m_fabric.IdealFct(src, dst, bytes);
    f.qp = m_fabric.Connect(src, dst, priority, f.sport, cc);
    m_flows.push_back(f);
    Simulator::Schedule(start, &FabricTrafficHelper::Start, this, f.id);
    return f.id;
}

void
FabricTrafficHelper::SetAllDoneCallback(Callback<void> cb)
{
    m_allDone = cb;
}

void
FabricTrafficHelper::Start(uint32_t id)
{
    FlowRecord& f = m_flows[id];
    f.qp->PostWrite(f.sizeBytes, Callback<void, uint64_t>([this, id](uint64_t msg) { Done(id, msg); }));
}

void
FabricTrafficHelper::Done(uint32_t id, uint64_t)
{
    FlowRecord& f = m_flows[id];
    f.done = true;
    f.finish = Simulator::Now();
    if (++m_completed == m_flows.size() && !m_allDone.IsNull())
    {
        m_allDone();
    }
}

} // namespace ns3
