// Checked unit conversions against their closed forms over the whole range a user can give:
// exact where the result fits, UnitOverflow (never a wrapped value) where it does not.
#include "unit-conversions.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

using fabricsim::UnitOverflow;
using fabricsim::units::BytesAtRatePs;
using fabricsim::units::CheckedAdd;
using fabricsim::units::CheckedMul;
using fabricsim::units::NsToPs;
using fabricsim::units::RoundCount;
using fabricsim::units::RoundPs;
using fabricsim::units::TransmitPs;

namespace
{

/// floor(bytes x 8e12 / bps) in long double (64-bit mantissa: exact to well under 1 ps here).
long double
ClosedFormPs(uint64_t bytes, uint64_t bps)
{
    return std::floor((long double)bytes * 8e12L / (long double)bps);
}

} // namespace

TEST(UnitConversions, TransmitTimeIsExactAcrossSizesAndRates)
{
    // 1 B to 1 TB, and 2 TB, which at 1 Mb/s (1.6e19 ps) no longer fits.
    const uint64_t sizes[] = {1,
                              64,
                              1000,
                              9000,
                              2305843,
                              2305844,
                              3000000,
                              100000000,
                              1000000000,
                              68719476736,
                              1000000000000,
                              2000000000000};
    const uint64_t rates[] = {
        1000000, 1000000000, 25000000000, 100000000000, 400000000000, 800000000000, 3200000000000};
    const long double maxPs = (long double)std::numeric_limits<int64_t>::max();
    int fits = 0;
    int overflows = 0;
    for (uint64_t b : sizes)
    {
        for (uint64_t r : rates)
        {
            const long double expect = ClosedFormPs(b, r);
            if (expect > maxPs)
            {
                EXPECT_THROW(TransmitPs(b, r), UnitOverflow) << b << " B at " << r << " bps";
                ++overflows;
                continue;
            }
            EXPECT_NEAR((long double)TransmitPs(b, r), expect, 1.0L) << b << " B at " << r;
            ++fits;
        }
    }
    EXPECT_GT(fits, 70);
    EXPECT_GE(overflows, 1);
}

TEST(UnitConversions, FlowsPastTwoMegabytesDoNotWrap)
{
    // 3 MB at 100 Gb/s is 240 us; 64-bit bytes x 8e12 wraps it to about 55 us.
    EXPECT_EQ(TransmitPs(3000000, 100000000000), 240000000);
    // The last size whose product fits 64 bits and the first that does not agree with the
    // closed form on both sides of the fast path.
    EXPECT_EQ(TransmitPs(2305843, 1000000000000), 18446744);
    EXPECT_EQ(TransmitPs(2305844, 1000000000000), 18446752);
    // 1 TB at 1 Mb/s: 8e18 ps, still an int64.
    EXPECT_EQ(TransmitPs(1000000000000, 1000000), 8000000000000000000);
}

TEST(UnitConversions, ImpossibleConversionsThrowInsteadOfWrapping)
{
    EXPECT_THROW(TransmitPs(1000, 0), UnitOverflow);
    EXPECT_THROW(TransmitPs(std::numeric_limits<uint64_t>::max(), 1), UnitOverflow);
    EXPECT_THROW(TransmitPs(1200000000000, 1000000), UnitOverflow); // 9.6e18 ps
    const int64_t big = std::numeric_limits<int64_t>::max();
    EXPECT_EQ(CheckedAdd(big - 1, 1, "t"), big);
    EXPECT_THROW(CheckedAdd(big, 1, "t"), UnitOverflow);
    EXPECT_THROW(CheckedMul(uint64_t(1) << 32, uint64_t(1) << 32, "b"), UnitOverflow);
    EXPECT_EQ(CheckedMul(uint64_t(1) << 31, uint64_t(1) << 32, "b"), uint64_t(1) << 63);
    EXPECT_THROW(CheckedAdd(std::numeric_limits<uint64_t>::max(), 1, "b"), UnitOverflow);
    try
    {
        CheckedAdd(big, big, "ideal FCT");
        FAIL() << "no UnitOverflow";
    }
    catch (const UnitOverflow& e)
    {
        EXPECT_STREQ(e.what(),
                     "ideal FCT does not fit 64 bits: 9223372036854775807 + 9223372036854775807");
    }
}

// A model's floating-point times and counts: rounded to nearest where they fit; negatives,
// NaN and values past int64 ps / uint64 counts throw (llround gave LLONG_MIN, a negative time).
TEST(UnitConversions, FloatingPointTimesAndCountsRoundOrThrow)
{
    EXPECT_EQ(RoundPs(0.4, "t"), 0);
    EXPECT_EQ(RoundPs(2.5, "t"), 3);
    EXPECT_EQ(NsToPs(1.0005, "t"), 1001);
    EXPECT_EQ(NsToPs(9.2e15, "t"), 9200000000000000000); // 106 days in ns
    EXPECT_THROW(NsToPs(9.3e15, "t"), UnitOverflow);
    EXPECT_THROW(NsToPs(-1, "t"), UnitOverflow);
    EXPECT_THROW(RoundPs(std::nan(""), "t"), UnitOverflow);
    EXPECT_THROW(RoundPs(std::numeric_limits<double>::infinity(), "t"), UnitOverflow);
    // 64 GiB at 1 GB/s: 68.7 s; 1 TB at 1 B/s does not fit (1e24 ps).
    EXPECT_EQ(BytesAtRatePs(68719476736.0, 1e9, "t"), 68719476736000);
    EXPECT_THROW(BytesAtRatePs(1e12, 1, "t"), UnitOverflow);
    EXPECT_THROW(BytesAtRatePs(1, 0, "t"), UnitOverflow); // inf
    EXPECT_EQ(RoundCount(1.5, "b"), 2u);
    EXPECT_EQ(RoundCount(1e19, "b"), 10000000000000000000u); // above 2^63, below 2^64
    EXPECT_THROW(RoundCount(1.9e19, "b"), UnitOverflow);
    EXPECT_THROW(RoundCount(-0.6, "b"), UnitOverflow);
}
