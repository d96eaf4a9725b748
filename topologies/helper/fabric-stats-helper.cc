#include "fabric-stats-helper.h"

#include "ns3/simulator.h"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <tuple>

namespace ns3
{

FabricStatsHelper::FabricStatsHelper(FabricTopologyHelper& fabric)
    : m_fabric(fabric)
{
}

void
FabricStatsHelper::PfcTx(uint32_t node, uint32_t port, uint8_t prio, uint16_t quanta)
{
    m_pfcRows.push_back({Simulator::Now().GetTimeStep(), node, port, prio, quanta != 0});
}

nlohmann::json
FabricStatsHelper::PfcLogPart() const
{
    nlohmann::json rows = nlohmann::json::array();
    for (const PfcRow& r : m_pfcRows)
    {
        rows.push_back({r.ps, r.node, r.port, r.prio, r.pause});
    }
    return rows;
}

void
FabricStatsHelper::AddPfcLogPart(const nlohmann::json& rows)
{
    for (const auto& r : rows)
    {
        m_pfcRows.push_back({r.at(0).get<int64_t>(),
                             r.at(1).get<uint32_t>(),
                             r.at(2).get<uint32_t>(),
                             r.at(3).get<uint8_t>(),
                             r.at(4).get<bool>()});
    }
}

void
FabricStatsHelper::WritePfcLog()
{
    if (!m_pfcLog)
    {
        return;
    }
    std::stable_sort(m_pfcRows.begin(),
                     m_pfcRows.end(),
                     [](const PfcRow& a, const PfcRow& b) {
                         return std::tie(a.ps, a.node, a.port, a.prio)
                                < std::tie(b.ps, b.node, b.port, b.prio);
                     });
    const auto& nodes = m_fabric.GetTopology().nodes;
    for (const PfcRow& r : m_pfcRows)
    {
        *m_pfcLog << Time(r.ps).GetNanoSeconds() << ',' << nodes[r.node].name << ',' << r.port
                  << ',' << int(r.prio) << ',' << (r.pause ? "pause" : "resume") << '\n';
    }
    m_pfcRows.clear();
}

void
FabricStatsHelper::EnablePfcLog(std::ostream* os)
{
    m_pfcLog = os;
    *os << "time_ns,node,port,priority,event\n";
    const auto& topo = m_fabric.GetTopology();
    for (uint32_t n = 0; n < topo.nodes.size(); ++n)
    {
        Ptr<Node> node = m_fabric.GetNode(n);
        for (uint32_t d = 0; d < node->GetNDevices(); ++d)
        {
            auto dev = DynamicCast<FabricNetDevice>(node->GetDevice(d));
            if (!dev)
            {
                continue;
            }
            dev->TraceConnectWithoutContext(
                "PfcTx", MakeCallback(&FabricStatsHelper::PfcTx, this).Bind(n, d));
        }
    }
}

void
FabricStatsHelper::EnableMonitor(
    std::ostream* queues, std::ostream* links, Time interval, Time start, Time end)
{
    MonitorStreams m;
    m.queues = queues;
    m.links = links;
    EnableMonitor(m, interval, start, end);
}

void
FabricStatsHelper::EnableMonitor(const MonitorStreams& streams, Time interval, Time start, Time end)
{
    m_mon = streams;
    m_interval = interval;
    m_end = end;
    if (m_mon.queues)
    {
        *m_mon.queues << "time_ns,node,port,priority,bytes\n";
    }
    if (m_mon.links)
    {
        *m_mon.links << "time_ns,node,port,utilisation\n";
    }
    if (m_mon.qpRates)
    {
        *m_mon.qpRates << "time_ns,host,qpn,dst,sport,priority,rate_gbps\n";
    }
    if (m_mon.cnps)
    {
        *m_mon.cnps << "time_ns,host,qpn,dst,sport,cnps,cnps_total\n";
    }
    if (m_mon.pauseState)
    {
        *m_mon.pauseState << "time_ns,node,port,priority,paused_ns\n";
    }
    bool any = m_mon.queues || m_mon.links || m_mon.qpRates || m_mon.cnps || m_mon.pauseState;
    if (!any || !interval.IsStrictlyPositive() || start > end)
    {
        return;
    }
    // This rank's devices and NICs (all of them on one process), with their place in the order
    // of the whole fabric's: the keys rows from several ranks are merged by.
    const uint32_t self = Simulator::GetSystemId();
    const auto& topo = m_fabric.GetTopology();
    uint32_t order = 0;
    for (uint32_t n = 0; n < topo.nodes.size(); ++n)
    {
        Ptr<Node> node = m_fabric.GetNode(n);
        for (uint32_t d = 0; d < node->GetNDevices(); ++d)
        {
            auto dev = DynamicCast<FabricNetDevice>(node->GetDevice(d));
            if (dev && node->GetSystemId() == self)
            {
                m_devices.push_back(dev);
                m_portIds.emplace_back(n, d);
                m_deviceOrder.push_back(order);
            }
            order += dev ? 1 : 0;
        }
    }
    m_lastTxBytes.assign(m_devices.size(), 0);
    const auto nics = m_fabric.GetAllNics();
    for (uint32_t i = 0; i < nics.size(); ++i)
    {
        if (nics[i]->GetNode()->GetSystemId() == self)
        {
            m_nics.push_back(nics[i]);
            m_nicOrder.push_back(i);
        }
    }
    m_lastCnps.assign(m_nics.size(), {});
    Simulator::Schedule(start, &FabricStatsHelper::Sample, this);
}

void
FabricStatsHelper::Sample()
{
    SampleOnce();
    if (Simulator::Now() + m_interval <= m_end)
    {
        Simulator::Schedule(m_interval, &FabricStatsHelper::Sample, this);
    }
}

void
FabricStatsHelper::FinishMonitor()
{
    Time now = Simulator::Now();
    if (!m_lastSample.IsNegative() && now > m_lastSample && now <= m_end)
    {
        SampleOnce();
    }
}

void
FabricStatsHelper::SampleOnce()
{
    Time now = Simulator::Now();
    int64_t t = now.GetNanoSeconds();
    // Rates cover the time since the previous sample; the first sample only sets the baseline.
    double elapsedS = m_lastSample.IsNegative() ? 0.0 : (now - m_lastSample).GetSeconds();
    const auto& topo = m_fabric.GetTopology();
    for (size_t i = 0; i < m_devices.size(); ++i)
    {
        const auto& dev = m_devices[i];
        const std::string& name = topo.nodes[m_portIds[i].first].name;
        uint32_t portNo = m_portIds[i].second;
        if (m_mon.queues)
        {
            if (auto sp = DynamicCast<SwitchPort>(dev))
            {
                for (uint8_t c = 0; c < 8; ++c)
                {
                    if (sp->QueueBytes(c))
                    {
                        Row(m_mon.queues, 0, m_deviceOrder[i], 0, c)
                            << t << ',' << name << ',' << portNo << ',' << int(c) << ','
                            << sp->QueueBytes(c) << '\n';
                    }
                }
            }
        }
        if (m_mon.links)
        {
            const auto& st = dev->GetStats();
            // Wire bytes: frames plus preamble and inter-frame gap.
            uint64_t wire = st.txBytes + st.txFrames * RoceSize::kWireOverhead;
            uint64_t delta = wire - m_lastTxBytes[i];
            m_lastTxBytes[i] = wire;
            if (delta && elapsedS > 0)
            {
                double util = double(delta) * 8.0 / (double(dev->GetRateBps()) * elapsedS);
                Row(m_mon.links, 1, m_deviceOrder[i], 0, 0)
                    << t << ',' << name << ',' << portNo << ',' << util << '\n';
            }
        }
        if (m_mon.pauseState)
        {
            for (uint8_t c = 0; c < 8; ++c)
            {
                if (dev->PeerPausing(c))
                {
                    Row(m_mon.pauseState, 4, m_deviceOrder[i], 0, c)
                        << t << ',' << name << ',' << portNo << ',' << int(c) << ','
                        << (now - dev->PausedSince(c)).GetNanoSeconds() << '\n';
                }
            }
        }
    }
    if (m_mon.qpRates || m_mon.cnps)
    {
        SampleQps(t);
    }
    m_lastSample = now;
}

std::ostream&
FabricStatsHelper::Row(std::ostream* stream, int series, uint32_t a, uint32_t b, uint32_t c)
{
    if (!m_keyed)
    {
        return *stream;
    }
    // Fixed width, so that the lines of every rank sort into the order one process writes.
    char key[64];
    std::snprintf(key,
                  sizeof(key),
                  "%020lld %010u %010u %03u|",
                  static_cast<long long>(Simulator::Now().GetTimeStep()),
                  a,
                  b,
                  c);
    m_keyedRows[series] << key;
    return m_keyedRows[series];
}

void
FabricStatsHelper::SetAcrossRanks()
{
    m_keyed = true;
}

nlohmann::json
FabricStatsHelper::MonitorPart() const
{
    nlohmann::json part = nlohmann::json::array();
    for (const auto& rows : m_keyedRows)
    {
        part.push_back(rows.str());
    }
    return part;
}

void
FabricStatsHelper::WriteMonitor(const std::vector<nlohmann::json>& parts)
{
    std::ostream* streams[]
        = {m_mon.queues, m_mon.links, m_mon.qpRates, m_mon.cnps, m_mon.pauseState};
    for (size_t series = 0; series < m_keyedRows.size(); ++series)
    {
        if (!streams[series])
        {
            continue;
        }
        std::vector<std::string> lines;
        for (const auto& part : parts)
        {
            std::istringstream in(part.at(series).get<std::string>());
            std::string line;
            while (std::getline(in, line))
            {
                lines.push_back(line);
            }
        }
        std::sort(lines.begin(), lines.end());
        for (const std::string& line : lines)
        {
            *streams[series] << line.substr(line.find('|') + 1) << '\n';
        }
    }
}

void
FabricStatsHelper::SampleQps(int64_t t)
{
    for (size_t n = 0; n < m_nics.size(); ++n)
    {
        const auto& qps = m_nics[n]->GetQueuePairs();
        auto& last = m_lastCnps[n];
        last.resize(qps.size(), 0);
        for (size_t i = 0; i < qps.size(); ++i)
        {
            const RdmaQueuePair& qp = *qps[i];
            if (m_mon.qpRates && !qp.IsIdle())
            {
                Row(m_mon.qpRates, 2, m_nicOrder[n], uint32_t(i), 0)
                    << t << ',' << qp.GetSrcHost() << ',' << qp.GetQpn() << ',' << qp.GetDstHost()
                    << ',' << qp.GetSport() << ',' << int(qp.GetPriority()) << ','
                    << double(qp.GetCc()->GetRateBps()) / 1e9 << '\n';
            }
            uint64_t total = qp.GetCnpsReceived();
            if (m_mon.cnps && total != last[i])
            {
                Row(m_mon.cnps, 3, m_nicOrder[n], uint32_t(i), 0)
                    << t << ',' << qp.GetSrcHost() << ',' << qp.GetQpn() << ',' << qp.GetDstHost()
                    << ',' << qp.GetSport() << ',' << total - last[i] << ',' << total << '\n';
            }
            last[i] = total;
        }
    }
}

FabricTotals
FabricStatsHelper::Collect() const
{
    return CollectPart().Finish();
}

FabricTotalsPart
FabricStatsHelper::CollectPart() const
{
    FabricTotalsPart part;
    FabricTotals& t = part.sums;
    for (size_t r = 0; r < size_t(DropReason::Count); ++r)
    {
        t.dropsByReason[DropReasonName(DropReason(r))] = 0;
    }
    const uint32_t self = Simulator::GetSystemId();
    const auto& topo = m_fabric.GetTopology();
    for (uint32_t n = 0; n < topo.nodes.size(); ++n)
    {
        Ptr<Node> node = m_fabric.GetNode(n);
        if (node->GetSystemId() != self)
        {
            continue; // another rank's node: idle here, its rank counts it
        }
        for (uint32_t d = 0; d < node->GetNDevices(); ++d)
        {
            auto dev = DynamicCast<FabricNetDevice>(node->GetDevice(d));
            if (!dev)
            {
                continue;
            }
            AddDevice(*dev, t);
        }
    }
    for (uint32_t l = 0; l < topo.links.size(); ++l)
    {
        auto ch = m_fabric.GetLink(l);
        t.inFlightFrames += ch->InFlightFrames() - ch->InFlightPfcFrames();
        t.inFlightBytes += ch->InFlightBytes() - ch->InFlightPfcFrames() * RoceSize::kPfcFrame;
        part.remoteSentFrames += ch->RemoteFramesSent() - ch->RemotePfcFramesSent();
        part.remoteReceivedFrames += ch->RemoteFramesReceived() - ch->RemotePfcFramesReceived();
        part.remoteSentBytes
            += ch->RemoteBytesSent() - ch->RemotePfcFramesSent() * RoceSize::kPfcFrame;
        part.remoteReceivedBytes
            += ch->RemoteBytesReceived() - ch->RemotePfcFramesReceived() * RoceSize::kPfcFrame;
    }
    for (auto& sw : m_fabric.GetAllSwitches())
    {
        if (m_fabric.GetNode(sw->GetTopologyId())->GetSystemId() == self)
        {
            part.queues.Merge(sw->GetQueueHistogram());
        }
    }
    return part;
}

void
FabricStatsHelper::AddDevice(const FabricNetDevice& dev, FabricTotals& t)
{
    const auto& st = dev.GetStats();
    for (size_t r = 0; r < size_t(DropReason::Count); ++r)
    {
        t.dropsByReason[DropReasonName(DropReason(r))] += st.drops[r];
        t.dropsTotal += st.drops[r];
    }
    uint64_t pfcDropBytes = st.dropPfcFrames * RoceSize::kPfcFrame;
    uint64_t dropBytes = 0;
    for (auto b : st.dropBytes)
    {
        dropBytes += b;
    }
    uint64_t dropFrames = 0;
    for (auto f : st.drops)
    {
        dropFrames += f;
    }
    t.droppedFrames += dropFrames - st.dropPfcFrames;
    t.droppedBytes += dropBytes - pfcDropBytes;
    for (int c = 0; c < 8; ++c)
    {
        t.pfcPauseSent += st.pfcSent[c];
        t.pfcResumeSent += st.pfcResumeSent[c];
        t.pfcPauseReceived += st.pfcReceived[c];
        t.pfcResumeReceived += st.pfcResumeReceived[c];
    }
    if (auto nic = dynamic_cast<const RdmaNic*>(&dev))
    {
        t.sentFrames += st.txFrames - st.txPfcFrames;
        t.sentBytes += st.txBytes - st.txPfcFrames * RoceSize::kPfcFrame;
        t.deliveredFrames += st.rxFrames - st.rxPfcFrames;
        t.deliveredBytes += st.rxBytes - st.rxPfcFrames * RoceSize::kPfcFrame;
        t.cnpsSent += nic->GetCnpsSent();
        t.cnpsReceived += nic->GetCnpsReceived();
        t.nacksSent += nic->GetNacksSent();
        t.outOfOrderBuffered += nic->GetOutOfOrderBuffered();
        for (auto& qp : nic->GetQueuePairs())
        {
            t.retransmittedPackets += qp->GetRetransmits();
            t.retransmittedBytes += qp->GetRetransmitBytes();
            t.timeouts += qp->GetTimeouts();
            t.nacksReceived += qp->GetNacksReceived();
            t.qpFailures += qp->HasFailed();
        }
    }
    if (auto sp = dynamic_cast<const SwitchPort*>(&dev))
    {
        t.maxQueueBytes = std::max(t.maxQueueBytes, sp->MaxQueueBytes());
        t.ecnMarked += sp->EcnMarked();
        t.inFlightFrames += sp->EgressFrames();
        t.inFlightBytes += sp->TotalQueueBytes();
        t.sentBytes += sp->IntBytesAdded(); // INT hop records enter the fabric at switches
    }
}

nlohmann::json
FabricStatsHelper::WatchdogJson() const
{
    return MergeWatchdog({WatchdogPart()});
}

nlohmann::json
FabricStatsHelper::WatchdogPart() const
{
    const auto& topo = m_fabric.GetTopology();
    const uint32_t self = Simulator::GetSystemId();
    nlohmann::json queues = nlohmann::json::array();
    bool enabled = false;
    std::string action;
    const auto& switches = m_fabric.GetAllSwitches();
    for (uint32_t s = 0; s < switches.size(); ++s)
    {
        Ptr<PfcWatchdog> wd = switches[s]->GetPfcWatchdog();
        enabled = enabled || wd->IsEnabled();
        action = wd->GetAction() == PfcWatchdog::REPORT         ? "report"
                 : wd->GetAction() == PfcWatchdog::IGNORE_PAUSE ? "ignore-pause"
                                                                : "drop";
        if (m_fabric.GetNode(switches[s]->GetTopologyId())->GetSystemId() != self)
        {
            continue; // its rank reports it
        }
        for (const auto& r : wd->GetRecords())
        {
            queues.push_back(
                {s,
                 {{"switch", topo.nodes[switches[s]->GetTopologyId()].name},
                  {"port", r.port},
                  {"priority", r.priority},
                  {"triggers", r.triggers},
                  {"restorations", r.restorations},
                  {"first_trigger_ns", r.firstTrigger.GetNanoSeconds()},
                  {"paused_ns_at_first_trigger", r.pausedAtFirstTrigger.GetNanoSeconds()},
                  {"flushed_frames", r.flushedFrames},
                  {"active_at_end", r.active}}});
        }
    }
    return {{"enabled", enabled}, {"action", action}, {"queues", queues}};
}

nlohmann::json
FabricStatsHelper::MergeWatchdog(const std::vector<nlohmann::json>& parts)
{
    std::vector<std::pair<uint32_t, nlohmann::json>> rows;
    bool enabled = false;
    std::string action;
    for (const auto& part : parts)
    {
        enabled = enabled || part.at("enabled").get<bool>();
        action = part.at("action").get<std::string>();
        for (const auto& q : part.at("queues"))
        {
            rows.emplace_back(q.at(0).get<uint32_t>(), q.at(1));
        }
    }
    // In switch order, each switch's records as it keeps them (one rank holds a switch).
    std::stable_sort(
        rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    nlohmann::json queues = nlohmann::json::array();
    uint64_t triggers = 0;
    uint64_t flushed = 0;
    for (const auto& [sw, q] : rows)
    {
        triggers += q.at("triggers").get<uint64_t>();
        flushed += q.at("flushed_frames").get<uint64_t>();
        queues.push_back(q);
    }
    nlohmann::json j = {{"enabled", enabled},
                        {"triggers", triggers},
                        {"flushed_frames", flushed},
                        {"queues", queues}};
    if (enabled)
    {
        j["action"] = action;
    }
    return j;
}

std::string
FabricStatsHelper::PeerName(const DeadlockHop& h) const
{
    const auto& topo = m_fabric.GetTopology();
    if (h.peerIsSwitch)
    {
        return topo.nodes[h.peerNode].name + " port " + std::to_string(h.peerPort);
    }
    return h.peerNode < topo.NumHosts() ? topo.nodes[topo.hosts[h.peerNode]].name : "?";
}

nlohmann::json
FabricStatsHelper::DeadlockJson(const DeadlockReport& r) const
{
    const auto& topo = m_fabric.GetTopology();
    nlohmann::json hops = nlohmann::json::array();
    nlohmann::json switches = nlohmann::json::array();
    for (const auto& h : r.hops)
    {
        const std::string& name = topo.nodes[h.node].name;
        hops.push_back({{"switch", name},
                        {"port", h.port},
                        {"priority", h.priority},
                        {"paused_by", PeerName(h)},
                        {"paused_ns", h.pausedFor.GetNanoSeconds()},
                        {"queued_frames", h.queuedFrames},
                        {"queued_bytes", h.queuedBytes}});
        if (std::find(switches.begin(), switches.end(), name) == switches.end())
        {
            switches.push_back(name);
        }
    }
    return {{"kind", r.cycle ? "cycle" : "stall"},
            {"time_ns", r.time.GetNanoSeconds()},
            {"stalled_ns", r.stalledFor.GetNanoSeconds()},
            {"switches", switches},
            {r.cycle ? "cycle" : "paused_queues", hops}};
}

std::string
FabricStatsHelper::DeadlockText(const DeadlockReport& r) const
{
    const auto& topo = m_fabric.GetTopology();
    std::ostringstream s;
    s << "t=" << r.time.GetNanoSeconds() << " ns: ";
    if (r.cycle)
    {
        s << "PFC deadlock, cyclic buffer dependency of " << r.hops.size() << " paused queues: ";
    }
    else
    {
        s << "fabric stalled (no frame sent for " << r.stalledFor.GetNanoSeconds() << " ns), "
          << r.hops.size() << " paused queues hold frames: ";
    }
    for (size_t i = 0; i < r.hops.size(); ++i)
    {
        const auto& h = r.hops[i];
        s << (i ? (r.cycle ? " -> " : "; ") : "") << topo.nodes[h.node].name << " port " << h.port
          << " prio " << int(h.priority) << " (paused by " << PeerName(h) << " for "
          << h.pausedFor.GetNanoSeconds() << " ns, " << h.queuedFrames << " frames)";
    }
    return s.str();
}

} // namespace ns3
