/*
 * The scenario program built step by step in docs/scenario-scripts.md: a small incast on one
 * switch, the receiver's switch-port queue traced by Config path into a CSV, CNPs counted on
 * every NIC by a wildcard path, and one sender's congestion-control rate traced on the object.
 *
 *   scripts/ns3-run incast-walkthrough
 *   scripts/ns3-run incast-walkthrough --senders=8 --cc=hpcc --out=hpcc.csv
 *   scripts/ns3-run incast-walkthrough --ns3::Dcqcn::RateAI=40Mbps --ns3::RdmaNic::CnpInterval=4us
 *
 * Exit code: 0 when every flow completed, 1 when one did not, 2 for bad arguments.
 */
#include "input-error.h"

#include "ns3/command-line.h"
#include "ns3/config.h"
#include "ns3/fabric-stats-helper.h"
#include "ns3/fabric-topology-helper.h"
#include "ns3/fabric-traffic-helper.h"
#include "ns3/simulator.h"

#include <fstream>
#include <iostream>

using namespace ns3;

namespace
{

std::ofstream g_csv; // one simulation per program: plain file-scope sinks are enough
uint64_t g_peakBytes = 0;
uint64_t g_cnps = 0;
uint64_t g_minRateBps = UINT64_MAX;

/// SwitchPort "QueueBytes": priority, bytes in that class, bytes in the whole port.
void
QueueBytes(std::string context, uint8_t priority, uint64_t classBytes, uint64_t totalBytes)
{
    g_csv << Simulator::Now().GetNanoSeconds() / 1000.0 << ',' << totalBytes << '\n';
    g_peakBytes = std::max(g_peakBytes, totalBytes);
}

/// RdmaNic "CnpReceived": a CNP reached a sender (qpn, destination of the QP).
void
CnpReceived(std::string context, uint32_t qpn, uint32_t dstHost)
{
    g_cnps++;
}

/// CongestionControl "Rate" is a TracedValue: the sink gets the old and new value.
void
RateChanged(uint64_t oldBps, uint64_t newBps)
{
    g_minRateBps = std::min(g_minRateBps, newBps);
}

} // namespace

int
main(int argc, char** argv)
{
    Time::SetResolution(Time::PS); // before any Time exists
    uint32_t senders = 4;
    uint32_t flowKb = 500;
    std::string cc = "dcqcn";
    double simMs = 20;
    std::string out = "incast-queue.csv";
    CommandLine cmd(__FILE__);
    cmd.AddValue("senders", "incast senders (hosts 0..N-1 send to host N)", senders);
    cmd.AddValue("flowKb", "kilobytes per sender", flowKb);
    cmd.AddValue("cc", "congestion control: dcqcn, hpcc, timely, dctcp, swift, none, ...", cc);
    cmd.AddValue("simMs", "simulated time limit in ms", simMs);
    cmd.AddValue("out", "CSV of the receiver's switch-port queue (time_us,bytes)", out);
    cmd.Parse(argc, argv); // --ns3::Type::Attribute=value arguments set defaults here
    if (senders < 1 || flowKb < 1 || simMs <= 0)
    {
        std::cerr << "error: --senders and --flowKb must be >= 1 and --simMs > 0\n";
        return 2;
    }
    ObjectFactory ccFactory;
    try
    {
        ccFactory = CongestionControlFactory::Get(cc, "<command line>", "--cc");
    }
    catch (const InputError& e)
    {
        std::cerr << "error: " << e.what() << "\n";
        return 2;
    }

    // 1. Topology: hosts 0..senders and switch "sw0", 100 Gb/s links. Hosts come first, so
    //    host h is node h, and the k-th link of the switch (port k) goes to host k.
    fabricsim::Topology topo = fabricsim::BuildTopology(
        {{"type", "single-switch"}, {"hosts", senders + 1}}, "incast-walkthrough");
    FabricTopologyHelper fabric(topo);
    fabric.Install();
    fabric.AssignStreams(1);
    const uint32_t receiver = senders;

    // 2. Traces by Config path. The switch is a Node like any other; its ports are its devices.
    g_csv.open(out);
    if (!g_csv)
    {
        std::cerr << "error: cannot write " << out << "\n";
        return 2;
    }
    g_csv << "time_us,bytes\n";
    uint32_t swId = fabric.GetNode(topo.FindNode("sw0"))->GetId();
    std::string queuePath = "/NodeList/" + std::to_string(swId) + "/DeviceList/"
                            + std::to_string(receiver) + "/$ns3::SwitchPort/QueueBytes";
    Config::Connect(queuePath, MakeCallback(&QueueBytes));
    Config::Connect("/NodeList/*/DeviceList/*/$ns3::RdmaNic/CnpReceived",
                    MakeCallback(&CnpReceived));

    // 3. Traffic: every sender writes flowKb to the receiver at t=0 on priority 3 (lossless).
    FabricTrafficHelper traffic(fabric);
    for (uint32_t s = 0; s < senders; ++s)
    {
        traffic.AddFlow(s, receiver, uint64_t(flowKb) * 1000, Time(0), 3, ccFactory);
    }
    // Queue pairs are not in the Config namespace: trace a QP's rate on the object itself.
    traffic.GetFlows()[0].qp->GetCc()->TraceConnectWithoutContext("Rate",
                                                                  MakeCallback(&RateChanged));

    // 4. Run until every flow is done (simMs only bounds a run that goes wrong).
    FabricStatsHelper stats(fabric);
    traffic.SetAllDoneCallback(Callback<void>([]() { Simulator::Stop(); }));
    Simulator::Stop(MicroSeconds(int64_t(simMs * 1000)));
    Simulator::Run();

    // 5. Report.
    FabricTotals totals = stats.Collect();
    std::cout << "cc " << cc << ", " << senders << " x " << flowKb << " KB -> host " << receiver
              << "\n"
              << "peak queue " << g_peakBytes << " bytes, PFC pauses " << totals.pfcPauseSent
              << ", CNPs " << g_cnps << ", lowest rate of flow 0 "
              << (g_minRateBps == UINT64_MAX ? 0.0 : g_minRateBps / 1e9) << " Gb/s\n";
    for (const auto& f : traffic.GetFlows())
    {
        std::cout << "flow " << f.id << " " << f.src << "->" << f.dst << " fct "
                  << (f.done ? (f.finish - f.start).GetMicroSeconds() : -1) << " us (ideal "
                  << f.ideal.GetMicroSeconds() << " us)\n";
    }
    std::cout << "queue series: " << out << "\n";
    bool ok = traffic.CompletedFlows() == senders && totals.Conserved();
    if (!ok)
    {
        std::cerr << "error: " << traffic.CompletedFlows() << "/" << senders
                  << " flows completed\n";
    }
    Simulator::Destroy();
    return ok ? 0 : 1;
}
