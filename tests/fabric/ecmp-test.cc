// ECMP spreads 64 flows over 4 spines without a spine above twice the mean.
#include "scenario-runner.h"

#include "ns3/config.h"
#include "ns3/fabric-topology-helper.h"
#include "ns3/fabric-traffic-helper.h"
#include "ns3/simulator.h"

#include <gtest/gtest.h>

using namespace ns3;

TEST(Ecmp, SixtyFourFlowsOverFourSpines)
{
    Config::Reset();
    nlohmann::json spec
        = {{"type", "leaf-spine"}, {"leaves", 2}, {"spines", 4}, {"hosts_per_leaf", 32}};
    fabricsim::Topology topo = fabricsim::BuildTopology(spec, "test");
    FabricTopologyHelper fabric(topo);
    fabric.Install();
    FabricTrafficHelper traffic(fabric);
    ObjectFactory f = CongestionControlFactory::Get("none");
    for (uint32_t i = 0; i < 32; ++i)
    {
        traffic.AddFlow(i, 32 + i, 100000, Time(0), 3, f);
        traffic.AddFlow(i, 32 + (i + 1) % 32, 100000, Time(0), 3, f);
    }
    Simulator::Run();
    ASSERT_EQ(traffic.CompletedFlows(), 64u);
    // Data frames each spine received from leaf 0 (port toward leaf 0 = its first link).
    std::vector<double> perSpine;
    for (uint32_t s = 0; s < 4; ++s)
    {
        auto sw = fabric.GetSwitch(topo.FindNode("spine" + std::to_string(s)));
        ASSERT_TRUE(sw);
        uint64_t frames = 0;
        for (uint32_t p = 0; p < sw->GetNPorts(); ++p)
        {
            frames += sw->GetPort(p)->GetStats().txDataPayload;
        }
        perSpine.push_back(double(frames));
    }
    double mean = (perSpine[0] + perSpine[1] + perSpine[2] + perSpine[3]) / 4;
    for (double v : perSpine)
    {
        EXPECT_GT(v, 0);
        EXPECT_LE(v, 2 * mean);
    }
    Simulator::Destroy();
}
