// HPCC control law against updates computed by hand: B = 100 Gb/s, T = 10 us, so the initial
// window is the BDP 125000 B and W_AI = 40 Mb/s * 10 us = 50 B; eta 0.95.
#include "cc-scenario.h"

#include "ns3/hpcc.h"
#include "ns3/uinteger.h"

#include <gtest/gtest.h>

using namespace ns3;
using fabricsim::test::MakeAck;

namespace
{

constexpr double kB = 100e9;
constexpr double kT = 10e-6;

/// One-hop INT stack: the bottleneck port's rate, clock (us), tx byte counter and queue.
std::vector<IntHop>
Hop(double tsUs, uint64_t txBytes, uint32_t qlen)
{
    IntHop h;
    h.rateBps = uint64_t(kB);
    h.tsPs = uint64_t(tsUs * 1e6);
    h.txBytes = txBytes;
    h.qlenBytes = qlen;
    return {h};
}

void
Feed(Ptr<Hpcc> cc, uint32_t acked, uint32_t sndNxt, const std::vector<IntHop>& hops)
{
    AckSample a = MakeAck(acked, sndNxt, MicroSeconds(10));
    a.intHops = &hops;
    cc->OnAck(a);
}

void
ExpectWindow(Ptr<Hpcc> cc, double w)
{
    EXPECT_NEAR(double(cc->GetWindowBytes()), w, 1.0);
    EXPECT_NEAR(double(cc->GetRateBps()), w * 8 / kT, 2.0);
}

Ptr<Hpcc>
Make(uint32_t maxStage = 5)
{
    auto cc = CreateObject<Hpcc>();
    cc->SetAttribute("MaxStage", UintegerValue(maxStage));
    cc->Init(uint64_t(kB), MicroSeconds(10), 1000);
    return cc;
}

} // namespace

TEST(Hpcc, StartsAtLineRateWithBdpWindowAndAsksForInt)
{
    auto cc = Make();
    EXPECT_TRUE(cc->NeedsInt());
    EXPECT_EQ(cc->GetRateBps(), uint64_t(kB));
    EXPECT_EQ(cc->GetWindowBytes(), 125000u);
}

TEST(Hpcc, DecreaseFastReactionAndAdditiveIncrease)
{
    auto cc = Make();
    // First stack is a baseline only (rates need two samples); boundary = sndNxt 100.
    Feed(cc, 1, 100, Hop(1, 0, 62500));
    ExpectWindow(cc, 125000);

    // Past the boundary (101 > 100): commit. dt = 10 us = T (tau/T = 1); 125000 B in 10 us is
    // 100 Gb/s (u_tx = 1); min(qlen) = 62500 B -> 62500*8 / (1e11 * 1e-5) = 0.5. U = 1.5 >= eta:
    // W = 125000 / (1.5 / 0.95) + 50 = 79216.67.
    Feed(cc, 101, 200, Hop(11, 125000, 62500));
    double wc = 125000.0 / (1.5 / 0.95) + 50;
    EXPECT_NEAR(cc->GetUtilisation(), 1.5, 1e-12);
    ExpectWindow(cc, wc);
    EXPECT_NEAR(cc->GetReferenceWindow(), wc, 1e-6);
    EXPECT_EQ(cc->GetIncreaseStage(), 0u);

    // Fast reaction (150 <= 200): dt = 2 us (tau/T = 0.2), 12500 B in 2 us = 50 Gb/s (0.5),
    // min(qlen) = min(0, 62500) = 0: u = 0.5; U = 0.8 * 1.5 + 0.2 * 0.5 = 1.3;
    // W = Wc / (1.3 / 0.95) + 50, Wc itself is not committed.
    Feed(cc, 150, 210, Hop(13, 137500, 0));
    EXPECT_NEAR(cc->GetUtilisation(), 1.3, 1e-12);
    ExpectWindow(cc, wc / (1.3 / 0.95) + 50);
    EXPECT_NEAR(cc->GetReferenceWindow(), wc, 1e-6);

    // Commit (201 > 200): dt = 10 us, 62500 B = 50 Gb/s, no queue: U = 0.5 < eta and stage 0 <
    // 5: additive, W = Wc + 50, stage 1.
    Feed(cc, 201, 300, Hop(23, 200000, 0));
    EXPECT_NEAR(cc->GetUtilisation(), 0.5, 1e-12);
    ExpectWindow(cc, wc + 50);
    EXPECT_EQ(cc->GetIncreaseStage(), 1u);
    EXPECT_NEAR(cc->GetReferenceWindow(), wc + 50, 1e-6);

    // A second additive commit: W = Wc + 100, stage 2.
    Feed(cc, 301, 400, Hop(33, 262500, 0));
    ExpectWindow(cc, wc + 100);
    EXPECT_EQ(cc->GetIncreaseStage(), 2u);
}

TEST(Hpcc, MaxStageForcesMultiplicativeIncrease)
{
    auto cc = Make(1);
    Feed(cc, 1, 100, Hop(1, 0, 62500));
    // Congested commit as above: Wc = 125000 / (1.5 / 0.95) + 50.
    Feed(cc, 101, 200, Hop(11, 125000, 62500));
    double wc = 125000.0 / (1.5 / 0.95) + 50;
    // U = 0.5 (50 Gb/s, empty queue), stage 0 < 1: additive, stage 1.
    Feed(cc, 201, 300, Hop(21, 187500, 0));
    wc += 50;
    ExpectWindow(cc, wc);
    // Stage 1 >= MaxStage 1: multiplicative although U = 0.8 < eta (100000 B in 10 us = 80 Gb/s):
    // W = Wc / (0.8 / 0.95) + 50 = 1.1875 Wc + 50, a multiplicative increase.
    Feed(cc, 301, 400, Hop(31, 287500, 0));
    EXPECT_NEAR(cc->GetUtilisation(), 0.8, 1e-12);
    ExpectWindow(cc, wc / (0.8 / 0.95) + 50);
    EXPECT_GT(cc->GetWindowBytes(), uint64_t(wc + 50));
    EXPECT_EQ(cc->GetIncreaseStage(), 0u);
}

TEST(Hpcc, UsesTheMostLoadedHopAndRebaselinesOnPathChange)
{
    auto cc = Make();
    auto two = [](double ts, uint64_t tx0, uint32_t q0, uint64_t tx1, uint32_t q1)
    {
        std::vector<IntHop> v = Hop(ts, tx0, q0);
        IntHop h;
        h.rateBps = 400000000000ULL; // a 400G fabric hop
        h.tsPs = uint64_t((ts + 0.5) * 1e6);
        h.txBytes = tx1;
        h.qlenBytes = q1;
        v.insert(v.begin(), h);
        return v;
    };
    Feed(cc, 1, 100, two(1, 0, 25000, 0, 0));
    // Hop 0 (400G): 250000 B in 10 us = 200 Gb/s -> 0.5; hop 1 (100G): 100 Gb/s + 25000 B queue
    // -> 1 + 25000*8/(1e11*1e-5) = 1.2. U = max = 1.2 (tau/T = 1).
    Feed(cc, 101, 200, two(11, 125000, 25000, 250000, 0));
    EXPECT_NEAR(cc->GetUtilisation(), 1.2, 1e-12);
    ExpectWindow(cc, 125000.0 / (1.2 / 0.95) + 50);
    uint64_t w = cc->GetWindowBytes();
    // The path changed (one hop now): a new baseline, no update.
    Feed(cc, 150, 210, Hop(12, 999999, 0));
    EXPECT_EQ(cc->GetWindowBytes(), w);
    // ACKs without INT (e.g. a path that does not stamp) change nothing.
    AckSample a = MakeAck(160, 220, MicroSeconds(10));
    cc->OnAck(a);
    EXPECT_EQ(cc->GetWindowBytes(), w);
}
