// FabricTrafficHelper's outputs (fct.csv rows, summary.json flows, slowdown percentiles): the ones
// `fabricsim run` writes, available to scenario programs through the helper.
#include "ns3/fabric-topology-helper.h"
#include "ns3/fabric-traffic-helper.h"
#include "ns3/simulator.h"

#include <gtest/gtest.h>

#include <iomanip>
#include <sstream>

using namespace ns3;

TEST(TrafficOutputs, CompletedAndUnfinishedFlowsAreReportedAsTheCliReportsThem)
{
    fabricsim::Topology topo
        = fabricsim::BuildTopology({{"type", "single-switch"}, {"hosts", 3}}, "test");
    FabricTopologyHelper fabric(topo);
    fabric.Install();
    FabricTrafficHelper traffic(fabric);
    ObjectFactory none = CongestionControlFactory::Get("none");
    traffic.AddFlow(0, 2, 100000, Time(0), 3, none);
    traffic.AddFlow(1, 2, 100000, MicroSeconds(1), 3, none);
    traffic.AddFlow(0, 1, 100000, MilliSeconds(5), 3, none); // after the stop: never starts
    Simulator::Stop(MilliSeconds(1));
    Simulator::Run();

    std::ostringstream csv;
    csv << std::setprecision(2); // the helper must not depend on, or change, the stream's state
    traffic.WriteFctCsv(csv);
    std::istringstream lines(csv.str());
    std::string line;
    std::vector<std::string> rows;
    while (std::getline(lines, line))
    {
        rows.push_back(line);
    }
    ASSERT_EQ(rows.size(), 3u); // header + the two finished flows
    EXPECT_EQ(rows[0],
              "flow_id,src,dst,sport,dport,size_bytes,start_ns,fct_ns,ideal_fct_ns,slowdown");
    EXPECT_EQ(rows[1].rfind("0,0,2,", 0), 0u) << rows[1];
    EXPECT_NE(rows[1].find(",4791,100000,0,"), std::string::npos) << rows[1];

    const nlohmann::json flows = traffic.FlowsJson();
    ASSERT_EQ(flows.size(), 3u);
    const auto& f0 = traffic.GetFlows()[0];
    EXPECT_EQ(flows[0]["fct_ns"].get<int64_t>(), (f0.finish - f0.start).GetNanoSeconds());
    EXPECT_GE(flows[0]["slowdown"].get<double>(), 0.99);
    EXPECT_TRUE(flows[2]["fct_ns"].is_null());
    EXPECT_EQ(flows[2]["pending_bytes"].get<uint64_t>(), 0u);
    EXPECT_EQ(flows[2]["start_ns"].get<int64_t>(), 5000000);

    // Two flows share the receiver's link: the later one is slowed more than the first.
    const std::vector<double> sd = traffic.Slowdowns();
    ASSERT_EQ(sd.size(), 2u);
    EXPECT_EQ(FabricTrafficHelper::Percentile(sd, 0.5), std::min(sd[0], sd[1]));
    EXPECT_EQ(FabricTrafficHelper::Percentile(sd, 0.99), std::max(sd[0], sd[1]));
    EXPECT_GT(std::max(sd[0], sd[1]), 1.4);
    EXPECT_EQ(FabricTrafficHelper::Percentile({}, 0.5), 0.0);
    EXPECT_EQ(FabricTrafficHelper::Percentile({1, 2, 3, 4}, 0.75), 3.0);
    Simulator::Destroy();
}
