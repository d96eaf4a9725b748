// KV-cache sizing from HBM and the paged block allocator.

#include "input-error.h"
#include "kv-cache.h"
#include "serving-test-util.h"

#include <gtest/gtest.h>

#include <cmath>

namespace fabricsim
{
namespace
{

using nlohmann::json;

// Llama-3-70B at TP 8 on H100: each rank holds 1/8 of the weights (norms are replicated, a few
// hundred kB), the KV gets what is left of 90% of 80 GB after weights and the profiling
// activations, in blocks of 16 tokens x 40,960 B (327,680 B / 8 KV heads per rank).
TEST(KvCache, CapacityIsWhatHbmLeavesAfterWeightsAndActivations)
{
    InferenceScenario sc = MakeScenario({{"model", "Llama-3-70B"}, {"parallelism", {{"tp", 8}}}});
    double w = WeightBytesPerRank(sc.model, sc.pool.par, 0);
    // The layer norms (2 L H) and the final norm (H) are replicated, not split.
    double norms = 2.0 * 80 * 8192 + 8192;
    EXPECT_DOUBLE_EQ(w, sc.model.WeightBytes() / 8 + norms * 2 * 7 / 8);
    double act = ActivationBytesPerRank(sc.model, sc.pool.par, 8192, 256);
    // 8192 x 2 B x (2 x 8192 + (64 + 16) x 128 / 8 + 2 x 28672 / 8) + 256 x 16032 x 4
    double expectAct = 8192.0 * 2 * (2 * 8192 + 80 * 128 / 8 + 2 * 28672 / 8) + 256.0 * 16032 * 4;
    EXPECT_DOUBLE_EQ(act, expectAct);
    KvCacheBudget b = KvCacheBudget::Compute(sc.model, sc.hw, sc.pool.par, sc.pool.batching, sc.kv);
    EXPECT_DOUBLE_EQ(b.kvBytesPerToken, 40960);
    EXPECT_DOUBLE_EQ(b.kvBytesPerRank, 72e9 - w - act);
    EXPECT_EQ(b.numBlocks, uint64_t(std::floor((72e9 - w - act) / (16 * 40960.0))));
    EXPECT_GT(b.Tokens(), 1200000u); // about 53 GB of KV: 1.3 M tokens
    EXPECT_LT(b.Tokens(), 1400000u);

    // Less memory for the engine, fewer blocks; PP halves the layers per rank and with them
    // both the weights and the KV bytes per token.
    sc.kv.gpuMemoryUtilization = 0.5;
    EXPECT_LT(
        KvCacheBudget::Compute(sc.model, sc.hw, sc.pool.par, sc.pool.batching, sc.kv).numBlocks,
        b.numBlocks / 2);
    ParallelismSpec pp = sc.pool.par;
    pp.pp = 2;
    sc.kv.gpuMemoryUtilization = 0.9;
    KvCacheBudget b2 = KvCacheBudget::Compute(sc.model, sc.hw, pp, sc.pool.batching, sc.kv);
    EXPECT_DOUBLE_EQ(b2.kvBytesPerToken, 20480);
    EXPECT_LT(b2.weightBytes, 0.52 * w);
    EXPECT_GT(b2.numBlocks, 2 * b.numBlocks);
}

TEST(KvCache, ModelThatDoesNotFitIsAnInputError)
{
    InferenceScenario sc = MakeScenario({{"model", "Llama-3-70B"}, {"parallelism", {{"tp", 1}}}});
    try
    {
        KvCacheBudget::Compute(
            sc.model, sc.hw, sc.pool.par, sc.pool.batching, sc.kv, "s.json", "parallelism");
        FAIL() << "no error";
    }
    catch (const fabricsim::InputError& e)
    {
        EXPECT_EQ(e.Field(), "parallelism");
        EXPECT_NE(std::string(e.what()).find("141 GB of weights"), std::string::npos) << e.what();
    }
}

TEST(KvCache, OffloadTierCapacityAndBlockOverride)
{
    InferenceScenario sc = MakeScenario(
        {{"serving", {{"kv_cache", {{"placement", "host"}, {"capacity", "100GB"}}}}}});
    KvCacheBudget b = KvCacheBudget::Compute(sc.model, sc.hw, sc.pool.par, sc.pool.batching, sc.kv);
    EXPECT_EQ(b.numBlocks, uint64_t(100e9 / (16 * 131072.0)));
    sc.kv.numBlocksOverride = 10;
    EXPECT_EQ(
        KvCacheBudget::Compute(sc.model, sc.hw, sc.pool.par, sc.pool.batching, sc.kv).numBlocks,
        10u);
}

// A tier too large for 64-bit block counts (1e30 B: 4.8e23 blocks) does not limit the cache
// rather than converting out of range (undefined; on x86 it gave 2^63 or 0).
TEST(KvCache, TierPastSixtyFourBitBlockCountsDoesNotLimit)
{
    InferenceScenario sc = MakeScenario(
        {{"serving", {{"kv_cache", {{"placement", "host"}, {"capacity", "100GB"}}}}}});
    sc.kv.tierCapacityBytes = 1e30;
    KvCacheBudget b = KvCacheBudget::Compute(sc.model, sc.hw, sc.pool.par, sc.pool.batching, sc.kv);
    EXPECT_EQ(b.numBlocks, UINT64_MAX);
    sc.kv.tierCapacityBytes = 1e22; // 4.8e15 blocks: fits, and is exact to double precision
    b = KvCacheBudget::Compute(sc.model, sc.hw, sc.pool.par, sc.pool.batching, sc.kv);
    EXPECT_NEAR(double(b.numBlocks), 1e22 / (16 * 131072.0), 1.0);
}

TEST(KvCache, ExpertParallelRanksHoldTheirExpertsOnly)
{
    InferenceScenario sc = MakeScenario({{"model", "Qwen3-30B-A3B"}, {"parallelism", {{"tp", 4}}}});
    ParallelismSpec ep = sc.pool.par;
    ep.ep = 4;
    double tpOnly = WeightBytesPerRank(sc.model, sc.pool.par, 0);
    double withEp = WeightBytesPerRank(sc.model, ep, 0);
    // Experts split 4 ways either way; with EP the (absent) shared expert and the router are
    // replicated rather than split, so the two are close.
    EXPECT_NEAR(withEp / tpOnly, 1.0, 0.01);
    EXPECT_NEAR(tpOnly, sc.model.WeightBytes() / 4, 0.01 * sc.model.WeightBytes() / 4);
}

TEST(BlockAllocator, GrowsInBlocksAndFrees)
{
    BlockAllocator a(10, 16);
    EXPECT_EQ(a.BlocksFor(0), 0u);
    EXPECT_EQ(a.BlocksFor(16), 1u);
    EXPECT_EQ(a.BlocksFor(17), 2u);
    EXPECT_TRUE(a.Grow(1, 100)); // 7 blocks
    EXPECT_EQ(a.Held(1), 7u);
    EXPECT_EQ(a.FreeBlocks(), 3u);
    EXPECT_TRUE(a.Grow(1, 112)); // still 7
    EXPECT_EQ(a.FreeBlocks(), 3u);
    EXPECT_FALSE(a.Grow(2, 64)); // 4 blocks do not fit
    EXPECT_EQ(a.Held(2), 0u);
    EXPECT_TRUE(a.Grow(2, 48));
    EXPECT_EQ(a.FreeBlocks(), 0u);
    a.Free(1);
    EXPECT_EQ(a.FreeBlocks(), 7u);
    EXPECT_EQ(a.UsedBlocks(), 3u);
}

} // namespace
} // namespace fabricsim
