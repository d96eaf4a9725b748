// A PFC pause lasts its quanta of 512 bit times at the port's rate. The full 0xffff quanta of
// an XOFF once wrapped in 64-bit picosecond arithmetic (65535 x 512 x 1e12 > 2^64): pauses of
// 151 us instead of 335.5 us at 100 Gb/s, and refreshes twice as often as the switch means to.
#include "ns3/fabric-topology-helper.h"
#include "ns3/simulator.h"

#include <gtest/gtest.h>

using namespace ns3;

namespace
{

constexpr int64_t kFullPausePs = 335539200; // 65535 x 512 bit / 100 Gb/s

void
RecordPfc(std::vector<Time>* sent, uint8_t /* prio */, uint16_t /* quanta */)
{
    sent->push_back(Simulator::Now());
}

} // namespace

TEST(PfcPauseTime, FullQuantaPauseLastsItsBitTimes)
{
    fabricsim::Topology topo = fabricsim::BuildTopology(
        {{"type", "single-switch"}, {"hosts", 2}, {"host_link", {{"rate", "100Gbps"}}}}, "test");
    FabricTopologyHelper fabric(topo);
    fabric.Install();
    Ptr<RdmaNic> nic = fabric.GetNic(0);
    Ptr<SwitchPort> port = fabric.GetAllSwitches().at(0)->GetPort(0); // faces host 0
    Simulator::Schedule(MicroSeconds(1), [nic] { nic->SendPfc(3, 0xffff); });
    Simulator::Stop(MicroSeconds(10));
    Simulator::Run();
    ASSERT_TRUE(port->PeerPausing(3));
    EXPECT_EQ((port->PeerPauseEnd(3) - port->PausedSince(3)).GetPicoSeconds(), kFullPausePs);
    Simulator::Destroy();
}

TEST(PfcPauseTime, SwitchRefreshesXoffAtHalfThePause)
{
    fabricsim::Topology topo = fabricsim::BuildTopology(
        {{"type", "single-switch"}, {"hosts", 2}, {"host_link", {{"rate", "100Gbps"}}}}, "test");
    FabricTopologyHelper fabric(topo);
    fabric.Install();
    Ptr<RdmaNic> nic = fabric.GetNic(0);
    Ptr<SwitchPort> port = fabric.GetAllSwitches().at(0)->GetPort(0);
    std::vector<Time> sent;
    port->TraceConnectWithoutContext("PfcTx", MakeBoundCallback(&RecordPfc, &sent));
    Simulator::Schedule(MicroSeconds(20), [port] { port->PausePeer(3); });
    Simulator::Stop(MicroSeconds(1020));
    Simulator::Run();
    // XOFF at 20 us, then a refresh every 167.7696 us: 6 frames by 1020 us.
    ASSERT_EQ(sent.size(), 6u);
    for (size_t i = 1; i < sent.size(); ++i)
    {
        EXPECT_EQ((sent[i] - sent[i - 1]).GetPicoSeconds(), kFullPausePs / 2);
    }
    EXPECT_TRUE(nic->PeerPausing(3));
    EXPECT_GT(nic->PeerPauseEnd(3), Simulator::Now());
    Simulator::Destroy();
}
