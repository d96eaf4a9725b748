// The model reader's keys: every key of a config is read, refused (it changes cost and is not
// modelled) or listed in ignoredKeys, and a multimodal checkpoint's text_config is read as the
// model.
#include "error-of.h"
#include "model-config-keys.h"
#include "model-spec.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>

using namespace fabricsim;
using fabricsim::test::ErrorOf;
using nlohmann::json;

namespace
{

using Keys = std::vector<std::string>;

/// \p base nested as a multimodal checkpoint does: the text model under text_config, the
/// dtype and a vision tower outside.
json
Nested(json base)
{
    json outer = {{"architectures", {"Qwen3VLMoeForConditionalGeneration"}},
                  {"model_type", "qwen3_vl_moe"},
                  {"torch_dtype", base["torch_dtype"]},
                  {"image_token_id", 151655},
                  {"vision_config", {{"depth", 27}, {"hidden_size", 1152}}}};
    base.erase("torch_dtype");
    outer["text_config"] = base;
    return outer;
}

} // namespace

// Every key of every shipped preset is read or listed; the lists are the keys that change
// nothing fabricsim computes.
TEST(ModelConfigKeys, EveryPresetKeyIsReadOrListed)
{
    const std::map<std::string, Keys> expected = {
        {"Llama-3-8B", {"max_position_embeddings", "rms_norm_eps", "rope_theta"}},
        {"Mixtral-8x7B", {"max_position_embeddings", "rms_norm_eps", "rope_theta"}},
        {"Qwen3-30B-A3B",
         {"max_position_embeddings", "norm_topk_prob", "rms_norm_eps", "rope_theta"}},
        {"DeepSeek-V3",
         {"max_position_embeddings",
          "num_nextn_predict_layers",
          "rms_norm_eps",
          "routed_scaling_factor"}},
        {"MiniMax-M2.5", {"max_position_embeddings"}},
        {"Gemma-3-27B",
         {"mm_tokens_per_image",
          "model_type",
          "text_config.query_pre_attn_scalar",
          "text_config.rope_scaling",
          "vision_config"}},
    };
    const Keys& read = ModelConfigKeysRead();
    auto isRead = [&](const std::string& k)
    {
        return std::count(read.begin(), read.end(), k) > 0;
    };
    for (const auto& name : ModelSpec::PresetNames())
    {
        const json c = ModelSpec::PresetConfig(name);
        const ModelSpec m = ModelSpec::Preset(name);
        auto listed = [&](const std::string& k)
        {
            return std::count(m.ignoredKeys.begin(), m.ignoredKeys.end(), k) > 0;
        };
        const json* text = c.contains("text_config") ? &c["text_config"] : nullptr;
        for (auto it = c.begin(); it != c.end(); ++it)
        {
            if (it.key() != "text_config")
            {
                // An outer key the text model also has is not read: the text model's wins.
                const bool used = isRead(it.key()) && !(text && text->contains(it.key()));
                EXPECT_NE(used, listed(it.key())) << name << ": " << it.key();
            }
        }
        for (auto it = text ? text->begin() : c.end(); text && it != text->end(); ++it)
        {
            EXPECT_NE(isRead(it.key()), listed("text_config." + it.key()))
                << name << ": text_config." << it.key();
        }
        if (auto e = expected.find(name); e != expected.end())
        {
            EXPECT_EQ(m.ignoredKeys, e->second) << name;
        }
    }
}

// Qwen3.5's and Gemma 3's layout: the text model under text_config beside vision_config. It
// reads as the flat config does, the outer dtype included; what is not read is listed by path.
TEST(ModelConfigKeys, TextConfigIsTheModel)
{
    const json flat = ModelSpec::PresetConfig("Qwen3-30B-A3B");
    const ModelSpec a = ModelSpec::FromConfig(flat);
    json nested = Nested(flat);
    nested["torch_dtype"] = "float32";
    const ModelSpec b = ModelSpec::FromConfig(nested, "cfg.json");
    EXPECT_EQ(b.TotalParams(), a.TotalParams());
    EXPECT_EQ(b.ActiveParams(), a.ActiveParams());
    EXPECT_DOUBLE_EQ(b.KvBytesPerToken(), 2.0 * a.KvBytesPerToken()); // fp32 from outside
    EXPECT_EQ(b.name, "Qwen3-30B-A3B");
    const Keys want = {"architectures", // the text model's own
                       "image_token_id",
                       "model_type", // the text model's own model_type wins
                       "text_config.max_position_embeddings",
                       "text_config.norm_topk_prob",
                       "text_config.rms_norm_eps",
                       "text_config.rope_theta",
                       "vision_config"};
    EXPECT_EQ(b.ignoredKeys, want);

    // An override goes where the base has the key: num_hidden_layers into text_config.
    const std::string path = ::testing::TempDir() + "/nested-config.json";
    std::ofstream(path) << Nested(flat).dump();
    const ModelSpec c = ModelSpec::Load(json{{"config", path}, {"num_hidden_layers", 4}});
    EXPECT_EQ(c.numLayers, 4u);
    // Errors inside it name the nested field.
    nested["text_config"]["num_key_value_heads"] = 5;
    const InputError e = ErrorOf([&] { ModelSpec::FromConfig(nested, "cfg.json", "model"); });
    EXPECT_EQ(e.Field(), "model.text_config.num_key_value_heads");
    nested["text_config"] = 3;
    EXPECT_EQ(ErrorOf([&] { ModelSpec::FromConfig(nested); }).Field(), "text_config");
}

// Keys that change what a model costs and are not modelled stop the run, naming the key.
TEST(ModelConfigKeys, UnmodelledKindsAreRefusedByName)
{
    const json llama = ModelSpec::PresetConfig("Llama-3-8B");
    auto refused = [&](const json& patch, const std::string& field)
    {
        json c = llama;
        c.merge_patch(patch);
        const InputError e = ErrorOf([&] { ModelSpec::FromConfig(c, "m.json", "model"); });
        EXPECT_EQ(e.File(), "m.json");
        EXPECT_EQ(e.Field(), field) << patch.dump();
        EXPECT_NE(e.Expected().find("not modelled yet"), std::string::npos) << e.Expected();
    };
    Keys kinds(32, "full_attention"); // Llama-3-8B's 32 layers
    kinds[1] = "chunked_attention";
    refused({{"layer_types", kinds}}, "model.layer_types[1]");
    json shortList = llama;
    shortList["layer_types"] = Keys(31, "full_attention");
    const InputError len = ErrorOf([&] { ModelSpec::FromConfig(shortList); });
    EXPECT_EQ(len.Field(), "layer_types");
    EXPECT_EQ(len.Found(), "31 entries");
    json badKind = llama;
    badKind["attn_type_list"] = std::vector<int>(32, 1);
    badKind["attn_type_list"][2] = 2; // MiniMax: 0 lightning, 1 softmax, nothing else
    EXPECT_EQ(ErrorOf([&] { ModelSpec::FromConfig(badKind); }).Field(), "attn_type_list[2]");
    refused({{"linear_attn_config", {{"kda_layers", {1, 2}}}}}, "model.linear_attn_config");
    refused({{"index_topk", 2048}}, "model.index_topk"); // DeepSeek-V3.2
    refused({{"mlp_bias", true}}, "model.mlp_bias");
    refused({{"quantization_config", {{"quant_method", "mxfp4"}}}},
            "model.quantization_config.quant_method");
    json nested = Nested(llama);
    nested["text_config"]["index_topk"] = 2048;
    EXPECT_EQ(ErrorOf([&] { ModelSpec::FromConfig(nested); }).Field(), "text_config.index_topk");

    // What selects nothing is read, not refused and not listed: Qwen2's disabled window,
    // all-full layer types.
    json c = llama;
    c.merge_patch(json{{"sliding_window", 131072},
                       {"use_sliding_window", false},
                       {"max_window_layers", 28},
                       {"layer_types", Keys(32, "full_attention")},
                       {"attn_type_list", std::vector<int>(32, 1)},
                       {"attn_output_gate", false}});
    const ModelSpec m = ModelSpec::FromConfig(c);
    EXPECT_EQ(m.ignoredKeys, (Keys{"max_position_embeddings", "rms_norm_eps", "rope_theta"}));
    EXPECT_EQ(m.TotalParams(), ModelSpec::FromConfig(llama).TotalParams());
}
