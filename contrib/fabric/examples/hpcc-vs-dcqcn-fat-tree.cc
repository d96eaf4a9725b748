/*
 * The same traffic on a k=4 fat-tree (16 hosts, 20 switches, 100 Gb/s), run once under DCQCN
 * and once under HPCC: an incast from other pods into host 0 plus background flows from pod 3
 * into hosts 1..3, which cross the same cores and pod-0 aggregation switches (host 1 also shares
 * host 0's edge switch). Prints FCT percentiles, the deepest switch queue and the PFC pauses
 * of each run side by side.
 *
 *   build/bin/hpcc-vs-dcqcn-fat-tree --senders=8 --flowKb=500 --bgKb=2000
 *   build/bin/hpcc-vs-dcqcn-fat-tree --ns3::Hpcc::Eta=0.9 --ns3::Dcqcn::RateAI=40Mbps
 *
 * Exits 1 if a run leaves a flow unfinished or loses a frame unaccounted.
 */
#include "ns3/command-line.h"
#include "ns3/fabric-stats-helper.h"
#include "ns3/fabric-topology-helper.h"
#include "ns3/fabric-traffic-helper.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

struct RunResult
{
    std::string cc;
    uint32_t flows = 0;
    uint32_t completed = 0;
    std::vector<double> incastFctUs; ///< sorted
    double bgMaxFctUs = 0;
    uint64_t maxQueueBytes = 0;
    uint64_t pfcPauses = 0;
    bool conserved = false;
};

/// Nearest-rank percentile of sorted values (q in [0, 1]).
double
Percentile(const std::vector<double>& sorted, double q)
{
    if (sorted.empty())
    {
        return -1;
    }
    size_t rank = size_t(std::ceil(q * double(sorted.size())));
    return sorted[std::min(sorted.size(), std::max<size_t>(rank, 1)) - 1];
}

/// One simulation from scratch: build the fabric, add the flows, run, collect.
RunResult
RunOnce(const std::string& ccName, uint32_t senders, uint32_t flowKb, uint32_t bgKb, double simMs)
{
    fabricsim::Topology topo
        = fabricsim::BuildTopology({{"type", "fat-tree"}, {"k", 4}}, "example");
    FabricTopologyHelper fabric(topo);
    fabric.Install();
    fabric.AssignStreams(1); // same ECN/ECMP random streams in both runs

    // HPCC needs INT on data frames; the QPs ask for it themselves (CongestionControl::NeedsInt).
    ObjectFactory cc = CongestionControlFactory::Get(ccName);
    FabricTrafficHelper traffic(fabric);
    // Pod p holds hosts 4p..4p+3. Incast: hosts 4.. (pods 1 and 2) into host 0.
    for (uint32_t s = 0; s < senders; ++s)
    {
        traffic.AddFlow(4 + s, 0, uint64_t(flowKb) * 1000, Time(0), 3, cc);
    }
    // Background: pod 3 into hosts 1..3 (edge switch e holds hosts 2e and 2e+1).
    const uint32_t firstBg = uint32_t(traffic.GetFlows().size());
    for (uint32_t b = 0; b < 3; ++b)
    {
        traffic.AddFlow(15 - b, 1 + b, uint64_t(bgKb) * 1000, Time(0), 3, cc);
    }
    FabricStatsHelper stats(fabric);
    traffic.SetAllDoneCallback(Callback<void>([]() { Simulator::Stop(); }));
    Simulator::Stop(MicroSeconds(int64_t(simMs * 1000)));
    Simulator::Run();

    RunResult r;
    r.cc = ccName;
    r.flows = uint32_t(traffic.GetFlows().size());
    r.completed = traffic.CompletedFlows();
    for (const auto& f : traffic.GetFlows())
    {
        double fctUs = f.done ? (f.finish - f.start).GetNanoSeconds() / 1000.0 : -1;
        if (f.id < firstBg)
        {
            r.incastFctUs.push_back(fctUs);
        }
        else
        {
            r.bgMaxFctUs = std::max(r.bgMaxFctUs, fctUs);
        }
    }
    std::sort(r.incastFctUs.begin(), r.incastFctUs.end());
    FabricTotals totals = stats.Collect();
    r.maxQueueBytes = totals.maxQueueBytes;
    r.pfcPauses = totals.pfcPauseSent;
    r.conserved = totals.Conserved();
    // Nodes, devices and events of this run go; the next run starts from NodeList index 0.
    Simulator::Destroy();
    return r;
}

} // namespace

int
main(int argc, char** argv)
{
    Time::SetResolution(Time::PS);
    uint32_t senders = 8;
    uint32_t flowKb = 500;
    uint32_t bgKb = 2000;
    double simMs = 50;
    CommandLine cmd(__FILE__);
    cmd.AddValue("senders", "incast senders into host 0 (1..8)", senders);
    cmd.AddValue("flowKb", "kilobytes per incast flow", flowKb);
    cmd.AddValue("bgKb", "kilobytes per background flow", bgKb);
    cmd.AddValue("simMs", "simulated time limit per run in ms", simMs);
    cmd.Parse(argc, argv);
    if (senders < 1 || senders > 8 || flowKb < 1 || bgKb < 1 || simMs <= 0)
    {
        std::cerr << "error: need 1 <= --senders <= 8, --flowKb and --bgKb >= 1, --simMs > 0\n";
        return 2;
    }

    std::vector<RunResult> runs;
    for (const char* cc : {"dcqcn", "hpcc"})
    {
        runs.push_back(RunOnce(cc, senders, flowKb, bgKb, simMs));
    }

    std::printf("%-6s %5s %12s %12s %12s %12s %12s %10s\n",
                "cc",
                "done",
                "incast_p50",
                "incast_p95",
                "incast_max",
                "bg_max_us",
                "max_queue_KB",
                "pfc_pauses");
    bool ok = true;
    for (const auto& r : runs)
    {
        std::printf("%-6s %2u/%-2u %12.1f %12.1f %12.1f %12.1f %12.1f %10llu\n",
                    r.cc.c_str(),
                    r.completed,
                    r.flows,
                    Percentile(r.incastFctUs, 0.5),
                    Percentile(r.incastFctUs, 0.95),
                    Percentile(r.incastFctUs, 1.0),
                    r.bgMaxFctUs,
                    r.maxQueueBytes / 1000.0,
                    (unsigned long long)r.pfcPauses);
        if (r.completed != r.flows || !r.conserved)
        {
            std::cerr << "error: " << r.cc << ": " << r.completed << "/" << r.flows
                      << " flows completed, conservation " << (r.conserved ? "ok" : "FAILED")
                      << "\n";
            ok = false;
        }
    }
    std::cout << "FCTs in us; max_queue_KB is the deepest egress queue of any switch port\n";
    return ok ? 0 : 1;
}
