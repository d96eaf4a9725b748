#include "fabric-stats-helper.h"

#include "ns3/simulator.h"

namespace ns3
{

nlohmann::json
FabricTotals::ToJson() const
{
    nlohmann::json j;
    j["drops"] = {{"total", dropsTotal}, {"by_reason", dropsByReason}};
    j["pfc"] = {{"pause_frames_sent", pfcPauseSent},
                {"resume_frames_sent", pfcResumeSent},
                {"pause_frames_received", pfcPauseReceived},
                {"resume_frames_received", pfcResumeReceived}};
    j["queue"] = {{"max_bytes", maxQueueBytes}, {"p95_bytes", p95QueueBytes}, {"p99_bytes", p99QueueBytes}};
    j["nic"] = {{"ecn_marked", ecnMarked},
                      {"cnps_sent", cnpsSent},
                      {"cnps_received", cnpsReceived},
                      {"nacks_sent", nacksSent},
                      {"retransmitted_packets", retransmittedPackets},
                      {"timeouts", timeouts}};
    j["conservation"] = {{"sent_frames", sentFrames},
                         {"delivered_frames", deliveredFrames},
                         {"dropped_frames", droppedFrames},
                         {"in_flight_frames", inFlightFrames},
                         {"sent_bytes", sentBytes},
                         {"delivered_bytes", deliveredBytes},
                         {"dropped_bytes", droppedBytes},
                         {"in_flight_bytes", inFlightBytes},
                         {"ok", Conserved()}};
    return j;
}

FabricStatsHelper::FabricStatsHelper(FabricTopologyHelper& fabric)
    : m_fabric(fabric)
{
}

void
FabricStatsHelper::PfcTx(uint32_t node, uint32_t port, uint8_t prio, uint16_t quanta)
{
    *m_pfcLog << Simulator::Now().GetNanoSeconds() << ',' << m_fabric.GetTopology().nodes[node].name << ',' << port << ','
              << int(prio) << ',' << (quanta ? "pause" : "resume") << '\n';
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
                "PfcTx",
                MakeCallback(&FabricStatsHelper::PfcTx, this).Bind(n, d));
        }
    }
}

void
FabricStatsHelper::EnableMonitor(std::ostream* queues, std::ostream* links, Time interval, Time start, Time end)
{
    m_qlog = queues;
    m_llog = links;
    m_interval = interval;
    m_end = end;
    *queues << "time_ns,node,port,priority,bytes\n";
    *links << "time_ns,node,port,utilisation\n";
    const auto& topo = m_fabric.GetTopology();
    for (uint32_t n = 0; n < topo.nodes.size(); ++n)
    {
        Ptr<Node> node = m_fabric.GetNode(n);
        for (uint32_t d = 0; d < node->GetNDevices(); ++d)
        {
            auto dev = DynamicCast<FabricNetDevice>(node->GetDevice(d));
            if (dev)
            {
                m_devices.push_back(dev);
                m_portIds.emplace_back(n, d);
            }
        }
    }
    m_lastTxBytes.assign(m_devices.size(), 0);
    Simulator::Schedule(start, &FabricStatsHelper::Sample, this);
}

void
FabricStatsHelper::Sample()
{
    int64_t t = Simulator::Now().GetNanoSeconds();
    const auto& topo = m_fabric.GetTopology();
    for (size_t i = 0; i < m_devices.size(); ++i)
    {
        const auto& dev = m_devices[i];
        const std::string& name = topo.nodes[m_portIds[i].first].name;
        if (auto sp = DynamicCast<SwitchPort>(dev))
        {
            for (uint8_t c = 0; c < 8; ++c)
            {
                if (sp->QueueBytes(c))
                {
                    *m_qlog << t << ',' << name << ',' << m_portIds[i].second << ',' << int(c) << ',' << sp->QueueBytes(c)
                            << '\n';
                }
            }
        }
        const auto& st = dev->GetStats();
        // Wire bytes: frames plus preamble and inter-frame gap.
        uint64_t wire = st.txBytes + st.txFrames * RoceSize::kWireOverhead;
        uint64_t delta = wire - m_lastTxBytes[i];
        m_lastTxBytes[i] = wire;
        if (delta && Simulator::Now() > Time(0))
        {
            double util = double(delta) * 8.0 / (double(dev->GetRateBps()) * m_interval.GetSeconds());
            *m_llog << t << ',' << name << ',' << m_portIds[i].second << ',' << util << '\n';
        }
    }
    if (Simulator::Now() + m_interval <= m_end)
    {
        Simulator::Schedule(m_interval, &FabricStatsHelper::Sample, this);
    }
}

FabricTotals
FabricStatsHelper::Collect() const
{
    FabricTotals t;
    for (size_t r = 0; r < size_t(DropReason::Count); ++r)
    {
        t.dropsByReason[DropReasonName(DropReason(r))] = 0;
    }
    QueueHistogram hist;
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
            const auto& st = dev->GetStats();
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
            if (auto nic = DynamicCast<RdmaNic>(dev))
            {
                t.sentFrames += st.txFrames - st.txPfcFrames;
                t.sentBytes += st.txBytes - st.txPfcFrames * RoceSize::kPfcFrame;
                t.deliveredFrames += st.rxFrames - st.rxPfcFrames;
                t.deliveredBytes += st.rxBytes - st.rxPfcFrames * RoceSize::kPfcFrame;
                t.cnpsSent += nic->GetCnpsSent();
                t.cnpsReceived += nic->GetCnpsReceived();
                t.nacksSent += nic->GetNacksSent();
                for (auto& qp : nic->GetQueuePairs())
                {
                    t.retransmittedPackets += qp->GetRetransmits();
                    t.timeouts += qp->GetTimeouts();
                }
            }
            if (auto sp = DynamicCast<SwitchPort>(dev))
            {
                t.maxQueueBytes = std::max(t.maxQueueBytes, sp->MaxQueueBytes());
                t.ecnMarked += sp->EcnMarked();
                t.inFlightFrames += sp->EgressFrames();
                t.inFlightBytes += sp->TotalQueueBytes();
                t.sentBytes += sp->IntBytesAdded(); // INT hop records enter the fabric at switches
            }
        }
    }
    for (uint32_t l = 0; l < topo.links.size(); ++l)
    {
        auto ch = m_fabric.GetLink(l);
        t.inFlightFrames += ch->InFlightFrames() - ch->InFlightPfcFrames();
        t.inFlightBytes += ch->InFlightBytes() - ch->InFlightPfcFrames() * RoceSize::kPfcFrame;
    }
    for (auto& sw : m_fabric.GetAllSwitches())
    {
        hist.Merge(sw->GetQueueHistogram());
    }
    t.p99QueueBytes = hist.Quantile(0.99);
    t.p95QueueBytes = hist.Quantile(0.95);
    return t;
}

} // namespace ns3
