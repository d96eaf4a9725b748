// Rate-based DCTCP against updates computed by hand: line rate 100 Gb/s, g = 1/16, initial
// alpha 1, R_AI 615 Mb/s, base RTT 10 us (window = rate * RTT). PSN boundaries: an RTT ends at
// the first ACK past the sndNxt recorded at the previous alpha update; CWR ends when the data
// sent before the cut is acknowledged.
#include "cc-scenario.h"

#include "ns3/dctcp.h"

#include <gtest/gtest.h>

using namespace ns3;
using fabricsim::test::MakeAck;

namespace
{

void
Ack(Ptr<Dctcp> cc, uint32_t acked, uint32_t sndNxt, bool ece)
{
    cc->OnAck(MakeAck(acked, sndNxt, MicroSeconds(10), ece));
}

} // namespace

TEST(Dctcp, AlphaPerRttCutOncePerWindowAndAdditiveIncrease)
{
    auto cc = CreateObject<Dctcp>();
    cc->Init(100000000000ULL, MicroSeconds(10), 1000);
    EXPECT_FALSE(cc->NeedsInt());

    // ACK 1 ends the first "RTT" (1 > 0): alpha = 15/16 * 1 + 1/16 * 0 = 0.9375; +R_AI is capped
    // at line rate. Boundary is now 50.
    Ack(cc, 1, 50, false);
    EXPECT_DOUBLE_EQ(cc->GetAlpha(), 0.9375);
    EXPECT_EQ(cc->GetRateBps(), 100000000000ULL);
    EXPECT_EQ(cc->GetWindowBytes(), 125000u); // the BDP at line rate

    // ECN echo outside CWR: R = 100G * (1 - 0.9375 / 2) = 53.125G; CWR until PSN 51 is acked.
    Ack(cc, 2, 51, true);
    double r = 100e9 * (1 - 0.9375 / 2);
    EXPECT_NEAR(double(cc->GetRateBps()), r, 2.0);
    EXPECT_TRUE(cc->InCwr());
    // The window follows: 53.125 Gb/s * 10 us = 66406.25 B.
    EXPECT_EQ(cc->GetWindowBytes(), 66406u);

    // A second echo inside CWR: no second cut.
    Ack(cc, 3, 52, true);
    EXPECT_NEAR(double(cc->GetRateBps()), r, 2.0);

    // ACK 51 ends CWR (51 >= 51) and the RTT (51 > 50): 2 of 3 ACKs echoed ECN,
    // alpha = 15/16 * 0.9375 + 1/16 * 2/3; no echo on this ACK: R += 615 Mb/s.
    Ack(cc, 51, 100, false);
    double alpha = 15.0 / 16 * 0.9375 + 1.0 / 16 * 2.0 / 3.0;
    EXPECT_NEAR(cc->GetAlpha(), alpha, 1e-12);
    EXPECT_FALSE(cc->InCwr());
    r += 615e6;
    EXPECT_NEAR(double(cc->GetRateBps()), r, 2.0);

    // Next echo cuts by the new alpha.
    Ack(cc, 52, 101, true);
    r *= 1 - alpha / 2;
    EXPECT_NEAR(double(cc->GetRateBps()), r, 2.0);

    // ACK 101: CWR over, RTT over with 1 echo in 2 ACKs, and + R_AI.
    Ack(cc, 101, 150, false);
    alpha = 15.0 / 16 * alpha + 1.0 / 16 * 0.5;
    EXPECT_NEAR(cc->GetAlpha(), alpha, 1e-12);
    r += 615e6;
    EXPECT_NEAR(double(cc->GetRateBps()), r, 2.0);

    // A clean RTT: alpha decays by 15/16 and the rate grows once more.
    Ack(cc, 151, 200, false);
    EXPECT_NEAR(cc->GetAlpha(), 15.0 / 16 * alpha, 1e-12);
    EXPECT_NEAR(double(cc->GetRateBps()), r + 615e6, 2.0);
}
