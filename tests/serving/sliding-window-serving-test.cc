// A 16k-token prompt on a sliding-window model against the same model with every layer global:
// TTFT, TPOT and the KV budget move in the direction and by the amount a hand calculation from
// the config says (Gemma-3-27B on one H200, no calibration: the roofline prices each op).

#include "serving-test-util.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace fabricsim
{
namespace
{

using nlohmann::json;

constexpr double kPrompt = 16384;
constexpr uint32_t kOutput = 17;
constexpr double kPerKey = 2 * 32 * (128 + 128); // attention FLOPs per query and key seen
constexpr double kKvPerToken = 8192;             // bytes per token and layer
constexpr double kActivation = 32 * 256 * 2;     // q and output bytes per token and layer

/// One request of a 16k prompt, one prefill step, on Gemma-3-27B with \p model's overrides.
ServingResult
RunGemma(const json& model)
{
    json patch
        = {{"hardware", "H200"},
           {"serving",
            {{"batching", {{"max_num_batched_tokens", 16384}}},
             {"requests",
              {{"count", 1}, {"prompt_tokens", uint64_t(kPrompt)}, {"output_tokens", kOutput}}}}}};
    json j = ScenarioJson(patch);
    j["model"] = model; // set, not merged: a merge patch would drop its nulls
    return RunOnFake(InferenceScenario::FromJson(j, "sliding.json"));
}

/// Roofline time (ns) of one attention op of \p flops and \p bytes on \p hw.
double
AttentionNs(const HardwareSpec& hw, double flops, double bytes)
{
    return std::max(flops / hw.EffectiveFlops(DType::Bf16), bytes / hw.EffectiveHbmBw()) * 1e9;
}

} // namespace

TEST(SlidingWindowServing, LongPromptTtftTpotAndBudget)
{
    const ServingResult local = RunGemma({{"preset", "Gemma-3-27B"}});
    const ServingResult global = RunGemma({{"preset", "Gemma-3-27B"}, {"sliding_window", nullptr}});
    ASSERT_TRUE(local.requests[0].Finished());
    ASSERT_TRUE(global.requests[0].Finished());
    const HardwareSpec hw = HardwareSpec::Preset("H200");

    // Prefill: each of the 52 local layers' queries see at most 1,024 keys instead of p + 1.
    const double keysLocal = 1024.0 * 1025 / 2 + (kPrompt - 1024) * 1024;
    const double keysGlobal = kPrompt * (kPrompt + 1) / 2;
    const double bytes = kPrompt * (kKvPerToken + kActivation);
    const double prefillSaved = 52
                                * (AttentionNs(hw, kPerKey * keysGlobal, bytes)
                                   - AttentionNs(hw, kPerKey * keysLocal, bytes));
    const double ttftSaved = global.requests[0].TtftMs() - local.requests[0].TtftMs();
    EXPECT_GT(prefillSaved, 1e6); // over a millisecond
    EXPECT_NEAR(ttftSaved * 1e6, prefillSaved, 0.01 * prefillSaved);

    // Decode at context c: a local layer reads 1,023 cached tokens' KV, not c.
    double decodeSaved = 0;
    for (uint32_t k = 0; k + 1 < kOutput; ++k)
    {
        const double c = kPrompt + k;
        const double keys = kPerKey * (c + 1);
        decodeSaved += AttentionNs(hw, keys, (c + 1) * kKvPerToken + kActivation)
                       - AttentionNs(hw, kPerKey * 1024, 1024 * kKvPerToken + kActivation);
    }
    decodeSaved *= 52.0 / (kOutput - 1);
    const double tpotSaved = global.requests[0].TpotMs() - local.requests[0].TpotMs();
    EXPECT_GT(decodeSaved, 1e3); // over a microsecond a token
    EXPECT_NEAR(tpotSaved * 1e6, decodeSaved, 0.01 * decodeSaved);

    // The KV budget: a block spans 10 layers instead of 62.
    const double blocksLocal = local.ToJson()["pools"][0]["kv_blocks_per_group"].get<double>();
    const double blocksGlobal = global.ToJson()["pools"][0]["kv_blocks_per_group"].get<double>();
    EXPECT_NEAR(blocksLocal / blocksGlobal, 6.2, 0.001);
}

} // namespace fabricsim
