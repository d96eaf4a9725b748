/*
 * Built-in models, written as the config.json fields of the public HuggingFace checkpoints so
 * that presets go through the same parser as user configs.
 */
#include "input-error.h"
#include "json-read.h"
#include "model-spec.h"

#include <utility>

namespace fabricsim
{

using nlohmann::json;

namespace
{

/// Adds \p name: a later release of preset \p base with its architecture, under the checkpoint
/// \p path with a context of \p context tokens.
void
AddRelease(std::vector<std::pair<std::string, json>>& p,
           const std::string& base,
           const std::string& name,
           const std::string& path,
           uint64_t context)
{
    for (const auto& [preset, config] : p)
    {
        if (preset == base)
        {
            json c = config;
            c["_name_or_path"] = path;
            c["max_position_embeddings"] = context;
            p.emplace_back(name, c);
            return;
        }
    }
}

/// Qwen3.5's 60 layers: three Gated DeltaNet layers, then one full-attention layer.
json
Qwen35LayerTypes()
{
    json t = json::array();
    for (int l = 0; l < 60; ++l)
    {
        t.push_back((l + 1) % 4 == 0 ? "full_attention" : "linear_attention");
    }
    return t;
}

/// The presets whose layers are not all full attention.
void
AddLayerKindPresets(std::vector<std::pair<std::string, json>>& p)
{
    // Qwen/Qwen3-Next-80B-A3B-Instruct's config.json: 48 layers, every fourth full (gated)
    // attention (full_attention_interval, no layer_types), the rest Gated DeltaNet; 512
    // experts, top-10, and a gated shared expert in every layer.
    p.emplace_back("Qwen3-Next-80B-A3B",
                   json{{"_name_or_path", "Qwen/Qwen3-Next-80B-A3B-Instruct"},
                        {"architectures", {"Qwen3NextForCausalLM"}},
                        {"model_type", "qwen3_next"},
                        {"hidden_size", 2048},
                        {"intermediate_size", 5120},
                        {"num_hidden_layers", 48},
                        {"num_attention_heads", 16},
                        {"num_key_value_heads", 2},
                        {"head_dim", 256},
                        {"full_attention_interval", 4},
                        {"linear_conv_kernel_dim", 4},
                        {"linear_key_head_dim", 128},
                        {"linear_num_key_heads", 16},
                        {"linear_num_value_heads", 32},
                        {"linear_value_head_dim", 128},
                        {"num_experts", 512},
                        {"num_experts_per_tok", 10},
                        {"moe_intermediate_size", 512},
                        {"shared_expert_intermediate_size", 512},
                        {"decoder_sparse_step", 1},
                        {"mlp_only_layers", json::array()},
                        {"norm_topk_prob", true},
                        {"partial_rotary_factor", 0.25},
                        {"rope_theta", 10000000},
                        {"rms_norm_eps", 1e-6},
                        {"max_position_embeddings", 262144},
                        {"use_sliding_window", false},
                        {"vocab_size", 151936},
                        {"attention_bias", false},
                        {"tie_word_embeddings", false},
                        {"torch_dtype", "bfloat16"}});
    // Qwen/Qwen3.5-397B-A17B's config.json: the text model under text_config (layer_types
    // spelled out, gated attention every fourth layer); the vision tower is not read (the
    // measured runs serve it --language-model-only).
    p.emplace_back(
        "Qwen3.5-397B-A17B",
        json{{"architectures", {"Qwen3_5MoeForConditionalGeneration"}},
             {"model_type", "qwen3_5_moe"},
             {"tie_word_embeddings", false},
             {"text_config",
              {{"model_type", "qwen3_5_moe_text"},
               {"hidden_size", 4096},
               {"num_hidden_layers", 60},
               {"num_attention_heads", 32},
               {"num_key_value_heads", 2},
               {"head_dim", 256},
               {"attn_output_gate", true},
               {"full_attention_interval", 4},
               {"layer_types", Qwen35LayerTypes()},
               {"linear_conv_kernel_dim", 4},
               {"linear_key_head_dim", 128},
               {"linear_num_key_heads", 16},
               {"linear_num_value_heads", 64},
               {"linear_value_head_dim", 128},
               {"num_experts", 512},
               {"num_experts_per_tok", 10},
               {"moe_intermediate_size", 1024},
               {"shared_expert_intermediate_size", 1024},
               {"mamba_ssm_dtype", "float32"},
               {"mtp_num_hidden_layers", 1},
               {"rope_parameters", {{"partial_rotary_factor", 0.25}, {"rope_theta", 10000000}}},
               {"rms_norm_eps", 1e-6},
               {"max_position_embeddings", 262144},
               {"vocab_size", 248320},
               {"attention_bias", false},
               {"dtype", "bfloat16"}}},
             {"vision_config", {{"depth", 27}, {"hidden_size", 1152}, {"out_hidden_size", 4096}}}});
    // google/gemma-3-27b-it's config.json (transformers 4.50.0.dev0) as published: the text
    // model under text_config with five local (1,024-token window) layers to one global; its
    // vocabulary and pattern are Gemma3TextConfig's defaults (model-layer-kinds.cc). The
    // SigLIP vision tower is not read (serve it --language-model-only or add an encoder).
    p.emplace_back("Gemma-3-27B",
                   json{{"architectures", {"Gemma3ForConditionalGeneration"}},
                        {"model_type", "gemma3"},
                        {"mm_tokens_per_image", 256},
                        {"text_config",
                         {{"head_dim", 128},
                          {"hidden_size", 5376},
                          {"intermediate_size", 21504},
                          {"model_type", "gemma3_text"},
                          {"num_attention_heads", 32},
                          {"num_hidden_layers", 62},
                          {"num_key_value_heads", 16},
                          {"query_pre_attn_scalar", 168},
                          {"rope_scaling", {{"factor", 8.0}, {"rope_type", "linear"}}},
                          {"sliding_window", 1024}}},
                        {"torch_dtype", "bfloat16"},
                        {"vision_config",
                         {{"hidden_size", 1152},
                          {"image_size", 896},
                          {"intermediate_size", 4304},
                          {"model_type", "siglip_vision_model"},
                          {"num_attention_heads", 16},
                          {"num_hidden_layers", 27},
                          {"patch_size", 14},
                          {"vision_use_head", false}}}});
}

/// (name, config.json) of every preset, in table order. Built on each call: no statics.
std::vector<std::pair<std::string, json>>
ModelPresets()
{
    std::vector<std::pair<std::string, json>> p;
    p.emplace_back("Llama-3-8B",
                   json{{"_name_or_path", "meta-llama/Meta-Llama-3-8B"},
                        {"architectures", {"LlamaForCausalLM"}},
                        {"model_type", "llama"},
                        {"hidden_size", 4096},
                        {"intermediate_size", 14336},
                        {"num_hidden_layers", 32},
                        {"num_attention_heads", 32},
                        {"num_key_value_heads", 8},
                        {"vocab_size", 128256},
                        {"max_position_embeddings", 8192},
                        {"rope_theta", 500000.0},
                        {"rms_norm_eps", 1e-5},
                        {"attention_bias", false},
                        {"tie_word_embeddings", false},
                        {"torch_dtype", "bfloat16"}});
    // Llama 3.1 8B: Llama 3 8B's architecture with a 128K context (rope scaling not modelled).
    AddRelease(p, "Llama-3-8B", "Llama-3.1-8B", "meta-llama/Llama-3.1-8B", 131072);
    p.emplace_back("Llama-3-70B",
                   json{{"_name_or_path", "meta-llama/Meta-Llama-3-70B"},
                        {"architectures", {"LlamaForCausalLM"}},
                        {"model_type", "llama"},
                        {"hidden_size", 8192},
                        {"intermediate_size", 28672},
                        {"num_hidden_layers", 80},
                        {"num_attention_heads", 64},
                        {"num_key_value_heads", 8},
                        {"vocab_size", 128256},
                        {"max_position_embeddings", 8192},
                        {"rope_theta", 500000.0},
                        {"rms_norm_eps", 1e-5},
                        {"attention_bias", false},
                        {"tie_word_embeddings", false},
                        {"torch_dtype", "bfloat16"}});
    p.emplace_back("Llama-3.1-405B",
                   json{{"_name_or_path", "meta-llama/Llama-3.1-405B"},
                        {"architectures", {"LlamaForCausalLM"}},
                        {"model_type", "llama"},
                        {"hidden_size", 16384},
                        {"intermediate_size", 53248},
                        {"num_hidden_layers", 126},
                        {"num_attention_heads", 128},
                        {"num_key_value_heads", 8},
                        {"vocab_size", 128256},
                        {"max_position_embeddings", 131072},
                        {"rope_theta", 500000.0},
                        {"rms_norm_eps", 1e-5},
                        {"attention_bias", false},
                        {"tie_word_embeddings", false},
                        {"torch_dtype", "bfloat16"}});
    p.emplace_back("Mixtral-8x7B",
                   json{{"_name_or_path", "mistralai/Mixtral-8x7B-v0.1"},
                        {"architectures", {"MixtralForCausalLM"}},
                        {"model_type", "mixtral"},
                        {"hidden_size", 4096},
                        {"intermediate_size", 14336},
                        {"num_hidden_layers", 32},
                        {"num_attention_heads", 32},
                        {"num_key_value_heads", 8},
                        {"num_local_experts", 8},
                        {"num_experts_per_tok", 2},
                        {"vocab_size", 32000},
                        {"max_position_embeddings", 32768},
                        {"rope_theta", 1e6},
                        {"rms_norm_eps", 1e-5},
                        {"tie_word_embeddings", false},
                        {"torch_dtype", "bfloat16"}});
    p.emplace_back("Qwen3-30B-A3B",
                   json{{"_name_or_path", "Qwen/Qwen3-30B-A3B"},
                        {"architectures", {"Qwen3MoeForCausalLM"}},
                        {"model_type", "qwen3_moe"},
                        {"hidden_size", 2048},
                        {"intermediate_size", 6144},
                        {"moe_intermediate_size", 768},
                        {"num_hidden_layers", 48},
                        {"num_attention_heads", 32},
                        {"num_key_value_heads", 4},
                        {"head_dim", 128},
                        {"num_experts", 128},
                        {"num_experts_per_tok", 8},
                        {"decoder_sparse_step", 1},
                        {"mlp_only_layers", json::array()},
                        {"norm_topk_prob", true},
                        {"vocab_size", 151936},
                        {"max_position_embeddings", 40960},
                        {"rope_theta", 1e6},
                        {"rms_norm_eps", 1e-6},
                        {"attention_bias", false},
                        {"tie_word_embeddings", false},
                        {"torch_dtype", "bfloat16"}});
    p.emplace_back("Qwen3-32B",
                   json{{"_name_or_path", "Qwen/Qwen3-32B"},
                        {"architectures", {"Qwen3ForCausalLM"}},
                        {"model_type", "qwen3"},
                        {"hidden_size", 5120},
                        {"intermediate_size", 25600},
                        {"num_hidden_layers", 64},
                        {"num_attention_heads", 64},
                        {"num_key_value_heads", 8},
                        {"head_dim", 128},
                        {"vocab_size", 151936},
                        {"max_position_embeddings", 40960},
                        {"rope_theta", 1e6},
                        {"rms_norm_eps", 1e-6},
                        {"attention_bias", false},
                        {"tie_word_embeddings", false},
                        {"torch_dtype", "bfloat16"}});
    // The July 2025 instruct release: Qwen3-30B-A3B's architecture, 262 144 tokens of context.
    AddRelease(p,
               "Qwen3-30B-A3B",
               "Qwen3-30B-A3B-Instruct-2507",
               "Qwen/Qwen3-30B-A3B-Instruct-2507",
               262144);
    p.emplace_back("Qwen3-235B-A22B",
                   json{{"_name_or_path", "Qwen/Qwen3-235B-A22B"},
                        {"architectures", {"Qwen3MoeForCausalLM"}},
                        {"model_type", "qwen3_moe"},
                        {"hidden_size", 4096},
                        {"intermediate_size", 12288},
                        {"moe_intermediate_size", 1536},
                        {"num_hidden_layers", 94},
                        {"num_attention_heads", 64},
                        {"num_key_value_heads", 4},
                        {"head_dim", 128},
                        {"num_experts", 128},
                        {"num_experts_per_tok", 8},
                        {"decoder_sparse_step", 1},
                        {"mlp_only_layers", json::array()},
                        {"norm_topk_prob", true},
                        {"vocab_size", 151936},
                        {"max_position_embeddings", 40960},
                        {"rope_theta", 1e6},
                        {"rms_norm_eps", 1e-6},
                        {"attention_bias", false},
                        {"tie_word_embeddings", false},
                        {"torch_dtype", "bfloat16"}});
    // fp8 (e4m3, 128x128 blocks) weights, bf16 activations and KV; MTP (14 B) not counted.
    p.emplace_back("DeepSeek-V3",
                   json{{"_name_or_path", "deepseek-ai/DeepSeek-V3"},
                        {"architectures", {"DeepseekV3ForCausalLM"}},
                        {"model_type", "deepseek_v3"},
                        {"hidden_size", 7168},
                        {"intermediate_size", 18432},
                        {"moe_intermediate_size", 2048},
                        {"num_hidden_layers", 61},
                        {"num_attention_heads", 128},
                        {"num_key_value_heads", 128},
                        {"n_routed_experts", 256},
                        {"n_shared_experts", 1},
                        {"num_experts_per_tok", 8},
                        {"first_k_dense_replace", 3},
                        {"moe_layer_freq", 1},
                        {"n_group", 8},
                        {"topk_group", 4},
                        {"topk_method", "noaux_tc"},
                        {"routed_scaling_factor", 2.5},
                        {"kv_lora_rank", 512},
                        {"q_lora_rank", 1536},
                        {"qk_rope_head_dim", 64},
                        {"qk_nope_head_dim", 128},
                        {"v_head_dim", 128},
                        {"num_nextn_predict_layers", 1},
                        {"vocab_size", 129280},
                        {"max_position_embeddings", 163840},
                        {"rms_norm_eps", 1e-6},
                        {"tie_word_embeddings", false},
                        {"torch_dtype", "bfloat16"},
                        {"quantization_config",
                         {{"quant_method", "fp8"},
                          {"fmt", "e4m3"},
                          {"activation_scheme", "dynamic"},
                          {"weight_block_size", {128, 128}}}}});
    // MiniMaxAI/MiniMax-M2.5's published config.json (model type minimax_m2): every layer MoE,
    // 256 experts of width intermediate_size, top-8 by a sigmoid router, no shared expert; a
    // full-width QK norm; fp8 weights in 128 x 128 blocks but the router and LM head. The MTP
    // modules (num_mtp_modules 3) are not part of the main model.
    p.emplace_back(
        "MiniMax-M2.5",
        json{{"_name_or_path", "MiniMaxAI/MiniMax-M2.5"},
             {"architectures", {"MiniMaxM2ForCausalLM"}},
             {"model_type", "minimax_m2"},
             {"hidden_size", 3072},
             {"intermediate_size", 1536},
             {"num_hidden_layers", 62},
             {"num_attention_heads", 48},
             {"num_key_value_heads", 8},
             {"head_dim", 128},
             {"num_local_experts", 256},
             {"num_experts_per_tok", 8},
             {"use_qk_norm", true},
             {"qk_norm_type", "per_layer"},
             {"vocab_size", 200064},
             {"max_position_embeddings", 196608},
             {"tie_word_embeddings", false},
             {"torch_dtype", "bfloat16"},
             {"quantization_config",
              {{"quant_method", "fp8"},
               {"fmt", "float8_e4m3fn"},
               {"activation_scheme", "dynamic"},
               {"weight_block_size", {128, 128}},
               {"modules_to_not_convert", {"gate", "e_score_correction_bias", "lm_head"}}}}});
    AddLayerKindPresets(p);
    return p;
}

} // namespace

std::vector<std::string>
ModelSpec::PresetNames()
{
    std::vector<std::string> names;
    for (const auto& [n, c] : ModelPresets())
    {
        names.push_back(n);
    }
    return names;
}

json
ModelSpec::PresetConfig(const std::string& name)
{
    std::string list;
    for (auto& [n, c] : ModelPresets())
    {
        if (NormalizeName(n) == NormalizeName(name))
        {
            json out = c;
            out["name"] = n;
            return out;
        }
        list += (list.empty() ? "" : ", ") + n;
    }
    throw fabricsim::InputError("", "preset", "one of " + list, "\"" + name + "\"");
}

} // namespace fabricsim
