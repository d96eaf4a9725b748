/*
 * Generated schedules on the executor: every one completes with NCCL's 8 slots per connection
 * and with a single slot (the validator's FIFOs are unbounded, so a schedule whose
 * threadblocks each send twice before either receives would pass it yet hang on real
 * buffers), and the algorithms keep their textbook cost ordering on one switch.
 */
#include "analytical-transport.h"
#include "executor-test-util.h"
#include "executor.h"
#include "generators.h"

#include <gtest/gtest.h>

namespace fabricsim
{
namespace
{

using K = CollectiveKind;

/// Runs \p s for \p bytes over ideal independent pipes (12.5 GB/s, 1 us).
ExecutionResult
RunOnPipes(const Schedule& s, uint64_t bytes, uint32_t slots)
{
    test::PipeTransport transport(s.m_ranks, 0.0125, 1000000);
    ExecutorConfig config;
    config.m_slots = slots;
    Executor executor(transport, s, config);
    executor.Start(bytes);
    transport.Run();
    return executor.Result();
}

TEST(GeneratorsOnExecutor, EveryScheduleCompletesWithBoundedSlots)
{
    for (K kind :
         {K::kAllReduce, K::kAllGather, K::kReduceScatter, K::kAllToAll, K::kBroadcast, K::kReduce})
    {
        for (const auto& algo : AlgorithmsFor(kind))
        {
            for (int n : {2, 3, 5, 8, 12})
            {
                for (const auto& [channels, chunks] : {std::make_pair(1, 1), std::make_pair(2, 3)})
                {
                    GeneratorOptions opt;
                    opt.channels = channels;
                    opt.chunksPerRank = chunks;
                    opt.root = uint32_t(n - 1);
                    if (algo == "hierarchical")
                    {
                        if (n % 2 != 0)
                        {
                            continue;
                        }
                        opt.localSize = n % 4 == 0 ? 4 : 2;
                    }
                    const Schedule s = GenerateSchedule(kind, algo, n, opt);
                    for (uint32_t slots : {8u, 1u})
                    {
                        for (uint64_t bytes : {uint64_t(4096), uint64_t(64) << 20})
                        {
                            const ExecutionResult r = RunOnPipes(s, bytes, slots);
                            EXPECT_TRUE(r.m_complete)
                                << algo << " " << ToString(kind) << " n=" << n
                                << " channels=" << channels << " chunks=" << chunks
                                << " slots=" << slots << " bytes=" << bytes << "\n"
                                << r.StuckReport(4);
                        }
                    }
                }
            }
        }
    }
}

/// Runs \p s for \p bytes on the analytical backend: one 100 Gbps switch, 1 us links.
int64_t
RunOnSwitch(const Schedule& s, uint64_t bytes)
{
    AnalyticalTransport transport(test::SingleSwitch(s.m_ranks));
    Executor executor(transport, s, ExecutorConfig{});
    executor.Start(bytes);
    transport.Run();
    EXPECT_TRUE(executor.Complete()) << s.m_name;
    return executor.Result().DurationPs();
}

TEST(GeneratorsOnExecutor, TextbookCostOrdering)
{
    const int n = 16;
    auto time = [n](K kind, const char* algo, uint64_t bytes)
    {
        return RunOnSwitch(GenerateSchedule(kind, algo, n), bytes);
    };
    // Small allreduce is latency-bound: recursive doubling's log n rounds beat the ring's
    // 2(n - 1). Large allreduce is bandwidth-bound: the ring (2(n-1)/n of the buffer per rank)
    // beats recursive doubling (the whole buffer log n times), Rabenseifner matches the ring.
    EXPECT_LT(time(K::kAllReduce, "rd", 4096), time(K::kAllReduce, "ring", 4096));
    const uint64_t big = uint64_t(64) << 20;
    const int64_t ring = time(K::kAllReduce, "ring", big);
    EXPECT_LT(ring, time(K::kAllReduce, "rd", big));
    EXPECT_NEAR(double(time(K::kAllReduce, "rhd", big)), double(ring), 0.05 * double(ring));
    // Small alltoall: Bruck's log n rounds beat pairwise's n - 1 rounds; direct (all peers at
    // once) beats both on a full-bisection switch.
    const int64_t bruck = time(K::kAllToAll, "bruck", 16384);
    EXPECT_LT(bruck, time(K::kAllToAll, "pairwise", 16384));
    EXPECT_LT(time(K::kAllToAll, "direct", 16384), bruck);
}

} // namespace
} // namespace fabricsim
