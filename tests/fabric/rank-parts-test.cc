// What each rank of a distributed run sends to the one that writes the outputs: its share of
// the fabric totals and its side of every flow. On one process the shares are the whole, so a
// share that loses a field, or a merge that adds one wrongly, shows here.
#include "ns3/fabric-stats-helper.h"
#include "ns3/fabric-topology-helper.h"
#include "ns3/fabric-traffic-helper.h"
#include "ns3/simulator.h"

#include <gtest/gtest.h>

#include <stdexcept>

using namespace ns3;

namespace
{

/// A DCQCN incast with PFC on a 2-leaf fabric: drops none, pauses, marks, CNPs.
struct IncastRun
{
    fabricsim::Topology topo = fabricsim::BuildTopology(
        {{"type", "leaf-spine"}, {"leaves", 2}, {"spines", 2}, {"hosts_per_leaf", 4}}, "test");
    FabricTopologyHelper fabric{topo};
    std::unique_ptr<FabricTrafficHelper> traffic;
    std::unique_ptr<FabricStatsHelper> stats;

    IncastRun()
    {
        fabric.Install();
        traffic = std::make_unique<FabricTrafficHelper>(fabric);
        stats = std::make_unique<FabricStatsHelper>(fabric);
        ObjectFactory cc = CongestionControlFactory::Get("dcqcn");
        for (uint32_t s = 1; s < 8; ++s)
        {
            traffic->AddFlow(s, 0, 300000, NanoSeconds(100 * s), 3, cc);
        }
        traffic->AddFlow(0, 5, 5000000, Time(0), 3, cc); // still sending at the stop
        Simulator::Stop(MicroSeconds(300));
        Simulator::Run();
    }

    ~IncastRun()
    {
        Simulator::Destroy();
    }
};

} // namespace

TEST(RankParts, TheTotalsShareThroughJsonIsTheWhole)
{
    IncastRun run;
    const FabricTotals whole = run.stats->Collect();
    ASSERT_GT(whole.pfcPauseSent + whole.ecnMarked, 0u); // a run with something to lose
    ASSERT_GT(whole.inFlightFrames, 0u);
    const FabricTotalsPart part = FabricTotalsPart::FromJson(run.stats->CollectPart().ToJson());
    EXPECT_EQ(part.Finish().ToJson(), whole.ToJson());
    // Merging an empty share (a rank that held no node) changes nothing.
    FabricTotalsPart merged = part;
    FabricTotalsPart empty;
    merged.Merge(empty);
    EXPECT_EQ(merged.Finish().ToJson(), whole.ToJson());
    // Twice the share: every count doubles, the largest queue and the quantiles do not.
    merged.Merge(part);
    const FabricTotals twice = merged.Finish();
    EXPECT_EQ(twice.sentFrames, 2 * whole.sentFrames);
    EXPECT_EQ(twice.pfcPauseSent, 2 * whole.pfcPauseSent);
    EXPECT_EQ(twice.maxQueueBytes, whole.maxQueueBytes);
    EXPECT_EQ(twice.p99QueueBytes, whole.p99QueueBytes);
}

TEST(RankParts, FramesOneRankSentAndNoneReceivedAreInFlight)
{
    FabricTotalsPart a;
    a.remoteSentFrames = 5;
    a.remoteSentBytes = 5000;
    a.sums.sentFrames = 5;
    a.sums.sentBytes = 5000;
    FabricTotalsPart b;
    b.remoteReceivedFrames = 3;
    b.remoteReceivedBytes = 3000;
    b.sums.deliveredFrames = 3;
    b.sums.deliveredBytes = 3000;
    a.Merge(b);
    const FabricTotals t = a.Finish();
    EXPECT_EQ(t.inFlightFrames, 2u);
    EXPECT_EQ(t.inFlightBytes, 2000u);
    EXPECT_TRUE(t.Conserved());
}

TEST(RankParts, FlowOutcomesGivenBackReproduceEveryFlowOutput)
{
    IncastRun run;
    const nlohmann::json flows = run.traffic->FlowsJson();
    std::ostringstream fct;
    run.traffic->WriteFctCsv(fct);
    const uint32_t completed = run.traffic->CompletedFlows();
    ASSERT_EQ(completed, 7u); // the incast done, the long flow not
    const nlohmann::json local = run.traffic->LocalOutcomes();
    run.traffic->ApplyOutcomes({nlohmann::json::parse(local.dump())});
    EXPECT_EQ(run.traffic->FlowsJson(), flows);
    std::ostringstream again;
    run.traffic->WriteFctCsv(again);
    EXPECT_EQ(again.str(), fct.str());
    EXPECT_EQ(run.traffic->CompletedFlows(), completed);
}

TEST(RankParts, AFlowSideMissingOrGivenTwiceIsRefused)
{
    IncastRun run;
    const nlohmann::json local = run.traffic->LocalOutcomes();
    try
    {
        run.traffic->ApplyOutcomes({local, local});
        FAIL() << "a flow given twice was taken";
    }
    catch (const std::runtime_error& e)
    {
        EXPECT_NE(std::string(e.what()).find("flow 0 given twice"), std::string::npos) << e.what();
    }
    nlohmann::json noReceivers = local;
    noReceivers["receivers"] = nlohmann::json::array();
    try
    {
        run.traffic->ApplyOutcomes({noReceivers});
        FAIL() << "flows without a receiver side were taken";
    }
    catch (const std::runtime_error& e)
    {
        EXPECT_NE(std::string(e.what()).find("flow 0 has no receiver side"), std::string::npos)
            << e.what();
    }
}
