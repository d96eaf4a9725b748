#include "fabric-traffic-helper.h"

#include "ns3/node.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <ostream>
#include <sstream>

namespace ns3
{

FabricTrafficHelper::FabricTrafficHelper(FabricTopologyHelper& fabric)
    : m_fabric(fabric)
{
}

uint32_t
FabricTrafficHelper::AddFlow(uint32_t src,
                             uint32_t dst,
                             uint64_t bytes,
                             Time start,
                             uint8_t priority,
                             const ObjectFactory& cc)
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
    const uint32_t id = f.id;
    f.qp->TraceConnectWithoutContext(
        "Failed", Callback<void, uint32_t>([this, id](uint32_t) { Failed(id); }));
    m_flows.push_back(f);
    // Every rank of a distributed run connects every flow (both ends then agree on queue-pair
    // numbers); only the rank that simulates the sender starts it.
    if (m_fabric.GetHostNode(src)->GetSystemId() == Simulator::GetSystemId())
    {
        ++m_localFlows;
        Simulator::Schedule(start, &FabricTrafficHelper::Start, this, f.id);
    }
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
    f.qp->PostWrite(f.sizeBytes,
                    Callback<void, uint64_t>([this, id](uint64_t msg) { Done(id, msg); }));
}

void
FabricTrafficHelper::Done(uint32_t id, uint64_t)
{
    FlowRecord& f = m_flows[id];
    f.done = true;
    f.finish = Simulator::Now();
    ++m_completed;
    Finished();
}

void
FabricTrafficHelper::Failed(uint32_t)
{
    ++m_failed;
    Finished();
}

void
FabricTrafficHelper::Finished()
{
    if (m_completed + m_failed == m_localFlows && !m_allDone.IsNull())
    {
        m_allDone();
    }
}

void
FabricTrafficHelper::WriteFctCsv(std::ostream& os) const
{
    std::ostringstream out; // own stream: the precision set here must not leak into `os`
    out << "flow_id,src,dst,sport,dport,size_bytes,start_ns,fct_ns,ideal_fct_ns,slowdown\n";
    for (const auto& f : m_flows)
    {
        if (!f.done)
        {
            continue;
        }
        const int64_t fctNs = (f.finish - f.start).GetNanoSeconds();
        const double sd = double(fctNs) / double(f.ideal.GetNanoSeconds());
        out << f.id << ',' << f.src << ',' << f.dst << ',' << f.sport << ",4791," << f.sizeBytes
            << ',' << f.start.GetNanoSeconds() << ',' << fctNs << ',' << f.ideal.GetNanoSeconds()
            << ',' << std::setprecision(6) << sd << '\n';
    }
    os << out.str();
}

nlohmann::json
FabricTrafficHelper::FlowsJson() const
{
    nlohmann::json flows = nlohmann::json::array();
    for (const auto& f : m_flows)
    {
        nlohmann::json jf = {{"id", f.id},
                             {"src", f.src},
                             {"dst", f.dst},
                             {"sport", f.sport},
                             {"size_bytes", f.sizeBytes},
                             {"start_ns", f.start.GetNanoSeconds()},
                             {"ideal_fct_ns", f.ideal.GetNanoSeconds()}};
        if (f.done)
        {
            const int64_t fctNs = (f.finish - f.start).GetNanoSeconds();
            jf["fct_ns"] = fctNs;
            jf["slowdown"] = double(fctNs) / double(f.ideal.GetNanoSeconds());
        }
        else
        {
            jf["fct_ns"] = nullptr;
            jf["pending_bytes"] = f.qp->PendingBytes();
            if (f.qp->HasFailed())
            {
                jf["failed"] = f.qp->GetFailure();
            }
        }
        jf["retransmitted_packets"] = f.qp->GetRetransmits();
        jf["retransmitted_bytes"] = f.qp->GetRetransmitBytes();
        jf["timeouts"] = f.qp->GetTimeouts();
        jf["nacks_received"] = f.qp->GetNacksReceived();
        jf["nacks_sent"] = f.qp->GetReceiver().nacksSent;
        jf["out_of_order_buffered"] = f.qp->GetReceiver().outOfOrderBuffered;
        flows.push_back(jf);
    }
    return flows;
}

std::vector<double>
FabricTrafficHelper::Slowdowns() const
{
    std::vector<double> v;
    for (const auto& f : m_flows)
    {
        if (f.done)
        {
            v.push_back(double((f.finish - f.start).GetNanoSeconds())
                        / double(f.ideal.GetNanoSeconds()));
        }
    }
    return v;
}

double
FabricTrafficHelper::Percentile(std::vector<double> v, double q)
{
    if (v.empty())
    {
        return 0;
    }
    std::sort(v.begin(), v.end());
    size_t idx = size_t(std::ceil(q * double(v.size())));
    idx = std::min(v.size() - 1, idx == 0 ? 0 : idx - 1);
    return v[idx];
}

} // namespace ns3
