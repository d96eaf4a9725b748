/*
 * The analytical backend: exact single-message timing (headers per MTU frame, store-and-forward
 * of the last frame), max-min fair sharing with ACK load on reverse links, FIFO per connection,
 * and a ring AllReduce against the cost model 2 (p - 1) / p * n / B.
 */
#include "analytical-transport.h"
#include "executor-test-util.h"
#include "executor.h"
#include "test-util.h"

#include <gtest/gtest.h>

namespace fabricsim
{
namespace
{

using test::SingleSwitch;

AnalyticalOptions
NoAcks()
{
    AnalyticalOptions o;
    o.m_ackInterval = 0;
    return o;
}

/// Delivery time of each message sent at time 0.
std::vector<int64_t>
Deliveries(AnalyticalTransport& t, const std::vector<std::array<uint32_t, 3>>& msgs, uint64_t bytes)
{
    std::vector<int64_t> at(msgs.size(), -1);
    for (size_t i = 0; i < msgs.size(); ++i)
    {
        t.Send(msgs[i][0], msgs[i][1], msgs[i][2], bytes, [&t, &at, i]() { at[i] = t.NowPs(); });
    }
    t.Run();
    return at;
}

TEST(AnalyticalTransport, LoneMessageTimeIsWireBytesOverRatePlusLatency)
{
    AnalyticalTransport t(SingleSwitch(2), NoAcks());
    // 1000 frames of 1000 B: 82 B of headers, preamble and gap each, RETH once.
    EXPECT_EQ(t.WireBytes(1000000), 1000000u + 1000 * 82 + 16);
    auto at = Deliveries(t, {{0, 1, 0}}, 1000000);
    // 1,082,016 B at 12.5 GB/s + 2 x 1 us + the last 1082 B frame again at the switch.
    const double expect = 1082016 / 12.5e9 * 1e12 + 2e6 + 1082 / 12.5e9 * 1e12;
    EXPECT_NEAR(double(at[0]), expect, 2.0);
    EXPECT_EQ(at[0], t.IdealPs(0, 1, 1000000));
}

TEST(AnalyticalTransport, MaxMinFairSharing)
{
    // 0, 1, 2 -> 3 share host 3's downlink (a third each); 2 -> 1 gets the rest of host 2's
    // uplink (two thirds) and finishes first; then the three keep their third until done.
    AnalyticalTransport t(SingleSwitch(4), NoAcks());
    const uint64_t bytes = 3000000;
    const double wire = double(t.WireBytes(bytes));
    const double lat = 2e6 + 1082 / 12.5e9 * 1e12;
    auto at = Deliveries(t, {{0, 3, 0}, {1, 3, 0}, {2, 3, 0}, {2, 1, 0}}, bytes);
    EXPECT_NEAR(double(at[3]), wire / (12.5e9 * 2 / 3) * 1e12 + lat, 5.0);
    for (int i = 0; i < 3; ++i)
    {
        EXPECT_NEAR(double(at[i]), wire / (12.5e9 / 3) * 1e12 + lat, 5.0);
    }
}

TEST(AnalyticalTransport, AcksLoadTheReversePath)
{
    // 0 <-> 1 at once: each uplink carries its data and the other flow's ACKs (86 B per frame).
    AnalyticalTransport t(SingleSwitch(2));
    const uint64_t bytes = 1000000;
    auto at = Deliveries(t, {{0, 1, 0}, {1, 0, 0}}, bytes);
    const double busy = double(t.WireBytes(bytes) + 1000 * 86) / 12.5e9 * 1e12;
    EXPECT_NEAR(double(at[0]), busy + 2e6 + 1082 / 12.5e9 * 1e12, 5.0);
    EXPECT_EQ(at[0], at[1]);
}

TEST(AnalyticalTransport, MessagesOfAConnectionAreServedInOrder)
{
    AnalyticalTransport t(SingleSwitch(2), NoAcks());
    std::vector<int> order;
    t.Send(0, 1, 0, 2000000, [&]() { order.push_back(0); });
    t.Send(0, 1, 0, 10, [&]() { order.push_back(1); });
    t.Send(0, 1, 1, 10, [&]() { order.push_back(2); }); // another channel: shares, does not wait
    t.Run();
    EXPECT_EQ(order, (std::vector<int>{2, 0, 1}));
}

TEST(AnalyticalTransport, ScheduleRunsCallbacksInTimeOrder)
{
    AnalyticalTransport t(SingleSwitch(2));
    std::vector<int64_t> seen;
    t.Schedule(500, [&]() { seen.push_back(t.NowPs()); });
    t.Schedule(100,
               [&]()
               {
                   seen.push_back(t.NowPs());
                   t.Schedule(100, [&]() { seen.push_back(t.NowPs()); });
               });
    t.Run();
    EXPECT_EQ(seen, (std::vector<int64_t>{100, 200, 500}));
    EXPECT_EQ(t.Name(), "analytical");
    EXPECT_EQ(t.NumRanks(), 2u);
}

TEST(AnalyticalTransport, RingAllReduceMatchesTheBandwidthTerm)
{
    // 8 ranks on one 100G switch: time -> 2 (p - 1) / p * S / B_payload for large S.
    AnalyticalTransport t(SingleSwitch(8));
    const uint64_t S = 256ull << 20;
    ExecutionResult r = RunSchedule(t, test::RingAllReduce(8), S);
    ASSERT_TRUE(r.m_complete) << r.StuckReport();
    // Payload rate of a 100G link at MTU 1000 with an ACK per frame on the same uplink.
    const double payloadBps = 12.5e9 * 1000.0 / (1082.0 + 86.0);
    const double ideal = 2.0 * 7 / 8 * double(S) / payloadBps;
    const double got = double(r.DurationPs()) * 1e-12;
    EXPECT_GT(got, ideal);
    EXPECT_LT(got, ideal * 1.03) << "got " << got << " s, ideal " << ideal << " s";
}

TEST(AnalyticalTransport, SecondRunOnTheSameTransportContinuesTheClock)
{
    AnalyticalTransport t(SingleSwitch(4));
    ExecutionResult a = RunSchedule(t, test::RingAllReduce(4), 1 << 20);
    ExecutionResult b = RunSchedule(t, test::RingAllReduce(4), 1 << 20);
    ASSERT_TRUE(a.m_complete && b.m_complete);
    EXPECT_EQ(b.m_startPs, a.m_endPs);
    EXPECT_EQ(a.DurationPs(), b.DurationPs());
}

} // namespace
} // namespace fabricsim
