#include "model-config-keys.h"

#include "input-error.h"

#include <algorithm>

namespace fabricsim
{

using nlohmann::json;

namespace
{

/// Expected-value text of a refused key: what would be accepted, and why.
std::string
NotModelled(const std::string& accepted, const std::string& what)
{
    return accepted + " (" + what + " is not modelled yet; see docs/workloads.md)";
}

/// Layer-kind lists: every entry must name full attention until the other kinds are modelled.
void
RefuseLayerKinds(const JsonObject& o)
{
    const uint64_t layers = o.OptionalUint("num_hidden_layers", 0);
    if (const json* v = o.Find("layer_types"); v && !v->is_null())
    {
        if (!v->is_array() || (layers > 0 && v->size() != layers))
        {
            o.Fail("layer_types",
                   "an array of " + std::to_string(layers) + " layer kinds (num_hidden_layers)",
                   v->is_array() ? std::to_string(v->size()) + " entries" : DescribeJson(*v));
        }
        for (size_t i = 0; i < v->size(); ++i)
        {
            const json& e = (*v)[i];
            const std::string kind = e.is_string() ? e.get<std::string>() : "";
            if (kind != "full_attention" && kind != "sliding_attention"
                && kind != "linear_attention")
            {
                throw InputError(o.File(),
                                 JsonIndex(o.Field("layer_types"), i),
                                 NotModelled("\"full_attention\", \"sliding_attention\" or "
                                             "\"linear_attention\"",
                                             "any other layer kind"),
                                 DescribeJson(e));
            }
        }
    }
    if (const json* v = o.Find("attn_type_list"); v && !v->is_null())
    {
        if (!v->is_array() || (layers > 0 && v->size() != layers))
        {
            o.Fail("attn_type_list",
                   "an array of " + std::to_string(layers)
                       + " layer kinds, 0 (linear) or 1 (full) (num_hidden_layers)",
                   v->is_array() ? std::to_string(v->size()) + " entries" : DescribeJson(*v));
        }
        for (size_t i = 0; i < v->size(); ++i)
        {
            const json& e = (*v)[i];
            const std::optional<uint64_t> kind = JsonObject::AsUint(e);
            if (!kind || *kind > 1)
            {
                throw InputError(o.File(),
                                 JsonIndex(o.Field("attn_type_list"), i),
                                 "0 (lightning attention) or 1 (full attention)",
                                 DescribeJson(e));
            }
        }
    }
}

} // namespace

const std::vector<std::string>&
ModelConfigKeysRead()
{
    static const std::vector<std::string> keys = {
        "_name_or_path",
        "activation_dtype",
        "architectures",
        "attention_bias",
        "attention_chunk_size",
        "attn_output_gate",
        "attn_type_list",
        "block_size",
        "decoder_sparse_step",
        "dtype",
        "encoder",
        "first_k_dense_replace",
        "full_attention_interval",
        "head_dim",
        "hidden_size",
        "index_topk",
        "intermediate_size",
        "kv_cache_dtype",
        "kv_lora_rank",
        "layer_types",
        "linear_attn_config", // the linear_* keys are refused, never passed over
        "linear_conv_kernel_dim",
        "linear_key_head_dim",
        "linear_num_key_heads",
        "linear_num_value_heads",
        "linear_value_head_dim",
        "mamba_ssm_dtype",
        "max_window_layers",
        "mlp_bias",
        "mlp_only_layers",
        "model_type",
        "moe_intermediate_size",
        "moe_layer_freq",
        "n_group",
        "n_routed_experts",
        "n_shared_experts",
        "name",
        "num_attention_heads",
        "num_experts",
        "num_experts_per_tok",
        "num_hidden_layers",
        "num_key_value_heads",
        "num_local_experts",
        "q_lora_rank",
        "qk_nope_head_dim",
        "qk_norm",
        "qk_norm_type",
        "qk_rope_head_dim",
        "quantization_config",
        "shared_expert_intermediate_size",
        "sliding_window",
        "sliding_window_pattern",
        "tie_word_embeddings",
        "topk_group",
        "topk_method",
        "torch_dtype",
        "use_qk_norm",
        "use_sliding_window",
        "v_head_dim",
        "vocab_size",
        "weight_dtype",
    };
    return keys;
}

void
RefuseUnmodelledKeys(const JsonObject& o)
{
    RefuseLayerKinds(o);
    for (const char* k : {"linear_attn_config", "index_topk", "attention_chunk_size"})
    {
        if (const json* v = o.Find(k); v && !v->is_null())
        {
            o.Fail(
                k,
                NotModelled("null",
                            std::string(k) == "index_topk" ? "sparse attention over indexed tokens"
                            : std::string(k) == "attention_chunk_size" ? "chunked local attention"
                                                                       : "linear attention"),
                DescribeJson(*v));
        }
    }
    if (o.OptionalBool("mlp_bias", false))
    {
        o.Fail("mlp_bias", NotModelled("false", "a bias on the MLP projections"), "true");
    }
    if (const json* q = o.Find("quantization_config"); q && q->is_object())
    {
        const JsonObject qo = o.Object("quantization_config");
        const std::string method = qo.OptionalString("quant_method", "");
        if (method != "fp8")
        {
            qo.Fail("quant_method",
                    NotModelled("\"fp8\"", "a quantization method other than fp8"),
                    method.empty() ? "nothing (field missing)" : "\"" + method + "\"");
        }
    }
}

const json*
NestedTextConfig(const JsonObject& config)
{
    const json* t = config.Find("text_config");
    if (!t || t->is_null())
    {
        return nullptr;
    }
    if (!t->is_object())
    {
        config.Fail("text_config", "the language model's config object", DescribeJson(*t));
    }
    return t;
}

std::vector<std::string>
IgnoredConfigKeys(const json& config)
{
    const std::vector<std::string>& read = ModelConfigKeysRead();
    auto isRead = [&](const std::string& k)
    {
        return std::find(read.begin(), read.end(), k) != read.end();
    };
    const json* text = config.contains("text_config") && config["text_config"].is_object()
                           ? &config["text_config"]
                           : nullptr;
    std::vector<std::string> out;
    for (auto it = config.begin(); it != config.end(); ++it)
    {
        if (it.key() == "text_config")
        {
            continue;
        }
        // The text model's own value wins over an outer one of the same name.
        if ((text && text->contains(it.key())) || !isRead(it.key()))
        {
            out.push_back(it.key());
        }
    }
    if (text)
    {
        for (auto it = text->begin(); it != text->end(); ++it)
        {
            if (!isRead(it.key()))
            {
                out.push_back("text_config." + it.key());
            }
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

void
MergeModelOverrides(json& base, const json& overrides)
{
    if (!base.contains("text_config") || !base["text_config"].is_object())
    {
        base.merge_patch(overrides);
        return;
    }
    json& text = base["text_config"];
    for (auto it = overrides.begin(); it != overrides.end(); ++it)
    {
        const bool outer = !text.contains(it.key()) && base.contains(it.key());
        (outer ? base : text).merge_patch(json{{it.key(), it.value()}});
    }
}

} // namespace fabricsim
