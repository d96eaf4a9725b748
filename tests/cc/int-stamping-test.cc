// INT stamping: every switch egress pushes (link rate, time, tx bytes, queue) on HPCC data frames,
// for any link speed and any number of hops; frames grow by the shim and the hop records, the
// ACK echoes them, frames of other algorithms stay untouched and the byte conservation check
// still balances.
#include "ns3/config.h"
#include "ns3/fabric-stats-helper.h"
#include "ns3/fabric-topology-helper.h"
#include "ns3/fabric-traffic-helper.h"
#include "ns3/rng-seed-manager.h"
#include "ns3/simulator.h"

#include <gtest/gtest.h>

using namespace ns3;

namespace
{

struct Captured
{
    std::vector<FabricPacket> acks; ///< ACKs arriving at the sender
    std::vector<FabricPacket> data; ///< data frames arriving at the receiver
    bool allDone = false;
    bool conserved = false;
};

/// host0 - sw0 - ... - sw(n-1) - host1; `rates` are the egress rates of sw0..sw(n-1) (the last
/// one is the link to host1); the sender's NIC runs at 100 Gb/s.
Captured
RunChain(const std::vector<double>& rates, const std::string& cc, uint64_t bytes)
{
    Config::Reset();
    RngSeedManager::SetSeed(1);
    fabricsim::Topology topo;
    topo.type = "custom";
    std::vector<uint32_t> sw;
    for (size_t i = 0; i < rates.size(); ++i)
    {
        sw.push_back(topo.AddSwitch("sw" + std::to_string(i), 0));
    }
    uint32_t h0 = topo.AddHost("host0", 0);
    uint32_t h1 = topo.AddHost("host1", 1);
    fabricsim::LinkSpec l;
    l.rateBps = 100e9;
    topo.AddLink(h0, sw[0], l);
    for (size_t i = 0; i + 1 < sw.size(); ++i)
    {
        l.rateBps = rates[i];
        topo.AddLink(sw[i], sw[i + 1], l);
    }
    l.rateBps = rates.back();
    topo.AddLink(sw.back(), h1, l);

    FabricTopologyHelper fabric(topo);
    fabric.Install();
    fabric.AssignStreams(1);
    FabricTrafficHelper traffic(fabric);
    traffic.AddFlow(0, 1, bytes, MicroSeconds(1), 3, CongestionControlFactory::Get(cc));
    Captured c;
    using Rx = Callback<void, const FabricPacket&>;
    fabric.GetNic(0)->TraceConnectWithoutContext("Rx",
                                                 Rx(
                                                     [&c](const FabricPacket& p)
                                                     {
                                                         if (p.type == FrameType::Ack)
                                                         {
                                                             c.acks.push_back(p);
                                                         }
                                                     }));
    fabric.GetNic(1)->TraceConnectWithoutContext("Rx",
                                                 Rx(
                                                     [&c](const FabricPacket& p)
                                                     {
                                                         if (p.type == FrameType::Data)
                                                         {
                                                             c.data.push_back(p);
                                                         }
                                                     }));
    Simulator::Stop(MilliSeconds(5));
    Simulator::Run();
    c.allDone = traffic.CompletedFlows() == 1;
    FabricStatsHelper stats(fabric);
    c.conserved = stats.Collect().Conserved();
    Simulator::Destroy();
    return c;
}

} // namespace

TEST(IntStamping, ThreeHopsOfMixedSpeeds)
{
    Captured c = RunChain({400e9, 800e9, 100e9}, "hpcc", 20000);
    ASSERT_TRUE(c.allDone);
    EXPECT_TRUE(c.conserved);
    ASSERT_EQ(c.data.size(), 20u);
    ASSERT_EQ(c.acks.size(), 20u);

    // First frame: 1078 B (with RETH) + 2 B shim at the NIC, + 8 B per hop.
    const FabricPacket& d0 = c.data[0];
    EXPECT_EQ(d0.frameBytes, 1078u + 2 + 3 * 8);
    EXPECT_EQ(d0.intBytes, 2u + 3 * 8);
    const FabricPacket& a0 = c.acks[0];
    EXPECT_EQ(a0.frameBytes, 66u + 2 + 3 * 8);
    ASSERT_EQ(a0.intHops.size(), 3u);
    const double rates[] = {400e9, 800e9, 100e9};
    for (int i = 0; i < 3; ++i)
    {
        EXPECT_EQ(a0.intHops[i].rateBps, uint64_t(rates[i]));
    }
    // Stamped as the frame leaves each switch: sent at 1 us, 1100 wire B at 100G (88 ns) + 1 us
    // to sw0; then 1108 B at 400G (22.16 ns) + 1 us; then 1116 B at 800G (11.16 ns) + 1 us.
    EXPECT_NEAR(double(a0.intHops[0].tsPs), 1e6 + 88e3 + 1e6, 1000);
    EXPECT_NEAR(double(a0.intHops[1].tsPs - a0.intHops[0].tsPs), 22160 + 1e6, 1000);
    EXPECT_NEAR(double(a0.intHops[2].tsPs - a0.intHops[1].tsPs), 11160 + 1e6, 1000);
    // The tx byte counter includes the stamped frame (wire bytes), the first through each port.
    EXPECT_EQ(a0.intHops[0].txBytes, 1108u);
    EXPECT_EQ(a0.intHops[1].txBytes, 1116u);
    EXPECT_EQ(a0.intHops[2].txBytes, 1124u);
    EXPECT_EQ(a0.intHops[0].qlenBytes, 0u);

    // Later samples: clocks and counters only move forward, per hop.
    for (size_t k = 1; k < c.acks.size(); ++k)
    {
        ASSERT_EQ(c.acks[k].intHops.size(), 3u);
        for (int i = 0; i < 3; ++i)
        {
            EXPECT_GT(c.acks[k].intHops[i].tsPs, c.acks[k - 1].intHops[i].tsPs);
            EXPECT_GT(c.acks[k].intHops[i].txBytes, c.acks[k - 1].intHops[i].txBytes);
        }
    }
    // Middle frames: 1062 + 2 + 24.
    EXPECT_EQ(c.data[5].frameBytes, 1062u + 2 + 3 * 8);
}

TEST(IntStamping, SevenHopsAnySpeed)
{
    std::vector<double> rates = {400e9, 800e9, 1600e9, 25e9, 200e9, 3200e9, 100e9};
    Captured c = RunChain(rates, "hpcc", 10000);
    ASSERT_TRUE(c.allDone);
    EXPECT_TRUE(c.conserved);
    ASSERT_FALSE(c.acks.empty());
    for (auto& a : c.acks)
    {
        ASSERT_EQ(a.intHops.size(), 7u);
        EXPECT_EQ(a.frameBytes, 66u + 2 + 7 * 8);
        for (size_t i = 0; i < rates.size(); ++i)
        {
            EXPECT_EQ(a.intHops[i].rateBps, uint64_t(rates[i]));
        }
    }
    EXPECT_EQ(c.data.back().intBytes, 2u + 7 * 8);
}

TEST(IntStamping, OtherAlgorithmsAreNotStamped)
{
    Captured c = RunChain({400e9, 800e9, 100e9}, "dcqcn", 5000);
    ASSERT_TRUE(c.allDone);
    EXPECT_TRUE(c.conserved);
    for (auto& d : c.data)
    {
        EXPECT_TRUE(d.intHops.empty());
        EXPECT_EQ(d.intBytes, 0u);
    }
    EXPECT_EQ(c.acks.front().frameBytes, 66u);
}
