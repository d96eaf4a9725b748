// A 16k-token prompt on a linear-attention hybrid (Qwen3-Next-80B-A3B, TP 2 on H200, no
// calibration): the prompt's later chunks, the decode steps at long context and the KV budget
// move as a hand calculation from the config says: only the 12 full-attention layers grow
// with context, the 36 Gated DeltaNet layers keep one state a sequence.

#include "kv-cache.h"
#include "serving-test-util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace fabricsim
{
namespace
{

using nlohmann::json;

// Per TP rank (TP 2): 8 query heads of 256 (q/k and v), one KV head: 1,024 B a token and layer.
constexpr double kPerKey = 2 * 8 * (256 + 256);
constexpr double kKvPerToken = 2 * 256 * 2;
constexpr double kActivation = 8 * 512 * 2;

ServingResult
RunQwen3Next(uint64_t prompt, uint32_t output)
{
    json patch
        = {{"model", "Qwen3-Next-80B-A3B"},
           {"hardware", "H200"},
           {"parallelism", {{"tp", 2}}},
           {"serving",
            {{"batching", {{"max_num_batched_tokens", 1024}}},
             {"requests", {{"count", 1}, {"prompt_tokens", prompt}, {"output_tokens", output}}}}}};
    return RunOnFake(MakeScenario(patch));
}

/// Roofline time (ps) of one full layer's attention over \p q new tokens after \p c cached.
double
FullAttentionPs(const HardwareSpec& hw, double q, double c)
{
    const double flops = kPerKey * q * (c + (q + 1) / 2);
    const double bytes = (c + q) * kKvPerToken + q * kActivation;
    return std::max(flops / hw.EffectiveFlops(DType::Bf16), bytes / hw.EffectiveHbmBw()) * 1e12;
}

} // namespace

TEST(LinearAttentionServing, LongPromptChunksDecodeAndBudget)
{
    const HardwareSpec hw = HardwareSpec::Preset("H200");
    const ServingResult r = RunQwen3Next(16384, 9);
    ASSERT_TRUE(r.requests[0].Finished());
    ASSERT_GE(r.steps.size(), 16u + 8);
    // Chunks of 1,024: from the third to the last but one (which samples: the LM head runs),
    // each costs more than the last only by the 12 full layers' attention over 1,024 more
    // cached tokens (the linear layers read and write the same state, the GEMMs see the same
    // 1,024 tokens).
    for (size_t k = 2; k < 15; ++k)
    {
        ASSERT_EQ(r.steps[k].prefillTokens, 1024u) << k;
        const double grew = double(r.steps[k].DurationPs() - r.steps[k - 1].DurationPs());
        const double hand = 12
                            * (FullAttentionPs(hw, 1024, 1024.0 * k)
                               - FullAttentionPs(hw, 1024, 1024.0 * (k - 1)));
        EXPECT_NEAR(grew, hand, 0.01 * hand + 2) << "chunk " << k;
    }

    // Decode at 16k against 1k: the 12 full layers read 15,360 more tokens' KV a step.
    const ServingResult shortPrompt = RunQwen3Next(1024, 9);
    double hand = 0;
    for (uint32_t k = 0; k < 8; ++k)
    {
        hand += FullAttentionPs(hw, 1, 16384.0 + k) - FullAttentionPs(hw, 1, 1024.0 + k);
    }
    hand *= 12.0 / 8 / 1e9; // ms a token
    const double tpotGrew = r.requests[0].TpotMs() - shortPrompt.requests[0].TpotMs();
    EXPECT_NEAR(tpotGrew, hand, 0.01 * hand);

    // The budget: a linear layer's state on a rank, (16 x 128 x 128 + 4,096 x 3) x 2 B = 548,864
    // B, fills an attention block of 16 x ceil(548,864 / (16 x 1,024)) = 544 tokens; a block
    // spans 12 layers (the full layers' count); a sequence holds one block per linear group (3)
    // and ceil(tokens / 544) in the full group.
    const InferenceScenario sc = MakeScenario(
        {{"model", "Qwen3-Next-80B-A3B"}, {"hardware", "H200"}, {"parallelism", {{"tp", 2}}}});
    const KvCacheBudget b
        = KvCacheBudget::Compute(sc.model, sc.hw, sc.pool.par, sc.pool.batching, sc.kv);
    EXPECT_EQ(b.blockSize, 544u);
    EXPECT_EQ(b.groups.layersPerGroup, 12u);
    EXPECT_EQ(b.groups.full, 1u);
    EXPECT_EQ(b.groups.linear, 3u);
    EXPECT_EQ(b.numBlocks, uint64_t(std::floor(b.kvBytesPerRank / (544 * 1024 * 12.0))));
    EXPECT_EQ(b.groups.Blocks(16384, 16384, b.blockSize), 31u + 3);
    // Qwen3.5-397B-A17B at TP 8: a float32 state, (8 x 128 x 128 x 4 + 1,536 x 3 x 2) B =
    // 533,504 B a rank, over 1,024 B a token: 528-token blocks.
    const InferenceScenario q35 = MakeScenario(
        {{"model", "Qwen3.5-397B-A17B"}, {"hardware", "H200"}, {"parallelism", {{"tp", 8}}}});
    EXPECT_EQ(KvCacheBudget::Compute(q35.model, q35.hw, q35.pool.par, q35.pool.batching, q35.kv)
                  .blockSize,
              528u);
}

} // namespace fabricsim
