// Per-layer attention kinds read from config.json, and what they hold per sequence, against
// hand calculations from the configs and the Gemma 3 technical report.
#include "error-of.h"
#include "model-spec.h"

#include <gtest/gtest.h>

using namespace fabricsim;
using fabricsim::test::ErrorOf;
using nlohmann::json;

namespace
{

/// The layers of kind \p k.
std::vector<uint32_t>
LayersOf(const ModelSpec& m, LayerKind k)
{
    std::vector<uint32_t> out;
    for (uint32_t l = 0; l < m.numLayers; ++l)
    {
        if (m.KindOf(l) == k)
        {
            out.push_back(l);
        }
    }
    return out;
}

} // namespace

// Gemma-3-27B as google/gemma-3-27b-it publishes it: 62 layers, every sixth global, a 1,024-token
// window on the rest. The Gemma 3 technical report (Table 1) gives 25,600 M non-embedding
// parameters for the 27B model.
TEST(ModelLayerKinds, Gemma3FiveLocalToOneGlobal)
{
    const ModelSpec m = ModelSpec::Preset("Gemma-3-27B");
    EXPECT_EQ(m.vocabSize, 262208u); // Gemma3TextConfig's default: the file leaves it out
    EXPECT_TRUE(m.tieWordEmbeddings);
    EXPECT_TRUE(m.qkNorm);
    EXPECT_EQ(m.normsPerLayer, 4u);
    EXPECT_EQ(m.slidingWindow, 1024u);
    EXPECT_EQ(LayersOf(m, LayerKind::Full),
              (std::vector<uint32_t>{5, 11, 17, 23, 29, 35, 41, 47, 53, 59}));
    EXPECT_EQ(m.NumLayersOf(LayerKind::Sliding), 52u);
    const double nonEmbedding = double(m.TotalParams() - m.EmbeddingParams());
    EXPECT_NEAR(nonEmbedding / 25600e6, 1.0, 1e-4) << nonEmbedding;

    // KV per sequence: 2 n_kv d b = 2 x 16 x 128 x 2 = 8,192 B per token and layer; the 10
    // global layers hold every token, the 52 local ones at most 1,024.
    const double perLayerToken = 8192;
    EXPECT_DOUBLE_EQ(m.KvBytesPerTokenPerLayer(), perLayerToken);
    for (uint64_t ctx : {1024u, 32768u, 131072u})
    {
        const double hand = perLayerToken * (10.0 * ctx + 52.0 * std::min<uint64_t>(ctx, 1024));
        EXPECT_DOUBLE_EQ(m.KvBytesPerSequence(ctx), hand) << ctx;
    }
    // At 128k the cache is 5.96x smaller than with every layer global.
    EXPECT_NEAR(131072 * m.KvBytesPerToken() / m.KvBytesPerSequence(131072), 5.958, 0.001);
    EXPECT_EQ(m.KeysAt(0, 5000), 1024u);
    EXPECT_EQ(m.KeysAt(5, 5000), 5001u);
    EXPECT_EQ(m.KeysAt(0, 100), 101u);
}

// The other ways configs name their windows.
TEST(ModelLayerKinds, WindowsFromEachConfigLayout)
{
    json llama = ModelSpec::PresetConfig("Llama-3-8B");
    // Mistral-7B-v0.1: a window on every layer.
    json c = llama;
    c["sliding_window"] = 4096;
    ModelSpec m = ModelSpec::FromConfig(c);
    EXPECT_EQ(m.NumLayersOf(LayerKind::Sliding), 32u);
    EXPECT_DOUBLE_EQ(m.KvBytesPerSequence(10000), 32.0 * 4096 * 2 * 8 * 128 * 2);
    // Qwen2: use_sliding_window with max_window_layers M: layers from M on are windowed.
    c["use_sliding_window"] = true;
    c["max_window_layers"] = 28;
    m = ModelSpec::FromConfig(c);
    EXPECT_EQ(LayersOf(m, LayerKind::Sliding), (std::vector<uint32_t>{28, 29, 30, 31}));
    c["use_sliding_window"] = false; // Qwen2.5's and Qwen3's published configs
    m = ModelSpec::FromConfig(c);
    EXPECT_TRUE(m.layerKinds.empty());
    EXPECT_EQ(m.slidingWindow, 0u);
    EXPECT_DOUBLE_EQ(m.KvBytesPerSequence(10000), 10000 * m.KvBytesPerToken());
    // gpt-oss: layer_types alternating sliding and full, a 128-token window.
    c = llama;
    c["sliding_window"] = 128;
    c["layer_types"] = json::array();
    for (int l = 0; l < 32; ++l)
    {
        c["layer_types"].push_back(l % 2 == 0 ? "sliding_attention" : "full_attention");
    }
    m = ModelSpec::FromConfig(c);
    EXPECT_EQ(m.NumLayersOf(LayerKind::Sliding), 16u);
    EXPECT_EQ(m.KindOf(0), LayerKind::Sliding);
    EXPECT_EQ(m.KindOf(1), LayerKind::Full);
    // Gemma 2: every other layer local (its config class's pattern).
    c = llama;
    c["model_type"] = "gemma2";
    c["sliding_window"] = 4096;
    m = ModelSpec::FromConfig(c);
    EXPECT_EQ(m.KindOf(0), LayerKind::Sliding);
    EXPECT_EQ(m.KindOf(1), LayerKind::Full);
    EXPECT_EQ(m.NumLayersOf(LayerKind::Full), 16u);
    // Sliding layers without a window say which field is missing.
    c = llama;
    c["layer_types"] = json::array();
    for (int l = 0; l < 32; ++l)
    {
        c["layer_types"].push_back("sliding_attention");
    }
    const InputError e = ErrorOf([&] { ModelSpec::FromConfig(c, "m.json", "model"); });
    EXPECT_EQ(e.Field(), "model.sliding_window");
    EXPECT_EQ(e.Found(), "nothing (field missing)");
}

// MiniMax-M2.5's vLLM deploy guide: "about 240 GB" of KV cache per million tokens. 62 layers x
// 2 x 8 KV heads x 128 x 2 B = 253,952 B a token: 253.95 GB, 236.5 GiB per million tokens, the
// guide's figure between the two.
TEST(ModelLayerKinds, MiniMaxKvAgainstItsDeployGuide)
{
    const double perMillion = ModelSpec::Preset("MiniMax-M2.5").KvBytesPerToken() * 1e6;
    EXPECT_NEAR(perMillion / double(1ULL << 30) / 240, 1.0, 0.02);
    EXPECT_NEAR(perMillion / 1e9 / 240, 1.0, 0.06);
}
