/*
 * N-to-1 incast under DCQCN on one switch, watching the receiver's switch port fill and drain
 * through the SwitchPort "QueueBytes" trace source, connected by its Config path. Writes the
 * queue as CSV (time_us,bytes) and prints the peak queue and each flow's completion time.
 *
 *   build/bin/dcqcn-incast-queue-trace --senders=8 --flowKb=1000 --out=queue.csv
 *   build/bin/dcqcn-incast-queue-trace --ns3::Dcqcn::RateAI=40Mbps --ns3::RdmaNic::CnpInterval=4us
 *
 * Exits 1 if a flow did not complete or the trace disagrees with the port's own counters.
 */
#include "ns3/command-line.h"
#include "ns3/config.h"
#include "ns3/fabric-stats-helper.h"
#include "ns3/fabric-topology-helper.h"
#include "ns3/fabric-traffic-helper.h"
#include "ns3/simulator.h"

#include <fstream>
#include <iostream>
#include <sstream>

using namespace ns3;

namespace
{

/// Trace sink state: the CSV, the peak seen and the PFC pause frames sent anywhere.
struct QueueLog
{
    std::ofstream csv;
    uint64_t peakBytes = 0;
    uint64_t pauses = 0;
};

/// Sink of "QueueBytes" (Config::Connect passes the matched path first).
void
OnQueueBytes(
    QueueLog* log, std::string context, uint8_t priority, uint64_t classBytes, uint64_t totalBytes)
{
    log->csv << Simulator::Now().GetNanoSeconds() / 1000.0 << ',' << totalBytes << '\n';
    log->peakBytes = std::max(log->peakBytes, totalBytes);
}

/// Sink of FabricNetDevice "PfcTx" on every port: quanta 0 is a resume (XON), others pause.
void
OnPfcTx(QueueLog* log, std::string context, uint8_t priority, uint16_t quanta)
{
    log->pauses += (quanta > 0);
}

} // namespace

int
main(int argc, char** argv)
{
    // Before any Time exists: a 64 B frame at 100G lasts 5.12 ns, below ns resolution.
    Time::SetResolution(Time::PS);
    uint32_t senders = 8;
    uint32_t flowKb = 1000;
    double simMs = 20;
    std::string out = "dcqcn-incast-queue.csv";
    CommandLine cmd(__FILE__);
    cmd.AddValue("senders", "incast senders (hosts 0..N-1 send to host N)", senders);
    cmd.AddValue("flowKb", "kilobytes per sender", flowKb);
    cmd.AddValue("simMs", "simulated time limit in ms", simMs);
    cmd.AddValue("out", "CSV of the receiver port's queue (time_us,bytes)", out);
    cmd.Parse(argc, argv); // also applies --ns3::Type::Attribute=value defaults
    if (senders < 1 || flowKb < 1 || simMs <= 0)
    {
        std::cerr << "error: --senders and --flowKb must be >= 1 and --simMs > 0\n";
        return 2;
    }

    // One switch "sw0" with senders+1 hosts at 100 Gb/s. Hosts are created first, so host h is
    // NodeList index h and the switch is index senders+1; switch port k faces host k.
    fabricsim::Topology topo
        = fabricsim::BuildTopology({{"type", "single-switch"}, {"hosts", senders + 1}}, "example");
    FabricTopologyHelper fabric(topo);
    fabric.SetEcn(EcnConfig()); // RED marking from 100 KB per 25 Gb/s of port rate
    fabric.Install();
    fabric.AssignStreams(1);

    const uint32_t receiver = senders;
    Ptr<Node> swNode = fabric.GetNode(topo.FindNode("sw0"));
    std::ostringstream path;
    path << "/NodeList/" << swNode->GetId() << "/DeviceList/" << receiver
         << "/$ns3::SwitchPort/QueueBytes";
    QueueLog log;
    log.csv.open(out);
    if (!log.csv)
    {
        std::cerr << "error: cannot write " << out << "\n";
        return 2;
    }
    log.csv << "time_us,bytes\n";
    Config::Connect(path.str(), MakeBoundCallback(&OnQueueBytes, &log));
    // Wildcards reach every NIC and switch port at once (both are FabricNetDevices).
    Config::Connect("/NodeList/*/DeviceList/*/$ns3::FabricNetDevice/PfcTx",
                    MakeBoundCallback(&OnPfcTx, &log));

    FabricTrafficHelper traffic(fabric);
    ObjectFactory dcqcn = CongestionControlFactory::Get("dcqcn");
    for (uint32_t s = 0; s < senders; ++s)
    {
        traffic.AddFlow(s, receiver, uint64_t(flowKb) * 1000, Time(0), 3, dcqcn);
    }
    FabricStatsHelper stats(fabric);
    // End as soon as every flow is done; simMs only bounds a run that goes wrong.
    traffic.SetAllDoneCallback(Callback<void>([]() { Simulator::Stop(); }));
    Simulator::Stop(MicroSeconds(int64_t(simMs * 1000)));
    Simulator::Run();

    FabricTotals totals = stats.Collect();
    Ptr<SwitchPort> port = DynamicCast<SwitchPort>(swNode->GetDevice(receiver));
    std::cout << "traced " << path.str() << "\n"
              << "peak queue " << log.peakBytes << " bytes (port counter " << port->MaxQueueBytes()
              << "), PFC pauses " << totals.pfcPauseSent << ", ECN marks " << totals.ecnMarked
              << ", CNPs " << totals.cnpsSent << "\n";
    for (const auto& f : traffic.GetFlows())
    {
        std::cout << "flow " << f.id << " " << f.src << "->" << f.dst << " fct "
                  << (f.done ? (f.finish - f.start).GetMicroSeconds() : -1) << " us (ideal "
                  << f.ideal.GetMicroSeconds() << " us)\n";
    }
    std::cout << "queue series: " << out << "\n";
    // The traces must agree with the counters the devices keep themselves.
    bool ok = traffic.CompletedFlows() == senders && totals.Conserved()
              && log.peakBytes == port->MaxQueueBytes() && log.peakBytes > 0
              && log.pauses == totals.pfcPauseSent;
    if (!ok)
    {
        std::cerr << "error: " << traffic.CompletedFlows() << "/" << senders
                  << " flows completed, or a trace disagrees with the device counters\n";
    }
    Simulator::Destroy();
    return ok ? 0 : 1;
}
