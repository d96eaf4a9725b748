// Linear-attention hybrids (Gated DeltaNet: Qwen3-Next, Qwen3.5): layer kinds, parameters
// against the model cards, state and KV per sequence and FLOPs per token against hand
// calculations from the configs.
#include "error-of.h"
#include "roofline.h"

#include <gtest/gtest.h>

using namespace fabricsim;
using fabricsim::test::ErrorOf;
using nlohmann::json;

namespace
{

/// Mixer (OpKind::Attention) FLOPs and state / KV bytes of every layer of one step, by kind.
struct Mixers
{
    double linearFlops = 0;
    double linearBytes = 0;
    double fullFlops = 0;
};

Mixers
MixersOf(const ModelSpec& m, const Roofline& r, const StepBatch& b)
{
    Mixers x;
    for (const auto& op : r.StepOps(b))
    {
        if (op.kind != OpKind::Attention)
        {
            continue;
        }
        if (m.KindOf(uint32_t(op.layer)) == LayerKind::Linear)
        {
            x.linearFlops += op.flops;
            x.linearBytes += op.kvBytes;
        }
        else
        {
            x.fullFlops += op.flops;
        }
    }
    return x;
}

} // namespace

// Qwen3-Next-80B-A3B: 48 layers, every fourth full; its model card says 80 B total and 3 B
// activated (the latter without embedding and LM head).
TEST(LinearAttention, Qwen3NextLayersAndParameters)
{
    const ModelSpec m = ModelSpec::Preset("Qwen3-Next-80B-A3B");
    EXPECT_EQ(m.NumLayersOf(LayerKind::Linear), 36u);
    EXPECT_EQ(m.NumLayersOf(LayerKind::Full), 12u);
    EXPECT_EQ(m.KindOf(3), LayerKind::Full);
    EXPECT_EQ(m.KindOf(4), LayerKind::Linear);
    EXPECT_TRUE(m.attnOutputGate); // qwen3_next always gates
    // Gated DeltaNet: key width 16 x 128, value width 32 x 128, conv over q, k, v (8,192).
    const uint64_t h = 2048;
    const uint64_t linear = h * (2 * 2048 + 2 * 4096 + 2 * 32) + 8192 * 4 + 2 * 32 + 128 + 4096 * h;
    EXPECT_EQ(m.LinearAttentionParams(), linear);
    // Gated attention: q_proj twice the query width; per-head q/k norms.
    EXPECT_EQ(m.AttentionParams(), h * 16 * 256 * 2 + 2 * h * 2 * 256 + 16 * 256 * h + 2 * 256);
    EXPECT_NEAR(double(m.TotalParams()) / 80e9, 1.0, 0.01);
    const double activeNoEmbedding
        = double(m.ActiveParams() - m.EmbeddingParams() - m.LmHeadParams());
    EXPECT_NEAR(activeNoEmbedding / 3e9, 1.0, 0.1);
}

// Qwen3.5-397B-A17B (text_config): 45 Gated DeltaNet layers, 15 gated full-attention ones.
TEST(LinearAttention, Qwen35LayersAndParameters)
{
    const ModelSpec m = ModelSpec::Preset("Qwen3.5-397B-A17B");
    EXPECT_EQ(m.NumLayersOf(LayerKind::Linear), 45u);
    EXPECT_EQ(m.NumLayersOf(LayerKind::Full), 15u);
    EXPECT_EQ(m.linear->numValueHeads, 64u);
    EXPECT_NEAR(double(m.TotalParams()) / 397e9, 1.0, 0.005); // the vision tower not counted
    EXPECT_NEAR(double(m.ActiveParams()) / 17e9, 1.0, 0.03);
}

// KV and state one sequence holds at 1k, 32k and 128k context: the 12 full layers 2 x 2 x 256
// x 2 = 2,048 B a token; each of the 36 linear layers a fixed (32 x 128 x 128 + 8,192 x 3) x 2
// = 1,097,728 B.
TEST(LinearAttention, StatePerSequenceIsFixed)
{
    const ModelSpec m = ModelSpec::Preset("Qwen3-Next-80B-A3B");
    EXPECT_DOUBLE_EQ(m.LinearStateBytesPerLayer(), 1097728);
    EXPECT_DOUBLE_EQ(m.KvBytesPerToken(), 12 * 2048.0);
    for (uint64_t ctx : {1024u, 32768u, 131072u})
    {
        EXPECT_DOUBLE_EQ(m.KvBytesPerSequence(ctx), 12 * 2048.0 * ctx) << ctx;
    }
    // The state (39.5 MB) is 61% of what a sequence holds at 1k, 1.2% at 128k.
    const double state = 36 * 1097728.0;
    EXPECT_NEAR(state / (state + m.KvBytesPerSequence(1024)), 0.6109, 0.0001);
    EXPECT_NEAR(state / (state + m.KvBytesPerSequence(131072)), 0.01212, 0.00001);
    // Qwen3.5 keeps its recurrent state in float32 (mamba_ssm_dtype): (64 x 128 x 128 x 4 +
    // 12,288 x 3 x 2) B a layer.
    EXPECT_DOUBLE_EQ(ModelSpec::Preset("Qwen3.5-397B-A17B").LinearStateBytesPerLayer(),
                     64 * 128 * 128 * 4.0 + 12288 * 3 * 2.0);
}

// FLOPs a decode token spends in the mixers at 1k, 32k, 128k context: each linear layer 32
// value heads x 7 x 128 x 128 plus the conv's 2 x 8,192 x 4, whatever the context; each full
// layer 2 x 16 x (256 + 256) x (c + 1). The linear layers read and write their state once.
TEST(LinearAttention, DecodeFlopsPerToken)
{
    const ModelSpec m = ModelSpec::Preset("Qwen3-Next-80B-A3B");
    const Roofline r(m, HardwareSpec::Preset("H200"), ParallelismSpec());
    const double linear = 32 * 7 * 128.0 * 128 + 2 * 8192.0 * 4;
    for (double c : {1024.0, 32768.0, 131072.0})
    {
        const Mixers x = MixersOf(m, r, StepBatch::Decode(1, uint64_t(c)));
        EXPECT_DOUBLE_EQ(x.linearFlops, 36 * linear) << c;
        EXPECT_DOUBLE_EQ(x.fullFlops, 12 * 2 * 16 * 512 * (c + 1)) << c;
        EXPECT_DOUBLE_EQ(x.linearBytes, 36 * 2 * 1097728.0) << c;
    }
    // A 16k prompt in one chunk: 64-token chunks, 6 C d_k + 4 C d_v + 6 d_k d_v a token and head.
    StepBatch b;
    b.sequences = {SequenceWork{16384, 0, true}};
    const double perToken = 6 * 64 * 128 + 4 * 64 * 128 + 6 * 128 * 128;
    const Mixers x = MixersOf(m, r, b);
    EXPECT_DOUBLE_EQ(x.linearFlops, 36 * (32 * 16384 * perToken + 2 * 16384 * 8192.0 * 4));
    EXPECT_DOUBLE_EQ(x.linearBytes, 36 * 1097728.0); // written once, nothing to read
}

// TP shards the linear heads, the state and the conv channels.
TEST(LinearAttention, TensorParallelShardsTheState)
{
    const ModelSpec m = ModelSpec::Preset("Qwen3-Next-80B-A3B");
    ParallelismSpec tp4;
    tp4.tp = 4;
    const Roofline r1(m, HardwareSpec::Preset("H200"), ParallelismSpec());
    const Roofline r4(m, HardwareSpec::Preset("H200"), tp4);
    const Mixers one = MixersOf(m, r1, StepBatch::Decode(8, 4096));
    const Mixers four = MixersOf(m, r4, StepBatch::Decode(8, 4096));
    EXPECT_DOUBLE_EQ(four.linearFlops * 4, one.linearFlops);
    EXPECT_DOUBLE_EQ(four.linearBytes * 4, one.linearBytes);
}

// A linear layer needs its dimensions, named when missing; value heads group key heads.
TEST(LinearAttention, MissingDimensionsAreNamed)
{
    json c = ModelSpec::PresetConfig("Qwen3-Next-80B-A3B");
    c.erase("linear_value_head_dim");
    EXPECT_EQ(ErrorOf([&] { ModelSpec::FromConfig(c, "q.json", "model"); }).Field(),
              "model.linear_value_head_dim");
    c = ModelSpec::PresetConfig("Qwen3-Next-80B-A3B");
    c["linear_num_value_heads"] = 24;
    EXPECT_EQ(ErrorOf([&] { ModelSpec::FromConfig(c); }).Field(), "linear_num_value_heads");
}

// Lightning attention (MiniMax-Text-01's config.json: 80 layers, a softmax layer after every
// seven lightning ones, 64 heads of 128, 32 experts of 9,216, top 2). The MiniMax-01 report
// gives 456 B parameters, 45.9 B activated a token (without the embeddings).
TEST(LinearAttention, LightningAttentionLayersAndCost)
{
    json c = {{"model_type", "minimax_text_01"},
              {"hidden_size", 6144},
              {"num_hidden_layers", 80},
              {"num_attention_heads", 64},
              {"num_key_value_heads", 8},
              {"head_dim", 128},
              {"intermediate_size", 9216},
              {"num_local_experts", 32},
              {"num_experts_per_tok", 2},
              {"vocab_size", 200064},
              {"block_size", 256},
              {"attn_type_list", json::array()}};
    for (int l = 0; l < 80; ++l)
    {
        c["attn_type_list"].push_back((l + 1) % 8 == 0 ? 1 : 0);
    }
    const ModelSpec m = ModelSpec::FromConfig(c);
    EXPECT_EQ(m.NumLayersOf(LayerKind::Linear), 70u);
    ASSERT_TRUE(m.linear);
    EXPECT_EQ(m.linear->kind, LinearKind::Lightning);
    // qkv_proj, output_gate, out_proj, the norm over 8,192 channels.
    EXPECT_EQ(m.LinearAttentionParams(), 6144ULL * 3 * 8192 + 2 * 6144ULL * 8192 + 8192);
    EXPECT_NEAR(double(m.TotalParams()) / 456e9, 1.0, 0.005);
    EXPECT_NEAR(
        double(m.ActiveParams() - m.EmbeddingParams() - m.LmHeadParams()) / 45.9e9, 1.0, 0.01);
    // A state of 64 x 128 x 128 a layer, no conv.
    EXPECT_DOUBLE_EQ(m.LinearStateBytesPerLayer(), 64 * 128 * 128 * 2.0);
    // Decode at context c: 5 d^2 a head in each lightning layer, every key in the softmax ones.
    const Roofline r(m, HardwareSpec::Preset("H200"), ParallelismSpec());
    for (double ctx : {1024.0, 32768.0, 131072.0})
    {
        const Mixers x = MixersOf(m, r, StepBatch::Decode(1, uint64_t(ctx)));
        EXPECT_DOUBLE_EQ(x.linearFlops, 70 * 64 * 5 * 128.0 * 128) << ctx;
        EXPECT_DOUBLE_EQ(x.fullFlops, 10 * 2 * 64 * 256 * (ctx + 1)) << ctx;
    }
}
