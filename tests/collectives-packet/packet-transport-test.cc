/*
 * The packet transport on the ns-3 fabric: a lone message takes what the analytical model
 * says, messages of a connection arrive in order, channels are separate queue pairs, Run()
 * ends when the collective's work ends, and a broken fabric ends at the watchdog with the
 * undelivered transfers named.
 */
#include "analytical-transport.h"
#include "packet-test-util.h"
#include "packet-transport.h"
#include "test-util.h"

#include "ns3/fabric-setup.h"
#include "ns3/simulator.h"

#include <gtest/gtest.h>

namespace fabricsim
{
namespace
{

using nlohmann::json;

/// Installs a scenario's fabric and a packet transport over it; destroys the simulator after.
class Fabric
{
  public:
    explicit Fabric(const json& doc, int64_t stopPs = 0, int64_t stallPs = 0)
        : m_sc(test::Scenario(doc))
    {
        ConfigureSimulator(m_sc, {});
        m_fabric = InstallFabric(m_sc);
        PacketTransportOptions o;
        o.m_priority = m_sc.transport.priority;
        o.m_stopPs = stopPs;
        o.m_stallPs = stallPs;
        m_transport = std::make_unique<PacketTransport>(
            *m_fabric, CcFactory("dcqcn", "test.json", "transport.cc"), o);
    }

    ~Fabric()
    {
        m_transport.reset();
        m_fabric.reset();
        ns3::Simulator::Destroy();
    }

    FabricScenario m_sc;
    std::unique_ptr<ns3::FabricTopologyHelper> m_fabric;
    std::unique_ptr<PacketTransport> m_transport;
};

TEST(PacketTransport, LoneMessageTakesTheAnalyticalTime)
{
    const json doc = test::SingleSwitchScenario(2, "100Gbps");
    int64_t at = -1;
    {
        Fabric f(doc);
        f.m_transport->Send(0, 1, 0, 1000000, [&]() { at = f.m_transport->NowPs(); });
        f.m_transport->Run();
        EXPECT_EQ(f.m_transport->NowPs(), at); // Run ends with the last delivery
    }
    AnalyticalTransport a(test::Scenario(doc).topology);
    const double ideal = double(a.IdealPs(0, 1, 1000000));
    EXPECT_NEAR(double(at), ideal, 0.002 * ideal);
}

TEST(PacketTransport, ConnectionsAreFifoAndChannelsAreSeparateQueuePairs)
{
    Fabric f(test::SingleSwitchScenario(3, "100Gbps"));
    std::vector<int> order;
    f.m_transport->Send(0, 2, 0, 500000, [&]() { order.push_back(0); });
    f.m_transport->Send(0, 2, 0, 100, [&]() { order.push_back(1); });
    f.m_transport->Send(0, 2, 1, 100, [&]() { order.push_back(2); });
    f.m_transport->Send(1, 2, 0, 100, [&]() { order.push_back(3); });
    bool timer = false;
    f.m_transport->Schedule(100000000, [&]() { timer = true; }); // 100 us, after the deliveries
    f.m_transport->Run();
    ASSERT_EQ(order.size(), 4u);
    // The 100 B messages on other connections overtake the 500 KB one; its follower cannot.
    EXPECT_EQ(order.back(), 1);
    EXPECT_EQ(order[order.size() - 2], 0);
    EXPECT_TRUE(timer);
    EXPECT_EQ(f.m_transport->Connections(), 3u);
    EXPECT_EQ(f.m_transport->InFlight(), 0u);
    EXPECT_EQ(f.m_transport->NowPs(), 100000000); // the timer was the last work
    EXPECT_EQ(f.m_transport->Name(), "packet");
    EXPECT_EQ(f.m_transport->NumRanks(), 3u);
}

TEST(PacketTransport, BrokenLinkEndsAtTheWatchdogWithUndeliveredTransfers)
{
    json doc = test::SingleSwitchScenario(2, "100Gbps");
    doc["link_events"] = json::array({{{"link", 1}, {"at_ns", 1000}, {"state", "down"}}});
    Fabric f(doc, 3000000000); // 3 ms
    bool delivered = false;
    f.m_transport->Send(
        0, 1, 0, 1000000, [&]() { delivered = true; }); // connects before the failure
    f.m_transport->Run();
    EXPECT_FALSE(delivered);
    EXPECT_TRUE(f.m_transport->StoppedByWatchdog());
    EXPECT_EQ(f.m_transport->NowPs(), 3000000000);
    auto report = f.m_transport->InFlightReport();
    ASSERT_EQ(report.size(), 1u);
    EXPECT_NE(report[0].find("host 0 -> host 1 channel 0: 1 message(s) undelivered"),
              std::string::npos)
        << report[0];
}

TEST(PacketTransport, StallWatchdogEndsABrokenLinkAfterTheStallTime)
{
    json doc = test::SingleSwitchScenario(2, "100Gbps");
    doc["link_events"] = json::array({{{"link", 1}, {"at_ns", 1000}, {"state", "down"}}});
    Fabric f(doc, 0, 2000000000); // no stop time; 2 ms without a delivery is a stall
    bool delivered = false;
    f.m_transport->Send(0, 1, 0, 1000000, [&]() { delivered = true; });
    f.m_transport->Run();
    EXPECT_FALSE(delivered);
    ASSERT_TRUE(f.m_transport->StoppedByWatchdog());
    // Sent at 0 and never delivered: stalled from 0, so stopped at exactly the stall time.
    EXPECT_EQ(f.m_transport->NowPs(), 2000000000);
    const std::string why = f.m_transport->WatchdogReport();
    EXPECT_NE(why.find("stall watchdog at 0.002 s simulated: 1 message(s) in flight and none "
                       "delivered for 0.002 s"),
              std::string::npos)
        << why;
}

TEST(PacketTransport, StallWatchdogLetsAWorkloadIdleBetweenMessages)
{
    // A serving run waits on arrivals with nothing in flight: 50 stall times of quiet, then a
    // message that takes well under one. The run must reach its end, not stop at the watchdog.
    Fabric f(test::SingleSwitchScenario(2, "100Gbps"), 0, 2000000000);
    int64_t at = -1;
    f.m_transport->Schedule(
        int64_t(50) * 2000000000 - 1000000,
        [&]() { f.m_transport->Send(0, 1, 0, 1000000, [&]() { at = f.m_transport->NowPs(); }); });
    f.m_transport->Run();
    EXPECT_FALSE(f.m_transport->StoppedByWatchdog()) << f.m_transport->WatchdogReport();
    EXPECT_GT(at, int64_t(50) * 2000000000 - 1000000);
    EXPECT_EQ(f.m_transport->WatchdogReport(), "");
}

TEST(PacketTransport, StuckCollectiveNamesRanksAndTransfers)
{
    // Host 2's link fails at 20 us, after the ring's queue pairs are connected (launch 4 us).
    json doc = test::SingleSwitchScenario(4, "100Gbps");
    doc["link_events"] = json::array({{{"link", 2}, {"at_ns", 20000}, {"state", "down"}}});
    doc["stop_ns"] = 2000000;
    CollectiveMeasurement m = test::Measure(doc, "packet", test::RingAllReduce(4), 1 << 20);
    EXPECT_FALSE(m.m_complete);
    EXPECT_NE(m.m_stuckReport.find("ranks stuck"), std::string::npos) << m.m_stuckReport;
    EXPECT_NE(m.m_stuckReport.find("undelivered: host 1 -> host 2"), std::string::npos)
        << m.m_stuckReport;
    EXPECT_NE(m.m_stuckReport.find("watchdog"), std::string::npos) << m.m_stuckReport;
}

} // namespace
} // namespace fabricsim
