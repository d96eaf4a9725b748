// Congestion-control arithmetic across the whole range a user can give: line rates 1 Mb/s to
// 3.2 Tb/s, base RTTs 1 us to 10 ms, MTUs 256 B to 9 KB, and feedback far outside the normal
// (RTTs of 1 ps and 1 s, 2^40 acknowledged bytes, full INT queues). Every algorithm keeps its
// rate within [MinRate, line rate] and its window at least one byte, and matches its closed form
// where one exists; a model that computes NaN stops instead of sending at an arbitrary rate.
#include "cc-scenario.h"
#include "unit-conversions.h"

#include "ns3/config.h"
#include "ns3/data-rate.h"
#include "ns3/double.h"
#include "ns3/simulator.h"
#include "ns3/string.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

using namespace ns3;
using fabricsim::test::MakeAck;

namespace
{

const uint64_t kRates[] = {1000000ULL, 10000000ULL, 100000000000ULL, 3200000000000ULL};
const int64_t kRttsUs[] = {1, 100, 10000};
const uint32_t kMtus[] = {256, 9000};

uint64_t
MinRateOf(Ptr<CongestionControl> cc)
{
    DataRateValue v;
    return cc->GetAttributeFailSafe("MinRate", v) ? v.Get().GetBitRate() : 0;
}

/// The invariants every update must keep.
void
ExpectInRange(Ptr<CongestionControl> cc, const std::string& where)
{
    const uint64_t line = cc->GetLineRateBps();
    const uint64_t lo = std::min(MinRateOf(cc), line);
    EXPECT_GE(cc->GetRateBps(), lo) << where;
    EXPECT_LE(cc->GetRateBps(), line) << where;
    if (cc->Name() == "hpcc" || cc->Name() == "swift")
    {
        EXPECT_GE(cc->GetWindowBytes(), 1u) << where; // 0 would mean "no window"
    }
}

/// One-hop INT stack at \p tsPs with \p txBytes sent and \p qlen queued.
std::vector<IntHop>
Hop(uint64_t rateBps, uint64_t tsPs, uint64_t txBytes, uint32_t qlen)
{
    IntHop h;
    h.rateBps = rateBps;
    h.tsPs = tsPs;
    h.txBytes = txBytes;
    h.qlenBytes = qlen;
    return {h};
}

/// Extreme feedback in a fixed order: ACKs of every size and delay, ECN, CNPs, NACKs,
/// timeouts, INT stacks that say the path is idle and that it is hopelessly overloaded.
/// Returns the lowest rate seen.
uint64_t
Stress(Ptr<CongestionControl> cc, const std::string& where)
{
    const int64_t rtts[] = {1, 1000000, 1000000000, 1000000000000}; // ps: 1 ps .. 1 s
    const uint64_t acked[] = {0, 1, 1000, uint64_t(1) << 40};
    uint32_t psn = 1;
    uint64_t ts = 1000000;
    uint64_t tx = 0;
    const uint64_t line = cc->GetLineRateBps();
    uint64_t lowest = cc->GetRateBps();
    for (int round = 0; round < 6; ++round)
    {
        for (int64_t rtt : rtts)
        {
            for (uint64_t bytes : acked)
            {
                const bool ece = (psn % 3) == 0;
                AckSample a = MakeAck(psn, psn + 8, PicoSeconds(rtt), ece, bytes);
                a.hops = 3;
                // INT: alternately an idle port and one with a full queue and 2^40 bytes sent.
                std::vector<IntHop> hops
                    = Hop(line, ts, tx, (psn % 2) ? 0 : std::numeric_limits<uint32_t>::max());
                a.intHops = &hops;
                cc->OnAck(a);
                ExpectInRange(cc, where + " ack rtt " + std::to_string(rtt) + " ps");
                lowest = std::min(lowest, cc->GetRateBps());
                psn += 4;
                ts += uint64_t(rtt) + 1;
                tx += (psn % 2) ? 0 : uint64_t(1) << 40;
            }
        }
        cc->OnCnp();
        ExpectInRange(cc, where + " cnp");
        lowest = std::min(lowest, cc->GetRateBps());
        if (round % 2)
        {
            cc->OnNack();
            cc->OnTimeout();
            ExpectInRange(cc, where + " nack/timeout");
        }
    }
    // Timers (DCQCN's rate increase) run to completion.
    Simulator::Stop(MilliSeconds(20));
    Simulator::Run();
    ExpectInRange(cc, where + " after timers");
    return lowest;
}

} // namespace

TEST(CcRange, EveryAlgorithmStaysInRangeAcrossRatesRttsAndMtus)
{
    int cases = 0;
    for (const std::string name : {"dcqcn", "dctcp", "timely", "hpcc", "swift"})
    {
        for (uint64_t rate : kRates)
        {
            for (int64_t rttUs : kRttsUs)
            {
                for (uint32_t mtu : kMtus)
                {
                    Ptr<CongestionControl> cc
                        = CongestionControlFactory::Get(name).Create<CongestionControl>();
                    cc->Init(rate, MicroSeconds(rttUs), mtu);
                    const std::string where = name + " " + std::to_string(rate) + " bps, "
                                              + std::to_string(rttUs) + " us, MTU "
                                              + std::to_string(mtu);
                    EXPECT_EQ(cc->GetRateBps(), rate) << where << ": starts at line rate";
                    ExpectInRange(cc, where + " init");
                    const uint64_t lowest = Stress(cc, where);
                    if (MinRateOf(cc) < rate)
                    {
                        // The overload feedback must have cut the rate: the stress is real.
                        EXPECT_LT(lowest, rate) << where;
                    }
                    Simulator::Destroy();
                    ++cases;
                }
            }
        }
    }
    EXPECT_EQ(cases, 5 * 4 * 3 * 2);
}

// Window-based algorithms start at the bandwidth-delay product and send at window x 8 / RTT:
// at 3.2 Tb/s and 10 ms that is 4 GB, far past 32 bits.
TEST(CcRange, WindowAlgorithmsStartAtTheBdpAndPaceAtWindowOverRtt)
{
    for (const std::string name : {"hpcc", "swift"})
    {
        for (uint64_t rate : kRates)
        {
            for (int64_t rttUs : kRttsUs)
            {
                Ptr<CongestionControl> cc
                    = CongestionControlFactory::Get(name).Create<CongestionControl>();
                cc->Init(rate, MicroSeconds(rttUs), 1000);
                const double t = double(rttUs) * 1e-6;
                const double bdp = double(rate) * t / 8.0;
                const std::string where
                    = name + " " + std::to_string(rate) + " bps, " + std::to_string(rttUs) + " us";
                EXPECT_NEAR(double(cc->GetWindowBytes()), std::max(1.0, bdp), 1.0) << where;
                // After an update the rate follows the window (unless clamped at MinRate).
                Stress(cc, where);
                const double w = double(cc->GetWindowBytes());
                if (cc->GetRateBps() > MinRateOf(cc) && cc->GetRateBps() < rate)
                {
                    EXPECT_NEAR(double(cc->GetRateBps()), w * 8.0 / t, 8.0 / t + 1.0) << where;
                }
                Simulator::Destroy();
            }
        }
    }
}

// DCQCN's first CNP: alpha <- (1 - g) alpha0 + g, rate <- line x (1 - alpha / 2), here at
// 3.2 Tb/s where line x 8e12-style products would not fit 64 bits.
TEST(CcRange, DcqcnFirstCutIsTheClosedForm)
{
    for (uint64_t rate : kRates)
    {
        Ptr<CongestionControl> cc
            = CongestionControlFactory::Get("dcqcn").Create<CongestionControl>();
        cc->Init(rate, MicroSeconds(10), 1000);
        DoubleValue g;
        DoubleValue alpha0;
        ASSERT_TRUE(cc->GetAttributeFailSafe("G", g));
        ASSERT_TRUE(cc->GetAttributeFailSafe("InitialAlpha", alpha0));
        cc->OnCnp();
        const double alpha = (1 - g.Get()) * alpha0.Get() + g.Get();
        const double expect
            = std::max(double(rate) * (1 - alpha / 2), double(std::min(MinRateOf(cc), rate)));
        EXPECT_NEAR(double(cc->GetRateBps()), std::floor(expect), 1.0) << rate;
        Simulator::Destroy();
    }
}

// Values that made the arithmetic undefined are rejected where they are set: a zero
// normalisation RTT divided by zero (Timely's gradient became NaN) and a zero alpha period
// divided by zero (DCQCN crashed with SIGFPE on its first CNP).
TEST(CcRange, DivisorAttributesMustBePositive)
{
    Ptr<CongestionControl> timely
        = CongestionControlFactory::Get("timely").Create<CongestionControl>();
    EXPECT_FALSE(timely->SetAttributeFailSafe("MinRtt", TimeValue(Seconds(0))));
    EXPECT_TRUE(timely->SetAttributeFailSafe("MinRtt", TimeValue(NanoSeconds(1))));
    // The checkers exist before picosecond resolution is set, so their floor is 1 ns.
    EXPECT_FALSE(timely->SetAttributeFailSafe("MinRtt", TimeValue(PicoSeconds(999))));
    EXPECT_FALSE(timely->SetAttributeFailSafe("Tlow", TimeValue(MicroSeconds(-1))));
    Ptr<CongestionControl> dcqcn
        = CongestionControlFactory::Get("dcqcn").Create<CongestionControl>();
    EXPECT_FALSE(dcqcn->SetAttributeFailSafe("AlphaPeriod", TimeValue(Seconds(0))));
    EXPECT_FALSE(dcqcn->SetAttributeFailSafe("RateIncreasePeriod", TimeValue(Seconds(0))));
    EXPECT_TRUE(dcqcn->SetAttributeFailSafe("RateDecreasePeriod", TimeValue(Seconds(0))));
}

namespace
{

/// A model whose arithmetic goes wrong, to see what the base class does with it.
class NanModel : public CongestionControl
{
  public:
    std::string Name() const override
    {
        return "nan-model";
    }

    void Feed(double bps, double bytes)
    {
        SetRateFromModel(bps);
        SetWindowFromModel(bytes);
    }
};

} // namespace

TEST(CcRange, ModelValuesOutsideUint64AreClampedAndNanStops)
{
    Ptr<NanModel> m = CreateObject<NanModel>();
    m->Init(400000000000ULL, MicroSeconds(10), 1000);
    m->Feed(1e30, 1e30); // past 2^64: the line rate, the largest window
    EXPECT_EQ(m->GetRateBps(), 400000000000ULL);
    EXPECT_EQ(m->GetWindowBytes(), uint64_t(1) << 63);
    m->Feed(-5, -5); // below 0: the floor, one byte
    EXPECT_EQ(m->GetRateBps(), 0u);
    EXPECT_EQ(m->GetWindowBytes(), 1u);
    EXPECT_THROW(m->Feed(std::nan(""), 1000), fabricsim::UnitOverflow);
    EXPECT_THROW(m->Feed(1e9, std::nan("")), fabricsim::UnitOverflow);
}
