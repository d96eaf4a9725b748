// KV-cache groups of a model with sliding-window layers: one block pool, a block spanning a
// group's layers, sliding groups freeing what falls out of the window (vLLM's hybrid KV-cache
// manager; the worked example of its design doc, docs/design/hybrid_kv_cache_manager.md).

#include "kv-cache.h"
#include "serving-test-util.h"

#include <gtest/gtest.h>

#include <cmath>

namespace fabricsim
{
namespace
{

using nlohmann::json;

/// Llama-3-8B's shape with \p sliding of its 32 layers windowed at \p window tokens.
ModelSpec
Windowed(uint32_t sliding, uint32_t window)
{
    json c = ModelSpec::PresetConfig("Llama-3-8B");
    c["sliding_window"] = window;
    c["layer_types"] = json::array();
    for (uint32_t l = 0; l < 32; ++l)
    {
        c["layer_types"].push_back(l < sliding ? "sliding_attention" : "full_attention");
    }
    return ModelSpec::FromConfig(c);
}

} // namespace

// The design doc's example: 10 full and 20 sliding layers, block size 16, window 32, a request
// of 112 tokens: 7 blocks for the full group and 2 for each of the two sliding groups, 11.
TEST(KvCacheGroups, TheDesignDocExample)
{
    KvCacheGroups g;
    g.layersPerGroup = 10;
    g.full = 1;
    g.sliding = 2;
    g.window = 32;
    EXPECT_EQ(g.Blocks(112, 112, 16), 11u);
    // While its prompt is computed nothing has left the window yet: 7 blocks a group.
    EXPECT_EQ(g.Blocks(112, 0, 16), 21u);
    // Tokens before computed - 31 are skipped: at 48 computed, 17 skipped, block 0 goes.
    EXPECT_EQ(g.Blocks(64, 48, 16), 4u + 2 * 3);

    BlockAllocator a(30, 16, g);
    EXPECT_TRUE(a.Grow(1, 112, 0));
    EXPECT_EQ(a.Held(1), 21u);
    EXPECT_TRUE(a.Grow(1, 113, 112)); // the first decode step: sliding blocks go back
    EXPECT_EQ(a.Held(1), 8u + 2 * 3);
    EXPECT_EQ(a.FreeBlocks(), 30u - 14);
    EXPECT_FALSE(a.Grow(2, 200, 0)); // 13 x 3 = 39 blocks do not fit
    EXPECT_EQ(a.Held(2), 0u);
    a.Free(1);
    EXPECT_EQ(a.UsedBlocks(), 0u);
}

// Whether a request fits, one rule for every model, at the extremes of its token count: a
// request of 2^64 - 1 tokens needs ceil((2^64 - 1) / 16) blocks of a full group.
TEST(KvCacheGroups, HoldsAtTheExtremes)
{
    KvCacheBudget b;
    b.blockSize = 16;
    b.groups.layersPerGroup = 32; // full layers only
    const uint64_t most = UINT64_MAX;
    EXPECT_TRUE(b.Holds(most, 8192, most / 16 + 1));
    EXPECT_FALSE(b.Holds(most, 8192, most / 16));
    EXPECT_TRUE(b.Holds(16, 8192, 1));
    EXPECT_FALSE(b.Holds(17, 8192, 1));
    EXPECT_TRUE(b.Holds(0, 8192, 0));
    // Sliding and linear groups: the window's blocks at most, one a linear group.
    b.groups = KvCacheGroups::Of(ModelSpec::Preset("Gemma-3-27B"));
    EXPECT_TRUE(b.Holds(most, 1024, most / 16 + 1 + 6 * (2048 / 16 + 1)));
    EXPECT_FALSE(b.Holds(most, 1024, most / 16 + 6 * (2048 / 16 + 1)));
}

// Grouping as vLLM does it: layers per group the smallest count of a kind, the last group of
// a kind padded. Gemma-3-27B: 10 global and 52 local layers, 1 + 6 groups of 10.
TEST(KvCacheGroups, GroupSizeIsTheSmallestKindsLayerCount)
{
    KvCacheGroups g = KvCacheGroups::Of(ModelSpec::Preset("Gemma-3-27B"));
    EXPECT_EQ(g.layersPerGroup, 10u);
    EXPECT_EQ(g.full, 1u);
    EXPECT_EQ(g.sliding, 6u);
    EXPECT_EQ(g.window, 1024u);
    g = KvCacheGroups::Of(Windowed(16, 128)); // gpt-oss's 1 : 1
    EXPECT_EQ(g.layersPerGroup, 16u);
    EXPECT_EQ(g.full, 1u);
    EXPECT_EQ(g.sliding, 1u);
    g = KvCacheGroups::Of(Windowed(32, 4096)); // Mistral: one sliding group of every layer
    EXPECT_EQ(g.layersPerGroup, 32u);
    EXPECT_EQ(g.full, 0u);
    EXPECT_EQ(g.sliding, 1u);
    g = KvCacheGroups::Of(ModelSpec::Preset("Llama-3-8B")); // full only: all layers, one group
    EXPECT_EQ(g.layersPerGroup, 32u);
    EXPECT_EQ(g.full, 1u);
    EXPECT_EQ(g.sliding, 0u);
}

// The budget: a block of Gemma-3-27B spans 10 layers, not 62, so the same bytes hold 6.2 times
// the blocks; a 16k-token sequence then takes 1,024 + 6 x 64 blocks instead of 1,024 of the
// larger ones: 4.51x the sequences of that length fit.
TEST(KvCacheGroups, BudgetCountsBlocksOfAGroup)
{
    InferenceScenario sc = MakeScenario({{"model", "Gemma-3-27B"}, {"hardware", "H200"}});
    const KvCacheBudget b
        = KvCacheBudget::Compute(sc.model, sc.hw, sc.pool.par, sc.pool.batching, sc.kv);
    const double perBlock = 16 * 10 * 8192.0; // 16 tokens x 10 layers x 8,192 B
    EXPECT_EQ(b.numBlocks, uint64_t(std::floor(b.kvBytesPerRank / perBlock)));
    json global = ScenarioJson({{"hardware", "H200"}});
    global["model"] = {{"preset", "Gemma-3-27B"}, {"sliding_window", nullptr}};
    InferenceScenario all = InferenceScenario::FromJson(global, "g.json");
    const KvCacheBudget ball
        = KvCacheBudget::Compute(all.model, all.hw, all.pool.par, all.pool.batching, all.kv);
    EXPECT_EQ(ball.groups.sliding, 0u);
    EXPECT_DOUBLE_EQ(ball.kvBytesPerRank, b.kvBytesPerRank);
    EXPECT_EQ(ball.numBlocks, uint64_t(std::floor(b.kvBytesPerRank / (16 * 62 * 8192.0))));
    const double windowed = double(b.numBlocks) / double(b.groups.Blocks(16384, 16384, 16));
    const double full = double(ball.numBlocks) / double(ball.groups.Blocks(16384, 16384, 16));
    EXPECT_EQ(b.groups.Blocks(16384, 16384, 16), 1024u + 6 * 64);
    EXPECT_NEAR(windowed / full, 62.0 / 10 * 1024 / (1024 + 6 * 64), 0.001);
}

} // namespace fabricsim
