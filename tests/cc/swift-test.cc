// Swift against updates computed by hand: line rate 100 Gb/s, base RTT 10 us (W starts at the
// BDP 125000 B = 125 packets of 1000 B), base target 25 us, 1 us per hop, fs_range 4 x 25 us,
// flow scaling between 0.1 and 100 packets, beta 0.8, max_mdf 0.4, AI 1 packet per RTT.
#include "cc-scenario.h"

#include "ns3/simulator.h"
#include "ns3/swift.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace ns3;
using fabricsim::test::MakeAck;

namespace
{

/// Flow-scaling term in us at `cwnd` packets (the formula in docs/congestion-control.md).
double
FlowScalingUs(double cwnd)
{
    double range = 4 * 25.0;
    double a = range / (1 / std::sqrt(0.1) - 1 / std::sqrt(100.0)); // 32.655 us
    double b = -a / std::sqrt(100.0);
    return std::min(std::max(a / std::sqrt(cwnd) + b, 0.0), range);
}

} // namespace

TEST(Swift, TargetDelayScalesWithHopsAndWindow)
{
    auto cc = CreateObject<Swift>();
    cc->Init(100000000000ULL, MicroSeconds(10), 1000);
    // 125 packets >= fs_max_cwnd: no flow scaling; 25 us + 1 us per hop.
    EXPECT_EQ(cc->TargetDelay(0), MicroSeconds(25));
    EXPECT_EQ(cc->TargetDelay(5), MicroSeconds(30));
    EXPECT_NEAR(FlowScalingUs(125), 0.0, 1e-12);
    EXPECT_NEAR(FlowScalingUs(0.1), 100.0, 1e-9); // the whole range at fs_min_cwnd
}

TEST(Swift, DecreaseBoundedOncePerRttAndAdditiveIncrease)
{
    auto cc = CreateObject<Swift>();
    cc->Init(100000000000ULL, MicroSeconds(10), 1000);
    auto ack = [&](double rttUs)
    {
        AckSample a = MakeAck(1, 2, MicroSeconds(int64_t(rttUs)), false, 1000);
        a.hops = 2;
        cc->OnAck(a);
    };
    double w = 125000;
    std::vector<double> seen;
    // t = 0: delay 50 us over the 27 us target (2 hops, no flow scaling at 125 packets):
    // W *= max(1 - 0.8 (50 - 27) / 50, 0.6) = 0.632.
    Simulator::Schedule(MicroSeconds(0),
                        [&]()
                        {
                            ack(50);
                            seen.push_back(cc->GetWindow());
                        });
    // t = 20 us: over target again, but only 20 us since the cut (< the 60 us RTT): no cut.
    Simulator::Schedule(MicroSeconds(20),
                        [&]()
                        {
                            ack(60);
                            seen.push_back(cc->GetWindow());
                        });
    // t = 70 us: 70 us >= 60 us since the cut. At 79 packets the target is 27 us + fs(79);
    // 1 - 0.8 (60 - target) / 60 = 0.565 is below 1 - max_mdf, so the cut is bounded at 0.6.
    Simulator::Schedule(MicroSeconds(70),
                        [&]()
                        {
                            ack(60);
                            seen.push_back(cc->GetWindow());
                        });
    // t = 100 us: 20 us is under the target: W += 1000 * 1000 / W.
    Simulator::Schedule(MicroSeconds(100),
                        [&]()
                        {
                            ack(20);
                            seen.push_back(cc->GetWindow());
                        });
    Simulator::Run();
    Simulator::Destroy();

    ASSERT_EQ(seen.size(), 4u);
    w *= 1 - 0.8 * (50 - 27.0) / 50;
    EXPECT_NEAR(seen[0], w, 1e-6);
    EXPECT_NEAR(w, 79000, 1e-6);
    EXPECT_NEAR(seen[1], w, 1e-6);
    double target = 27 + FlowScalingUs(w / 1000);
    EXPECT_LT(1 - 0.8 * (60 - target) / 60, 0.6);
    w *= 0.6;
    EXPECT_NEAR(seen[2], w, 1e-6);
    w += 1000.0 * 1000.0 / w;
    EXPECT_NEAR(seen[3], w, 1e-6);
    EXPECT_NEAR(double(cc->GetRateBps()), w * 8 / 10e-6, 2.0);
    EXPECT_EQ(cc->GetWindowBytes(), uint64_t(std::ceil(w)));
}

TEST(Swift, ProportionalDecreaseBelowTheBound)
{
    auto cc = CreateObject<Swift>();
    cc->Init(100000000000ULL, MicroSeconds(10), 1000);
    // One hop, delay 30 us vs target 26 us: W *= 1 - 0.8 * 4 / 30 (about 0.893, above 0.6).
    AckSample a = MakeAck(1, 2, MicroSeconds(30), false, 1000);
    a.hops = 1;
    cc->OnAck(a);
    EXPECT_NEAR(cc->GetWindow(), 125000 * (1 - 0.8 * 4.0 / 30), 1e-6);
    Simulator::Destroy();
}
