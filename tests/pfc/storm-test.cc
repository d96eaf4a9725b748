// A receiver NIC that keeps pausing its switch (a PFC pause storm, the case PFC watchdogs exist
// for): nothing can move, there is no cycle, so the detector reports a stall naming the stuck
// port and the NIC behind it; a drop watchdog on the switch breaks the storm and the flow
// recovers once the NIC stops.
#include "ns3/config.h"
#include "ns3/fabric-stats-helper.h"
#include "ns3/fabric-traffic-helper.h"
#include "ns3/rng-seed-manager.h"
#include "ns3/simulator.h"
#include "ns3/string.h"

#include <gtest/gtest.h>

using namespace ns3;

namespace
{

struct StormResult
{
    std::vector<DeadlockReport> reports;
    std::vector<PfcWatchdog::QueueRecord> watchdog;
    bool flowDone = false;
    FabricTotals totals;
};

/// host0 -> host1 through sw0; host1's NIC sends XOFF on class 3 every 100 us until `stormEnd`.
void
Storm(Ptr<RdmaNic> nic, Time stormEnd)
{
    if (Simulator::Now() < stormEnd)
    {
        nic->SendPfc(3, 0xffff);
        Simulator::Schedule(MicroSeconds(100), &Storm, nic, stormEnd);
    }
}

StormResult
RunStorm(const std::string& watchdogAction, Time stormEnd, Time stop)
{
    Config::Reset();
    RngSeedManager::SetSeed(1);
    if (!watchdogAction.empty())
    {
        Config::SetDefault("ns3::PfcWatchdog::Interval", TimeValue(MicroSeconds(100)));
        Config::SetDefault("ns3::PfcWatchdog::DetectionTime", TimeValue(MicroSeconds(500)));
        Config::SetDefault("ns3::PfcWatchdog::RestorationTime", TimeValue(MicroSeconds(300)));
        Config::SetDefault("ns3::PfcWatchdog::Action", StringValue(watchdogAction));
    }
    Config::SetDefault("ns3::RdmaNic::RetransmitTimeout", TimeValue(MicroSeconds(200)));
    fabricsim::Topology topo = fabricsim::BuildTopology(
        nlohmann::json{{"type", "single-switch"}, {"hosts", 2}}, "storm");
    FabricTopologyHelper fabric(topo);
    fabric.Install();
    FabricTrafficHelper traffic(fabric);
    traffic.AddFlow(0, 1, 4000000, Time(0), 3, CongestionControlFactory::Get("none"));
    auto detector = CreateObject<DeadlockDetector>();
    detector->Install(fabric.GetAllSwitches(), {fabric.GetNic(0), fabric.GetNic(1)});
    Simulator::Schedule(MicroSeconds(50), &Storm, fabric.GetNic(1), stormEnd);
    traffic.SetAllDoneCallback(Callback<void>([]() { Simulator::Stop(); }));
    Simulator::Stop(stop);
    Simulator::Run();
    StormResult r;
    r.reports = detector->GetReports();
    r.watchdog = fabric.GetSwitch(topo.FindNode("sw0"))->GetPfcWatchdog()->GetRecords();
    r.flowDone = traffic.CompletedFlows() == 1;
    r.totals = FabricStatsHelper(fabric).Collect();
    Simulator::Destroy();
    return r;
}

} // namespace

TEST(PauseStorm, NicStormIsReportedAsAStall)
{
    StormResult r = RunStorm("", MilliSeconds(100), MilliSeconds(5));
    ASSERT_EQ(r.reports.size(), 1u);
    const DeadlockReport& d = r.reports[0];
    RecordProperty("reported_ns", std::to_string(d.time.GetNanoSeconds()));
    RecordProperty("stalled_ns", std::to_string(d.stalledFor.GetNanoSeconds()));
    EXPECT_FALSE(d.cycle);
    EXPECT_GE(d.stalledFor, MilliSeconds(1));
    EXPECT_LT(d.time, MilliSeconds(2));
    ASSERT_EQ(d.hops.size(), 1u);
    // sw0's port 1 faces host1, whose NIC pauses it.
    EXPECT_EQ(d.hops[0].port, 1u);
    EXPECT_FALSE(d.hops[0].peerIsSwitch);
    EXPECT_EQ(d.hops[0].peerNode, 1u);
    EXPECT_EQ(d.hops[0].priority, 3);
    EXPECT_GT(d.hops[0].queuedFrames, 0u);
    EXPECT_GE(d.hops[0].pausedFor, d.stalledFor);
    EXPECT_FALSE(r.flowDone);
    EXPECT_TRUE(r.watchdog.empty());
    EXPECT_TRUE(r.totals.Conserved());
}

TEST(PauseStorm, DropWatchdogBreaksItAndTheFlowRecovers)
{
    StormResult r = RunStorm("drop", MilliSeconds(2), MilliSeconds(50));
    ASSERT_EQ(r.watchdog.size(), 1u);
    RecordProperty("trigger_ns", std::to_string(r.watchdog[0].firstTrigger.GetNanoSeconds()));
    RecordProperty("flushed_frames", std::to_string(r.watchdog[0].flushedFrames));
    RecordProperty("watchdog_drops", std::to_string(r.totals.dropsByReason["pfc_watchdog"]));
    EXPECT_EQ(r.watchdog[0].port, 1u);
    EXPECT_EQ(r.watchdog[0].triggers, 1u);
    EXPECT_EQ(r.watchdog[0].restorations, 1u);
    EXPECT_GE(r.watchdog[0].pausedAtFirstTrigger, MicroSeconds(500));
    EXPECT_GT(r.watchdog[0].flushedFrames, 0u);
    EXPECT_GE(r.totals.dropsByReason["pfc_watchdog"], r.watchdog[0].flushedFrames);
    EXPECT_EQ(r.totals.dropsTotal, r.totals.dropsByReason["pfc_watchdog"]);
    EXPECT_TRUE(r.flowDone);
    EXPECT_TRUE(r.totals.Conserved());
}

TEST(PauseStorm, IgnorePauseWatchdogKeepsTheFlowGoing)
{
    StormResult r = RunStorm("ignore-pause", MilliSeconds(100), MilliSeconds(50));
    ASSERT_EQ(r.watchdog.size(), 1u);
    EXPECT_EQ(r.watchdog[0].triggers, 1u);
    EXPECT_TRUE(r.watchdog[0].active);
    EXPECT_TRUE(r.flowDone); // the storm never ends, but the switch no longer obeys it
    EXPECT_EQ(r.totals.dropsTotal, 0u);
    EXPECT_TRUE(r.totals.Conserved());
}
