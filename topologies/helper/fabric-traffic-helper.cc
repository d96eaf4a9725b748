#include "fabric-traffic-helper.h"

#include "ns3/node.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <ostream>
#include <sstream>
#include <stdexcept>

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
        const FlowCounters c = CountersOf(f);
        if (f.done)
        {
            const int64_t fctNs = (f.finish - f.start).GetNanoSeconds();
            jf["fct_ns"] = fctNs;
            jf["slowdown"] = double(fctNs) / double(f.ideal.GetNanoSeconds());
        }
        else
        {
            jf["fct_ns"] = nullptr;
            jf["pending_bytes"] = c.pendingBytes;
            if (c.failed)
            {
                jf["failed"] = c.failure;
            }
        }
        jf["retransmitted_packets"] = c.retransmits;
        jf["retransmitted_bytes"] = c.retransmitBytes;
        jf["timeouts"] = c.timeouts;
        jf["nacks_received"] = c.nacksReceived;
        jf["nacks_sent"] = c.nacksSent;
        jf["out_of_order_buffered"] = c.outOfOrderBuffered;
        flows.push_back(jf);
    }
    return flows;
}

FlowCounters
FabricTrafficHelper::CountersOf(const FlowRecord& f) const
{
    if (!m_gathered.empty())
    {
        return m_gathered[f.id];
    }
    FlowCounters c;
    c.pendingBytes = f.qp->PendingBytes();
    c.failed = f.qp->HasFailed();
    if (c.failed)
    {
        c.failure = f.qp->GetFailure();
    }
    c.retransmits = f.qp->GetRetransmits();
    c.retransmitBytes = f.qp->GetRetransmitBytes();
    c.timeouts = f.qp->GetTimeouts();
    c.nacksReceived = f.qp->GetNacksReceived();
    c.nacksSent = f.qp->GetReceiver().nacksSent;
    c.outOfOrderBuffered = f.qp->GetReceiver().outOfOrderBuffered;
    return c;
}

nlohmann::json
FabricTrafficHelper::LocalOutcomes() const
{
    const uint32_t self = Simulator::GetSystemId();
    nlohmann::json senders = nlohmann::json::array();
    nlohmann::json receivers = nlohmann::json::array();
    for (const auto& f : m_flows)
    {
        const FlowCounters c = CountersOf(f);
        if (m_fabric.GetHostNode(f.src)->GetSystemId() == self)
        {
            senders.push_back({f.id,
                               f.done,
                               f.finish.GetTimeStep(),
                               c.pendingBytes,
                               c.failed,
                               c.failure,
                               c.retransmits,
                               c.retransmitBytes,
                               c.timeouts,
                               c.nacksReceived});
        }
        if (m_fabric.GetHostNode(f.dst)->GetSystemId() == self)
        {
            receivers.push_back({f.id, c.nacksSent, c.outOfOrderBuffered});
        }
    }
    return {{"senders", senders}, {"receivers", receivers}};
}

void
FabricTrafficHelper::ApplyOutcomes(const std::vector<nlohmann::json>& parts)
{
    std::vector<FlowCounters> all(m_flows.size());
    std::vector<uint8_t> sides(m_flows.size(), 0); // bit 0: sender seen, bit 1: receiver seen
    auto take = [&](const nlohmann::json& row, uint8_t bit) -> uint32_t
    {
        const uint32_t id = row.at(0).get<uint32_t>();
        if (id >= m_flows.size() || (sides[id] & bit))
        {
            throw std::runtime_error("flow outcomes: flow " + std::to_string(id)
                                     + (id >= m_flows.size() ? " unknown" : " given twice"));
        }
        sides[id] |= bit;
        return id;
    };
    uint32_t completed = 0;
    uint32_t failed = 0;
    for (const auto& part : parts)
    {
        for (const auto& row : part.at("senders"))
        {
            const uint32_t id = take(row, 1);
            FlowRecord& f = m_flows[id];
            FlowCounters& c = all[id];
            f.done = row.at(1).get<bool>();
            f.finish = TimeStep(row.at(2).get<int64_t>());
            c.pendingBytes = row.at(3).get<uint64_t>();
            c.failed = row.at(4).get<bool>();
            c.failure = row.at(5).get<std::string>();
            c.retransmits = row.at(6).get<uint64_t>();
            c.retransmitBytes = row.at(7).get<uint64_t>();
            c.timeouts = row.at(8).get<uint64_t>();
            c.nacksReceived = row.at(9).get<uint64_t>();
            completed += f.done;
            failed += c.failed;
        }
        for (const auto& row : part.at("receivers"))
        {
            const uint32_t id = take(row, 2);
            all[id].nacksSent = row.at(1).get<uint64_t>();
            all[id].outOfOrderBuffered = row.at(2).get<uint64_t>();
        }
    }
    for (size_t id = 0; id < sides.size(); ++id)
    {
        if (sides[id] != 3)
        {
            throw std::runtime_error("flow outcomes: flow " + std::to_string(id) + " has no "
                                     + ((sides[id] & 1) ? "receiver" : "sender") + " side");
        }
    }
    m_gathered = std::move(all);
    m_completed = completed;
    m_failed = failed;
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
