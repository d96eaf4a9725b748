// The HPCC paper fat-tree (320 hosts, 100G/400G, 1 us): base RTT, BDP, headroom per port and
// the empty-buffer PFC threshold match the reference sheet (target 1).
#include "ns3/config.h"
#include "ns3/fabric-topology-helper.h"
#include "ns3/simulator.h"

#include <gtest/gtest.h>

using namespace ns3;

TEST(PaperFatTree, BaseRttHeadroomAndThreshold)
{
    Config::Reset();
    fabricsim::Topology topo
        = fabricsim::BuildTopology({{"type", "fat-tree"}, {"variant", "hpcc-paper"}}, "test");
    ASSERT_EQ(topo.NumHosts(), 320u);
    FabricTopologyHelper fabric(topo);
    fabric.Install();

    // Longest path: host 0 (pod 0) to host 319 (pod 4), 6 links.
    double maxRtt = 0;
    for (uint32_t dst = 1; dst < 320; dst += 1)
    {
        maxRtt = std::max(maxRtt, fabric.BaseRtt(0, dst).GetSeconds());
    }
    EXPECT_NEAR(maxRtt * 1e6, 12.24, 0.01 * 12.24);
    double bdp = maxRtt * 100e9 / 8;
    EXPECT_NEAR(bdp, 153e3, 0.01 * 153e3);

    // ToR of host 0: 16 host ports at 100G, 4 uplinks at 400G.
    uint32_t torId = fabric.GetRouting().PortPeer(topo.hosts[0], 0);
    auto tor = fabric.GetSwitch(torId);
    ASSERT_TRUE(tor);
    auto mmu = tor->GetMmu();
    uint32_t hostPorts = 0, upPorts = 0;
    for (uint32_t p = 0; p < tor->GetNPorts(); ++p)
    {
        uint64_t rate = tor->GetPort(p)->GetRateBps();
        if (rate == 100000000000ULL)
        {
            ++hostPorts;
            EXPECT_EQ(mmu->HeadroomPerPort(p), 37500u); // 3 x 100 Gb/s x 1 us
            EXPECT_NEAR(mmu->Threshold(p), 4.03e6, 0.01 * 4.03e6);
            EXPECT_DOUBLE_EQ(mmu->Alpha(p), 0.125);
        }
        else
        {
            ++upPorts;
            EXPECT_EQ(rate, 400000000000ULL);
            EXPECT_EQ(mmu->HeadroomPerPort(p), 150000u); // 3 x 400 Gb/s x 1 us
            EXPECT_DOUBLE_EQ(mmu->Alpha(p), 0.5);
        }
    }
    EXPECT_EQ(hostPorts, 16u);
    EXPECT_EQ(upPorts, 4u);
    EXPECT_EQ(mmu->BufferBytes(), 32u << 20);
    Simulator::Destroy();
}
