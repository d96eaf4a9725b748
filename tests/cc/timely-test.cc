// TIMELY control law against updates computed by hand: line rate 100 Gb/s, defaults (alpha 0.875,
// beta 0.8, Tlow 50 us, Thigh 500 us, minRTT 20 us, delta 100 Mb/s, HAI after 5), one update
// per ACK (SegmentBytes 1) so every sample below is an update, unless a test says otherwise.
#include "cc-scenario.h"

#include "ns3/timely.h"
#include "ns3/uinteger.h"

#include <gtest/gtest.h>

using namespace ns3;
using fabricsim::test::MakeAck;

namespace
{

Ptr<Timely>
Make(uint64_t segmentBytes = 1)
{
    auto cc = CreateObject<Timely>();
    cc->SetAttribute("SegmentBytes", UintegerValue(segmentBytes));
    cc->Init(100000000000ULL, MicroSeconds(10), 1000);
    return cc;
}

void
Rtt(Ptr<Timely> cc, double us, uint64_t ackedBytes = 1000)
{
    cc->OnAck(MakeAck(1, 2, NanoSeconds(int64_t(us * 1000)), false, ackedBytes));
}

void
ExpectRate(Ptr<Timely> cc, double bps)
{
    EXPECT_NEAR(double(cc->GetRateBps()), bps, 2.0);
}

} // namespace

TEST(Timely, ThighDecreaseGradientIncreaseAndDecreaseAndTlow)
{
    auto cc = Make();
    Rtt(cc, 100); // first sample: only recorded
    ExpectRate(cc, 100e9);

    // 600 us > Thigh: R *= 1 - 0.8 (1 - 500/600). diff = 500 us -> rtt_diff = 0.875 * 500 = 437.5
    // us.
    Rtt(cc, 600);
    double r = 100e9 * (1 - 0.8 * (1 - 500.0 / 600.0));
    ExpectRate(cc, r);
    EXPECT_NEAR(cc->GetRttDiffSeconds(), 437.5e-6, 1e-12);

    // 300 us: diff -300 -> rtt_diff = 0.125 * 437.5 + 0.875 * -300 = -207.8125 us <= 0: R += delta.
    Rtt(cc, 300);
    r += 100e6;
    ExpectRate(cc, r);
    EXPECT_NEAR(cc->GetRttDiffSeconds(), -207.8125e-6, 1e-12);

    // 340 us: diff +40 -> rtt_diff = 0.125 * -207.8125 + 0.875 * 40 = 9.0234375 us; gradient
    // 9.0234375 / 20 = 0.451171875 > 0: R *= 1 - 0.8 * 0.451171875 = 0.6390625.
    Rtt(cc, 340);
    r *= 0.6390625;
    ExpectRate(cc, r);
    EXPECT_EQ(cc->GetNegativeGradientCount(), 0u);

    // 30 us < Tlow: R += delta whatever the gradient.
    Rtt(cc, 30);
    r += 100e6;
    ExpectRate(cc, r);
}

TEST(Timely, HyperActiveIncreaseAfterFiveNegativeGradients)
{
    auto cc = Make();
    Rtt(cc, 100);
    Rtt(cc, 600); // Thigh cut, rtt_diff = 437.5 us
    double r = 100e9 * (1 - 0.8 * (1 - 500.0 / 600.0));
    // 400 us: rtt_diff = 0.125 * 437.5 - 0.875 * 200 = -120.3125 us; then steps of -10 us keep it
    // negative: four updates of +delta, the fifth and sixth in a row +5 delta.
    double rtts[] = {400, 390, 380, 370, 360, 350};
    double steps[] = {1, 1, 1, 1, 5, 5};
    for (int i = 0; i < 6; ++i)
    {
        Rtt(cc, rtts[i]);
        r += steps[i] * 100e6;
        ExpectRate(cc, r);
        EXPECT_EQ(cc->GetNegativeGradientCount(), uint32_t(i + 1));
        EXPECT_LT(cc->GetRttDiffSeconds(), 0);
    }
    // A rise (+2 us) makes the gradient positive: multiplicative cut and the streak ends.
    // rtt_diff = 0.125 * (-10.003 us) + 0.875 * 2 us = 0.4996 us, gradient 0.02498.
    double d = 437.5;
    for (double x : {-200.0, -10.0, -10.0, -10.0, -10.0, -10.0})
    {
        d = 0.125 * d + 0.875 * x;
    }
    d = 0.125 * d + 0.875 * 2;
    EXPECT_NEAR(d, 0.4996, 1e-4);
    Rtt(cc, 352);
    r *= 1 - 0.8 * d / 20;
    ExpectRate(cc, r);
    EXPECT_EQ(cc->GetNegativeGradientCount(), 0u);
}

TEST(Timely, UpdatesOncePerCompletedSegment)
{
    auto cc = Make(64000);
    Rtt(cc, 100, 64000); // first completed segment: baseline
    Rtt(cc, 600, 32000); // half a segment: no update
    ExpectRate(cc, 100e9);
    Rtt(cc, 600, 32000); // segment complete: Thigh cut with rtt 600 us
    ExpectRate(cc, 100e9 * (1 - 0.8 * (1 - 500.0 / 600.0)));
}

TEST(Timely, DefaultUpdatesOncePerRtt)
{
    auto cc = Make(0);
    auto ack = [&](uint32_t acked, uint32_t sndNxt, double us)
    {
        cc->OnAck(MakeAck(acked, sndNxt, MicroSeconds(int64_t(us))));
    };
    ack(1, 50, 100);  // first update: baseline; the RTT ends when PSN 50 is acknowledged
    ack(20, 60, 600); // same RTT: ignored
    ExpectRate(cc, 100e9);
    ack(51, 100, 600); // next RTT: Thigh cut
    ExpectRate(cc, 100e9 * (1 - 0.8 * (1 - 500.0 / 600.0)));
}
