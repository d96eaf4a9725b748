/*
 * The collective memo over the packet transport (collectives/helper/collective-memo.h): a ring
 * all-reduce repeated on an idle switch is replayed at the picoseconds simulation gives, and
 * verification (every hit simulated and compared) finds an entry that was tampered with, in
 * its completion times or in its effect on the fabric.
 */
#include "packet-test-util.h"
#include "packet-transport.h"
#include "schedule-collectives.h"

#include "ns3/collective-memo.h"
#include "ns3/fabric-setup.h"
#include "ns3/simulator.h"

#include <gtest/gtest.h>

#include <climits>

namespace fabricsim
{
namespace
{

/// A caller that never posts anything else.
class NoOtherTraffic : public CollectiveHorizon
{
  public:
    int64_t QuietUntilPs(uint32_t, int64_t) const override
    {
        return INT64_MAX;
    }
};

class MemoOnFabric
{
  public:
    MemoOnFabric()
        : m_sc(test::Scenario(test::SingleSwitchScenario(4, "100Gbps")))
    {
        ConfigureSimulator(m_sc, {});
        m_fabric = InstallFabric(m_sc);
        PacketTransportOptions o;
        o.m_priority = m_sc.transport.priority;
        m_transport = std::make_unique<PacketTransport>(
            *m_fabric, CcFactory("dcqcn", "test.json", "transport.cc"), o);
        m_api = std::make_unique<ScheduleCollectives>(*m_transport);
        m_memo = std::make_unique<CollectiveMemo>(*m_api, *m_transport);
        m_memo->SetHorizon(&m_horizon);
    }

    ~MemoOnFabric()
    {
        m_memo.reset();
        m_api.reset();
        m_transport.reset();
        m_fabric.reset();
        ns3::Simulator::Destroy();
    }

    /// One 1 MiB ring all-reduce through the memo, then 50 us idle; each rank's completion
    /// time, relative to the start.
    std::vector<int64_t> AllReduce()
    {
        CollectiveRequest req;
        req.kind = CollectiveKind::kAllReduce;
        req.bytes = 1 << 20;
        req.ranks = {0, 1, 2, 3};
        req.algorithm = "ring";
        const int64_t start = m_transport->NowPs();
        std::vector<int64_t> done(4, -1);
        m_memo->Start(
            req, [&](uint32_t i) { done[i] = m_transport->NowPs() - start; }, []() {});
        m_transport->Run();
        m_transport->Schedule(50000000, nullptr);
        m_transport->Run();
        return done;
    }

    FabricScenario m_sc;
    std::unique_ptr<ns3::FabricTopologyHelper> m_fabric;
    std::unique_ptr<PacketTransport> m_transport;
    std::unique_ptr<ScheduleCollectives> m_api;
    std::unique_ptr<CollectiveMemo> m_memo;
    NoOtherTraffic m_horizon;
};

TEST(CollectiveMemo, ARepeatedAllReduceReplaysAtTheSimulatedTimes)
{
    MemoOnFabric f;
    f.AllReduce();                                        // opens the queue pairs: not stored
    const std::vector<int64_t> simulated = f.AllReduce(); // recorded
    const std::vector<int64_t> replayed = f.AllReduce();
    const CollectiveMemoStats& s = f.m_memo->Stats();
    EXPECT_EQ(s.lookups, 3u);
    EXPECT_EQ(s.recorded, 1u);
    EXPECT_EQ(s.hits, 1u);
    EXPECT_EQ(replayed, simulated);
    EXPECT_GT(simulated[0], 0);
}

TEST(CollectiveMemo, VerificationFindsATamperedEntry)
{
    MemoOnFabric f;
    f.m_memo->SetVerify(1); // every hit is simulated and compared
    f.AllReduce();
    f.AllReduce();
    f.AllReduce();
    const CollectiveMemoStats& s = f.m_memo->Stats();
    EXPECT_EQ(s.hits, 0u);
    EXPECT_EQ(s.verified, 1u);
    EXPECT_EQ(s.verifyMismatches, 0u) << s.firstMismatch;

    ASSERT_EQ(f.m_memo->Entries().size(), 1u);
    CollectiveMemo::Entry& e = *f.m_memo->Entries()[0];
    e.calls[1].second += 3; // a completion 3 ps late
    f.AllReduce();
    EXPECT_EQ(s.verified, 2u);
    EXPECT_EQ(s.verifyMismatches, 1u);
    EXPECT_EQ(s.maxCompletionDeviationPs, 3);
    EXPECT_NE(s.firstMismatch.find("a completion 3 ps from the recorded one"), std::string::npos)
        << s.firstMismatch;

    e.calls[1].second -= 3;
    size_t counter = 0;
    while (counter < e.span.delta.size() && e.span.delta[counter] == 0)
    {
        ++counter;
    }
    ASSERT_LT(counter, e.span.delta.size());
    e.span.delta[counter] += 7; // a counter the span moves by 7 more
    f.AllReduce();
    EXPECT_EQ(s.verified, 3u);
    EXPECT_EQ(s.verifyMismatches, 2u);
    EXPECT_EQ(s.maxCounterDeviation, 7u);
}

} // namespace
} // namespace fabricsim
