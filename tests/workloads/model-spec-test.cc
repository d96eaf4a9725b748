#include "../unique-temp-path.h"
#include "error-of.h"
#include "input-error.h"
#include "model-spec.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

using namespace fabricsim;
using nlohmann::json;

namespace
{

/// |a / b - 1| <= tol.
::testing::AssertionResult
Near(double a, double b, double tol)
{
    double rel = std::abs(a / b - 1.0);
    if (rel <= tol)
    {
        return ::testing::AssertionSuccess();
    }
    return ::testing::AssertionFailure() << a << " vs " << b << ": off by " << rel * 100 << "%";
}

} // namespace

// Totals against the reference table (1%), and the exact counts of the public checkpoints.
TEST(ModelPresets, TotalParamsMatchTable)
{
    EXPECT_TRUE(Near(ModelSpec::Preset("Llama-3-8B").TotalParams(), 8.03e9, 0.01));
    EXPECT_TRUE(Near(ModelSpec::Preset("Llama-3-70B").TotalParams(), 70.6e9, 0.01));
    EXPECT_TRUE(Near(ModelSpec::Preset("Llama-3.1-405B").TotalParams(), 405.9e9, 0.01));
    EXPECT_TRUE(Near(ModelSpec::Preset("Mixtral-8x7B").TotalParams(), 46.7e9, 0.01));
    EXPECT_TRUE(Near(ModelSpec::Preset("Qwen3-30B-A3B").TotalParams(), 30.5e9, 0.01));
    EXPECT_TRUE(Near(ModelSpec::Preset("Qwen3-235B-A22B").TotalParams(), 235e9, 0.01));
    EXPECT_TRUE(Near(ModelSpec::Preset("DeepSeek-V3").TotalParams(), 671e9, 0.01));
    // The measured serving runs' models (data/serving/llmservingsim-vllm): Qwen3-32B's card
    // says 32.8B.
    EXPECT_TRUE(Near(ModelSpec::Preset("Qwen3-32B").TotalParams(), 32.8e9, 0.01));
    EXPECT_EQ(ModelSpec::Preset("Llama-3.1-8B").TotalParams(),
              ModelSpec::Preset("Llama-3-8B").TotalParams());
    // The 2507 instruct release resolves to Qwen3-30B-A3B's architecture.
    const ModelSpec i2507 = ModelSpec::Preset("Qwen3-30B-A3B-Instruct-2507");
    EXPECT_EQ(i2507.TotalParams(), ModelSpec::Preset("Qwen3-30B-A3B").TotalParams());
    EXPECT_EQ(i2507.moe->numExperts, 128u);
}

TEST(ModelPresets, TotalParamsExactForPublicCheckpoints)
{
    EXPECT_EQ(ModelSpec::Preset("Llama-3-8B").TotalParams(), 8030261248ULL);
    EXPECT_EQ(ModelSpec::Preset("Llama-3-70B").TotalParams(), 70553706496ULL);
    EXPECT_EQ(ModelSpec::Preset("Mixtral-8x7B").TotalParams(), 46702792704ULL);
    EXPECT_EQ(ModelSpec::Preset("Qwen3-30B-A3B").TotalParams(), 30532122624ULL);
}

// Active counts include embedding and LM head, as the model cards do. Mixtral and
// Qwen3-235B land within 1%; Qwen3-30B-A3B (3.353 B exact) and DeepSeek-V3 (37.55 B) are
// published rounded down to "3.3 B" and "37 B", 1.6% and 1.5% below the exact count.
TEST(ModelPresets, ActiveParamsMatchTable)
{
    EXPECT_EQ(ModelSpec::Preset("Llama-3-70B").ActiveParams(),
              ModelSpec::Preset("Llama-3-70B").TotalParams());
    EXPECT_TRUE(Near(ModelSpec::Preset("Mixtral-8x7B").ActiveParams(), 12.9e9, 0.01));
    EXPECT_TRUE(Near(ModelSpec::Preset("Qwen3-235B-A22B").ActiveParams(), 22e9, 0.01));
    EXPECT_TRUE(Near(ModelSpec::Preset("Qwen3-30B-A3B").ActiveParams(), 3.3e9, 0.02));
    EXPECT_TRUE(Near(ModelSpec::Preset("DeepSeek-V3").ActiveParams(), 37e9, 0.02));
    EXPECT_EQ(ModelSpec::Preset("Mixtral-8x7B").ActiveParams(), 12879925248ULL);
}

TEST(ModelPresets, DeepSeekV3Structure)
{
    ModelSpec m = ModelSpec::Preset("deepseek-v3");
    EXPECT_EQ(m.attention, AttentionKind::Mla);
    EXPECT_EQ(m.NumMoeLayers(), 58u);
    EXPECT_FALSE(m.IsMoeLayer(2));
    EXPECT_TRUE(m.IsMoeLayer(3));
    EXPECT_EQ(m.moe->numSharedExperts, 1u);
    EXPECT_EQ(m.moe->sharedIntermediate, 2048u);
    // MLA: q_a 7168x1536 + 1536 + q_b 1536x128x192 + kv_a 7168x576 + 512 + kv_b 512x128x256
    //      + o 128x128x7168
    EXPECT_EQ(m.AttentionParams(), 187107328ULL);
    EXPECT_EQ(m.weightDtype, DType::Fp8); // quantization_config fp8
    EXPECT_EQ(m.weightBlockSize, 128u);   // weight_block_size [128, 128]
    EXPECT_TRUE(m.BlockScaledFp8());
    EXPECT_EQ(m.kvCacheDtype, DType::Bf16);
    // vLLM leaves the embedding, LM head, routers and norms 16 bit: 2 x V x H, 58 routers of
    // E x H, two norms a layer and the final one, at 2 bytes; every other weight at 1.
    const uint64_t edge = 2ULL * 129280 * 7168 + 58ULL * 256 * 7168 + 61ULL * 2 * 7168 + 7168;
    EXPECT_EQ(m.EdgeParams(), edge);
    EXPECT_EQ(m.EdgeWeightDtype(), DType::Bf16);
    EXPECT_DOUBLE_EQ(m.WeightBytes(), double(m.TotalParams() - edge) + 2.0 * double(edge));
}

// MiniMax-M2.5 from its published config.json: 62 MoE layers of 256 experts (width 1536, top-8),
// 48 / 8 heads of 128 with a full-width QK norm, fp8 in 128 x 128 blocks. Its model card says
// 230 B total and 10 B active; the exact counts (MTP modules left out) are 228.69 B and, without
// the embedding and LM head, 9.80 B.
TEST(ModelPresets, MiniMaxM25Structure)
{
    const ModelSpec m = ModelSpec::Preset("MiniMax-M2.5");
    EXPECT_EQ(m.NumMoeLayers(), 62u);
    EXPECT_EQ(m.moe->numExperts, 256u);
    EXPECT_EQ(m.moe->expertIntermediate, 1536u);
    EXPECT_EQ(m.moe->topK, 8u);
    EXPECT_EQ(m.moe->sharedIntermediate, 0u);
    EXPECT_TRUE(m.qkNormAcrossHeads);
    EXPECT_TRUE(m.BlockScaledFp8());
    // Per layer: q, k, v, o 3072 x (48 + 16) x 128 + 48 x 128 x 3072, the norms' 56 x 128 + 2 x
    // 3072, the router 256 x 3072, the experts 256 x 3 x 3072 x 1536.
    const uint64_t layer = 44040192ULL + 7168 + 6144 + 786432 + 3623878656ULL;
    EXPECT_EQ(m.TotalParams(), 62 * layer + 2ULL * 200064 * 3072 + 3072);
    EXPECT_EQ(m.TotalParams(), 228689748992ULL);
    EXPECT_EQ(m.ActiveParams() - 2ULL * 200064 * 3072 - 3072, 9801340928ULL);
}

TEST(ModelSpec, Fp8BlockScalesReadFromTheQuantizationConfig)
{
    nlohmann::json c = {{"hidden_size", 1024},
                        {"num_hidden_layers", 2},
                        {"num_attention_heads", 8},
                        {"intermediate_size", 4096},
                        {"vocab_size", 1000},
                        {"quantization_config", {{"quant_method", "fp8"}}}};
    ModelSpec perTensor = ModelSpec::FromConfig(c);
    EXPECT_EQ(perTensor.weightDtype, DType::Fp8);
    EXPECT_EQ(perTensor.weightBlockSize, 0u);
    EXPECT_FALSE(perTensor.BlockScaledFp8());
    c["quantization_config"]["weight_block_size"] = {128, 128};
    EXPECT_TRUE(ModelSpec::FromConfig(c).BlockScaledFp8());
    // Not fp8 once overridden: no block kernels, and nothing left at another dtype.
    c["weight_dtype"] = "bfloat16";
    const ModelSpec bf16 = ModelSpec::FromConfig(c);
    EXPECT_FALSE(bf16.BlockScaledFp8());
    EXPECT_DOUBLE_EQ(bf16.WeightBytes(), 2.0 * double(bf16.TotalParams()));
    c.erase("weight_dtype");
    c["quantization_config"]["weight_block_size"] = {128};
    const InputError e = test::ErrorOf([&] { ModelSpec::FromConfig(c, "m.json"); });
    EXPECT_EQ(e.Field(), "quantization_config.weight_block_size");
    EXPECT_EQ(e.Found(), "1 values");
    c["quantization_config"]["weight_block_size"] = {0, 128};
    EXPECT_THROW(ModelSpec::FromConfig(c), InputError);
}

TEST(ModelPresets, LookupIsCaseAndPunctuationInsensitive)
{
    EXPECT_EQ(ModelSpec::Preset("llama-3.1-405b").numLayers, 126u);
    EXPECT_EQ(ModelSpec::Preset("meta-llama/LLAMA_3_70B").numLayers, 80u);
    EXPECT_EQ(ModelSpec::PresetNames().size(), 14u);
    EXPECT_THROW(ModelSpec::Preset("GPT-5"), fabricsim::InputError);
}

TEST(ModelSpec, KvBytesPerToken)
{
    ModelSpec l70 = ModelSpec::Preset("Llama-3-70B");
    EXPECT_DOUBLE_EQ(l70.KvBytesPerToken(), 327680.0); // 2 x 80 x 8 x 128 x 2
    EXPECT_DOUBLE_EQ(l70.KvBytesPerTokenPerRank(8), 40960.0);
    EXPECT_DOUBLE_EQ(l70.KvBytesPerTokenPerRank(16), 40960.0); // replicated past n_kv
    EXPECT_EQ(l70.KvHeadsPerRank(4), 2u);
    // A 4096-token prompt is 1.25 GiB.
    EXPECT_DOUBLE_EQ(4096 * l70.KvBytesPerToken(), 1.25 * (1ULL << 30));
    ModelSpec ds = ModelSpec::Preset("DeepSeek-V3");
    EXPECT_DOUBLE_EQ(ds.KvBytesPerToken(), 70272.0);         // 61 x (512 + 64) x 2
    EXPECT_DOUBLE_EQ(ds.KvBytesPerTokenPerRank(8), 70272.0); // MLA not sharded
}

TEST(ModelSpec, MixtralFieldNames)
{
    json c = {{"model_type", "mixtral"},
              {"hidden_size", 4096},
              {"num_hidden_layers", 32},
              {"num_attention_heads", 32},
              {"num_key_value_heads", 8},
              {"intermediate_size", 14336},
              {"num_local_experts", 8},
              {"num_experts_per_tok", 2},
              {"vocab_size", 32000},
              {"torch_dtype", "bfloat16"}};
    ModelSpec m = ModelSpec::FromConfig(c);
    ASSERT_TRUE(m.moe);
    EXPECT_EQ(m.moe->numExperts, 8u);
    EXPECT_EQ(m.moe->topK, 2u);
    EXPECT_EQ(m.moe->expertIntermediate, 14336u);
    EXPECT_EQ(m.NumMoeLayers(), 32u);
    EXPECT_EQ(m.headDim, 128u);
    EXPECT_EQ(m.TotalParams(), 46702792704ULL);
}

TEST(ModelSpec, QwenFieldNamesWithSharedExpertAndSparseStep)
{
    // Qwen2-MoE-like: shared expert with gate, every 2nd layer sparse, layer 5 forced dense.
    json c = {{"model_type", "qwen2_moe"},
              {"hidden_size", 1024},
              {"num_hidden_layers", 8},
              {"num_attention_heads", 16},
              {"num_key_value_heads", 4},
              {"intermediate_size", 2816},
              {"moe_intermediate_size", 256},
              {"shared_expert_intermediate_size", 1024},
              {"num_experts", 16},
              {"num_experts_per_tok", 4},
              {"decoder_sparse_step", 2},
              {"mlp_only_layers", {5}},
              {"vocab_size", 1000},
              {"tie_word_embeddings", true}};
    ModelSpec m = ModelSpec::FromConfig(c);
    ASSERT_TRUE(m.moe);
    // MoE when (l + 1) % 2 == 0 and l not in mlp_only_layers: 1, 3, 7.
    std::vector<bool> expect = {false, true, false, true, false, false, false, true};
    EXPECT_EQ(m.moe->moeLayer, expect);
    EXPECT_EQ(m.moe->sharedIntermediate, 1024u);
    EXPECT_TRUE(m.moe->sharedExpertGate);
    EXPECT_EQ(m.SharedExpertParams(), 3ULL * 1024 * 1024 + 1024);
    EXPECT_TRUE(m.qkvBias);
    EXPECT_EQ(m.LmHeadParams(), 0u); // tied
    uint64_t attn = 1024ULL * (16 + 8) * 64 + 16ULL * 64 * 1024 + (16 + 8) * 64;
    EXPECT_EQ(m.AttentionParams(), attn);
    uint64_t dense = attn + 2048 + 3ULL * 1024 * 2816;
    uint64_t sparse
        = attn + 2048 + 1024ULL * 16 + 16ULL * 3 * 1024 * 256 + 3ULL * 1024 * 1024 + 1024;
    EXPECT_EQ(m.TotalParams(), 5 * dense + 3 * sparse + 1000ULL * 1024 + 1024);
}

TEST(ModelSpec, Qwen3HasQkNormAndExplicitHeadDim)
{
    ModelSpec m = ModelSpec::Preset("Qwen3-30B-A3B");
    EXPECT_TRUE(m.qkNorm);
    EXPECT_EQ(m.headDim, 128u); // 2048 / 32 would be 64
    EXPECT_EQ(m.AttentionParams(), 2048ULL * (32 + 8) * 128 + 32ULL * 128 * 2048 + 256);
}

TEST(ModelSpec, DeepSeekFieldNamesWithoutQLora)
{
    // DeepSeek-V2-Lite-like: q_lora_rank null, 1 dense layer, 2 shared experts.
    json c = {{"model_type", "deepseek_v2"},
              {"hidden_size", 2048},
              {"num_hidden_layers", 4},
              {"num_attention_heads", 16},
              {"num_key_value_heads", 16},
              {"intermediate_size", 10944},
              {"moe_intermediate_size", 1408},
              {"n_routed_experts", 64},
              {"n_shared_experts", 2},
              {"num_experts_per_tok", 6},
              {"first_k_dense_replace", 1},
              {"kv_lora_rank", 512},
              {"q_lora_rank", nullptr},
              {"qk_rope_head_dim", 64},
              {"qk_nope_head_dim", 128},
              {"v_head_dim", 128},
              {"vocab_size", 102400}};
    ModelSpec m = ModelSpec::FromConfig(c);
    EXPECT_EQ(m.attention, AttentionKind::Mla);
    EXPECT_EQ(m.mla.qLoraRank, 0u);
    EXPECT_EQ(m.NumMoeLayers(), 3u);
    EXPECT_EQ(m.moe->sharedIntermediate, 2u * 1408);
    uint64_t attn
        = 2048ULL * 16 * 192 + 2048ULL * 576 + 512 + 512ULL * 16 * 256 + 16ULL * 128 * 2048;
    EXPECT_EQ(m.AttentionParams(), attn);
    EXPECT_DOUBLE_EQ(m.KvBytesPerToken(), 4.0 * 576 * 2);
    EXPECT_EQ(m.LayerActiveParams(1), attn + 4096 + 2048ULL * 64 + (6 + 2) * 3ULL * 2048 * 1408);
}

TEST(ModelSpec, DtypeOverrides)
{
    json c = ModelSpec::PresetConfig("Llama-3-8B");
    c["torch_dtype"] = "float8_e4m3fn";
    ModelSpec m = ModelSpec::FromConfig(c);
    EXPECT_EQ(m.weightDtype, DType::Fp8);
    EXPECT_EQ(m.activationDtype, DType::Bf16);
    ModelSpec k = ModelSpec::Load(json{{"preset", "Llama-3-8B"}, {"kv_cache_dtype", "fp8"}});
    EXPECT_DOUBLE_EQ(k.KvBytesPerToken(), 2.0 * 32 * 8 * 128);
    ModelSpec f = ModelSpec::Load(json{{"preset", "Llama-3-8B"}, {"torch_dtype", "float32"}});
    EXPECT_DOUBLE_EQ(f.WeightBytes(), 4.0 * 8030261248ULL);
}

TEST(ModelSpec, LoadFromPresetOverridesAndPath)
{
    ModelSpec m = ModelSpec::Load(json{{"preset", "llama-3-70b"}, {"num_hidden_layers", 40}});
    EXPECT_EQ(m.numLayers, 40u);
    EXPECT_EQ(m.hiddenSize, 8192u);

    std::string path = test::UniqueTempPath("wl-config.json");
    {
        std::ofstream f(path);
        f << ModelSpec::PresetConfig("Mixtral-8x7B").dump();
    }
    EXPECT_EQ(ModelSpec::Load(json(path)).TotalParams(), 46702792704ULL);
    EXPECT_EQ(ModelSpec::FromFile(path).moe->numExperts, 8u);
    std::remove(path.c_str());
}

TEST(ModelSpec, ErrorsNameTheField)
{
    json c = ModelSpec::PresetConfig("Llama-3-8B");
    c.erase("hidden_size");
    try
    {
        ModelSpec::FromConfig(c, "cfg.json");
        FAIL() << "no error";
    }
    catch (const fabricsim::InputError& e)
    {
        EXPECT_EQ(e.File(), "cfg.json");
        EXPECT_EQ(e.Field(), "hidden_size");
    }
    c = ModelSpec::PresetConfig("Llama-3-8B");
    c["num_key_value_heads"] = 7;
    try
    {
        ModelSpec::FromConfig(c);
        FAIL() << "no error";
    }
    catch (const fabricsim::InputError& e)
    {
        EXPECT_EQ(e.Field(), "num_key_value_heads");
    }
    c = ModelSpec::PresetConfig("Llama-3-8B");
    c["num_attention_heads"] = "32";
    EXPECT_THROW(ModelSpec::FromConfig(c), fabricsim::InputError);
    c = ModelSpec::PresetConfig("Mixtral-8x7B");
    c["num_experts_per_tok"] = 9;
    try
    {
        ModelSpec::FromConfig(c, "", "model");
        FAIL() << "no error";
    }
    catch (const fabricsim::InputError& e)
    {
        EXPECT_EQ(e.Field(), "model.num_experts_per_tok");
    }
    c = ModelSpec::PresetConfig("Llama-3-8B");
    c["torch_dtype"] = "int3";
    EXPECT_THROW(ModelSpec::FromConfig(c), fabricsim::InputError);
    try
    {
        ModelSpec::Load(json("no-such-model"), "scenario.json");
        FAIL() << "no error";
    }
    catch (const fabricsim::InputError& e)
    {
        EXPECT_EQ(e.File(), "scenario.json");
        EXPECT_EQ(e.Field(), "model");
    }
    EXPECT_THROW(ModelSpec::Load(json{{"preset", "nope"}}), fabricsim::InputError);
    // A misspelt override would be ignored and the base value used: refused, with the near match.
    try
    {
        ModelSpec::Load(json{{"preset", "Llama-3-8B"}, {"hiden_size", 2048}}, "s.json", "model");
        FAIL() << "no error";
    }
    catch (const fabricsim::InputError& e)
    {
        EXPECT_EQ(e.Field(), "model.hiden_size");
        EXPECT_EQ(e.Found(), "unknown key \"hiden_size\" (did you mean \"hidden_size\"?)");
    }
    // A key the base config has is an override even when fabricsim does not read it.
    json withRope = ModelSpec::PresetConfig("Llama-3-8B");
    withRope["rope_theta"] = 500000.0;
    const std::string path = ::testing::TempDir() + "/rope-config.json";
    std::ofstream(path) << withRope.dump();
    EXPECT_NO_THROW(ModelSpec::Load(json{{"config", path}, {"rope_theta", 1e6}}));
}

TEST(ModelSpec, VisionEncoder)
{
    json c = ModelSpec::PresetConfig("Llama-3-8B");
    // A ViT-H/14-like tower at 336 px: 576 patches, merged 2x2 into 144 LLM tokens.
    c["encoder"] = {{"modality", "vision"},
                    {"num_hidden_layers", 32},
                    {"hidden_size", 1280},
                    {"num_attention_heads", 16},
                    {"intermediate_size", 5120},
                    {"image_size", 336},
                    {"patch_size", 14},
                    {"spatial_merge_size", 2}};
    ModelSpec m = ModelSpec::FromConfig(c);
    ASSERT_TRUE(m.encoder);
    const EncoderSpec& e = *m.encoder;
    EXPECT_DOUBLE_EQ(e.tokensPerImage, 576.0);
    EXPECT_DOUBLE_EQ(e.outputTokensPerImage, 144.0);
    uint64_t layer = 4ULL * 1280 * 1280 + 2ULL * 1280 * 5120 + 2 * 1280;
    EXPECT_EQ(e.LayerParams(), layer);
    EXPECT_EQ(e.ProjectorParams(), 1280ULL * 4 * 4096);
    double flops = 32 * (2.0 * 576 * layer + 4.0 * 576 * 576 * 1280) + 2.0 * 144 * 1280 * 4 * 4096;
    EXPECT_DOUBLE_EQ(e.FlopsPerImage(), flops);
    EXPECT_EQ(m.TotalParams(), 8030261248ULL); // the encoder is counted separately

    c["encoder"].erase("image_size");
    c["encoder"].erase("patch_size");
    try
    {
        ModelSpec::FromConfig(c);
        FAIL() << "no error";
    }
    catch (const fabricsim::InputError& e)
    {
        EXPECT_EQ(e.Field(), "encoder.tokens_per_image");
    }
}

TEST(ModelSpec, AudioEncoder)
{
    json c = ModelSpec::PresetConfig("Llama-3-8B");
    c["encoder"] = {{"modality", "audio"},
                    {"depth", 24},
                    {"embed_dim", 1024},
                    {"num_heads", 16},
                    {"tokens_per_audio_second", 50},
                    {"output_tokens_per_audio_second", 12.5}};
    ModelSpec m = ModelSpec::FromConfig(c);
    ASSERT_TRUE(m.encoder);
    EXPECT_EQ(m.encoder->intermediateSize, 4096u);
    EXPECT_GT(m.encoder->FlopsPerAudioSecond(), 2.0 * 50 * 24 * m.encoder->LayerParams());
}
