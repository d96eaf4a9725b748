/*
 * The collective cost model across the sizes a user can ask for, 1 B to 64 GiB: a ring
 * all-reduce on the analytical backend completes at every size, never gets faster as the size
 * grows, stays within 3% of 2 (p - 1) / p x S / B once bandwidth dominates, and costs at least
 * its launch and step latencies when it does not; nccl-tests bandwidths hold their closed forms;
 * and a size that the tile and slice counts cannot hold is rejected instead of wrapping.
 */
#include "analytical-transport.h"
#include "executor-test-util.h"
#include "executor.h"
#include "input-error.h"
#include "nccl-report.h"
#include "test-util.h"

#include <gtest/gtest.h>

namespace fabricsim
{
namespace
{

constexpr int kRanks = 4;
// Payload rate of a 100G link at MTU 1000 with an ACK per frame on the same uplink.
const double kPayloadBps = 12.5e9 * 1000.0 / (1082.0 + 86.0);

/// Large sizes run with big tiles and slices (same bandwidth term, a few thousand messages
/// instead of millions); NCCL's defaults below 1 GiB.
ExecutorConfig
ConfigFor(uint64_t bytes)
{
    ExecutorConfig c;
    if (bytes >= (uint64_t(1) << 30))
    {
        c.m_maxChunkBytes = uint64_t(1) << 30;
        c.m_sliceBytes = uint64_t(128) << 20;
    }
    return c;
}

TEST(CollectiveCostRange, RingAllReduceFrom1ByteTo64GiBFollowsItsClosedForm)
{
    const Schedule ring = test::RingAllReduce(kRanks);
    const ExecutorConfig defaults;
    // Launch, then data crosses the ring 2 (p - 1) times in sequence, two 1 us hops each.
    const double floorPs = double(defaults.m_launchLatencyPs) + 2.0 * (kRanks - 1) * 2e6;
    int64_t previous = 0;
    int checked = 0;
    for (uint64_t bytes = 1; bytes <= (uint64_t(64) << 30); bytes *= 16)
    {
        AnalyticalTransport t(test::SingleSwitch(kRanks));
        const uint64_t s = bytes; // 1, 16, 256, ... 2^36 = 64 GiB
        ExecutionResult r = RunSchedule(t, ring, s, ConfigFor(s));
        ASSERT_TRUE(r.m_complete) << s << " B: " << r.StuckReport();
        const int64_t got = r.DurationPs();
        EXPECT_GE(double(got), floorPs) << s << " B";
        EXPECT_GE(got, previous) << s << " B is faster than a smaller size";
        previous = got;
        const double ideal = 2.0 * (kRanks - 1) / kRanks * double(s) / kPayloadBps * 1e12;
        if (s >= (uint64_t(64) << 20))
        {
            EXPECT_GT(double(got), ideal) << s << " B";
            EXPECT_LT(double(got), ideal * 1.03) << s << " B: " << got << " ps, ideal " << ideal;
        }
        ++checked;
    }
    EXPECT_EQ(checked, 10); // 16^0 .. 16^9 = 64 GiB
    // 64 GiB on 100G: about 11.8 simulated seconds, far past 32-bit microseconds of ps.
    EXPECT_NEAR(double(previous) * 1e-12, 2.0 * 3 / 4 * 68719476736.0 / kPayloadBps, 0.3);
}

TEST(CollectiveCostRange, NcclTestsBandwidthsAtTheEndsOfTheRange)
{
    // algbw = S / t (GB = 1e9 B); busbw = algbw x 2 (n - 1) / n for all-reduce.
    for (uint64_t bytes : {uint64_t(1), uint64_t(64) << 30, uint64_t(1) << 40})
    {
        const double us = 1234.5;
        NcclRow row = MakeNcclRow(CollectiveKind::kAllReduce, 8, bytes, us, 0);
        EXPECT_DOUBLE_EQ(row.m_algbwGbps, double(bytes) / (us * 1e3)) << bytes;
        EXPECT_DOUBLE_EQ(row.m_busbwGbps, row.m_algbwGbps * 2.0 * 7 / 8) << bytes;
    }
}

TEST(CollectiveCostRange, CountsThatWouldWrapAreRejected)
{
    // A 1-byte slice under a 1 TiB chunk: 2^40 slices per step do not fit the step's 32-bit
    // slice count (it wrapped to 0 and the step finished at once).
    AnalyticalTransport t(test::SingleSwitch(kRanks));
    ExecutorConfig c;
    c.m_maxChunkBytes = uint64_t(1) << 40;
    c.m_sliceBytes = 1;
    try
    {
        RunSchedule(t, test::RingAllReduce(kRanks), uint64_t(1) << 42, c);
        FAIL() << "a step of 2^40 one-byte slices ran";
    }
    catch (const InputError& e)
    {
        EXPECT_EQ(e.Field(), "bytes");
        EXPECT_NE(e.Found().find("slice 1 B"), std::string::npos) << e.what();
    }
}

} // namespace
} // namespace fabricsim
