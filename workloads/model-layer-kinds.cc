#include "model-layer-kinds.h"

#include "input-error.h"

#include <algorithm>

namespace fabricsim
{

using nlohmann::json;

const char*
LayerKindName(LayerKind k)
{
    switch (k)
    {
    case LayerKind::Full:
        return "full";
    case LayerKind::Sliding:
        return "sliding";
    case LayerKind::Linear:
        return "linear";
    }
    return "full";
}

json
ModelTypeDefaults(const std::string& modelType)
{
    // transformers' Gemma3TextConfig and Gemma2Config defaults; google/gemma-3-27b-it's
    // config.json names neither its vocabulary nor its pattern.
    if (modelType == "gemma3_text")
    {
        return {{"vocab_size", 262208}, {"sliding_window_pattern", 6}};
    }
    if (modelType == "gemma2")
    {
        return {{"sliding_window_pattern", 2}};
    }
    return json::object();
}

void
ReadLayerKinds(const JsonObject& o, ModelSpec& m)
{
    const bool gemma = m.modelType == "gemma2" || m.modelType.rfind("gemma3", 0) == 0;
    m.normsPerLayer = gemma ? 4 : 2;
    m.layerKinds.clear();
    m.slidingWindow = 0;
    const json* w = o.Find("sliding_window");
    if (w && !w->is_null() && o.OptionalBool("use_sliding_window", true))
    {
        m.slidingWindow = uint32_t(o.Uint("sliding_window", 1, UINT32_MAX));
    }
    std::vector<LayerKind> kinds(m.numLayers, LayerKind::Full);
    if (const json* t = o.Find("layer_types"); t && !t->is_null())
    {
        // RefuseUnmodelledKeys has checked its length and entries.
        for (size_t l = 0; l < t->size(); ++l)
        {
            const std::string kind = (*t)[l].get<std::string>();
            if (kind == "linear_attention")
            {
                kinds[l] = LayerKind::Linear;
            }
            if (kind != "sliding_attention")
            {
                continue;
            }
            if (m.slidingWindow == 0)
            {
                throw InputError(o.File(),
                                 o.Field("sliding_window"),
                                 "a window (tokens) for the sliding_attention layers",
                                 w ? DescribeJson(*w)
                                         + (w->is_null() ? ""
                                                         : " with "
                                                           "use_sliding_window "
                                                           "false")
                                   : "nothing (field missing)");
            }
            kinds[l] = LayerKind::Sliding;
        }
    }
    else if (const json* list = o.Find("attn_type_list"); list && !list->is_null())
    {
        // MiniMax: 0 lightning (linear) attention, 1 softmax attention.
        for (size_t l = 0; l < list->size(); ++l)
        {
            kinds[l] = JsonObject::AsUint((*list)[l]) == std::optional<uint64_t>(0)
                           ? LayerKind::Linear
                           : LayerKind::Full;
        }
    }
    else if (const uint64_t every = o.OptionalUint("full_attention_interval", 1, 1); every > 1)
    {
        // Qwen3-Next without layer_types: every N-th layer full, linear between.
        for (uint32_t l = 0; l < m.numLayers; ++l)
        {
            kinds[l] = (l + 1) % every == 0 ? LayerKind::Full : LayerKind::Linear;
        }
    }
    else if (m.slidingWindow > 0)
    {
        const uint64_t pattern = o.OptionalUint("sliding_window_pattern", 0, 1);
        const bool qwen2 = o.Has("max_window_layers") && o.Has("use_sliding_window");
        const uint64_t firstSliding = qwen2 ? o.OptionalUint("max_window_layers", 0) : 0;
        for (uint32_t l = 0; l < m.numLayers; ++l)
        {
            const bool full = pattern > 0 ? (l + 1) % pattern == 0 : l < firstSliding;
            kinds[l] = full ? LayerKind::Full : LayerKind::Sliding;
        }
    }
    if (std::count(kinds.begin(), kinds.end(), LayerKind::Full) < long(kinds.size()))
    {
        m.layerKinds = std::move(kinds);
    }
    // Qwen3-Next's attention always gates its output; Qwen3.5's config says so.
    m.attnOutputGate = o.OptionalBool("attn_output_gate", m.modelType == "qwen3_next");
    if (m.NumLayersOf(LayerKind::Linear) > 0 && o.Has("attn_type_list"))
    {
        // Lightning attention's heads are the model's: q, k, v of n_h x head_dim each.
        LinearAttentionSpec a;
        a.kind = LinearKind::Lightning;
        a.numKeyHeads = a.numValueHeads = m.numHeads;
        a.keyHeadDim = a.valueHeadDim = m.headDim;
        a.blockSize = uint32_t(o.OptionalUint("block_size", 256, 1, UINT32_MAX));
        m.linear = a;
    }
    else if (m.NumLayersOf(LayerKind::Linear) > 0)
    {
        LinearAttentionSpec a;
        a.numKeyHeads = uint32_t(o.Uint("linear_num_key_heads", 1, UINT32_MAX));
        a.numValueHeads = uint32_t(o.Uint("linear_num_value_heads", 1, UINT32_MAX));
        a.keyHeadDim = uint32_t(o.Uint("linear_key_head_dim", 1, UINT32_MAX));
        a.valueHeadDim = uint32_t(o.Uint("linear_value_head_dim", 1, UINT32_MAX));
        a.convKernel = uint32_t(o.Uint("linear_conv_kernel_dim", 1, UINT32_MAX));
        if (const json* d = o.Find("mamba_ssm_dtype"); d && !d->is_null())
        {
            a.stateDtype = d->is_string() ? ParseDType(d->get<std::string>()) : std::nullopt;
            if (!a.stateDtype)
            {
                o.Fail("mamba_ssm_dtype", "a dtype (float32, bfloat16, ...)", DescribeJson(*d));
            }
        }
        if (a.numValueHeads % a.numKeyHeads != 0)
        {
            o.Fail("linear_num_value_heads",
                   "a multiple of linear_num_key_heads " + std::to_string(a.numKeyHeads),
                   std::to_string(a.numValueHeads));
        }
        m.linear = a;
    }
}

LayerKind
ModelSpec::KindOf(uint32_t layer) const
{
    return layer < layerKinds.size() ? layerKinds[layer] : LayerKind::Full;
}

uint32_t
ModelSpec::NumLayersOf(LayerKind k) const
{
    if (layerKinds.empty())
    {
        return k == LayerKind::Full ? numLayers : 0;
    }
    return uint32_t(std::count(layerKinds.begin(), layerKinds.end(), k));
}

uint64_t
ModelSpec::KeysAt(uint32_t layer, uint64_t pos) const
{
    return KindOf(layer) == LayerKind::Sliding ? std::min<uint64_t>(pos + 1, slidingWindow)
                                               : pos + 1;
}

uint64_t
ModelSpec::KvTokensHeld(uint32_t layer, uint64_t tokens) const
{
    switch (KindOf(layer))
    {
    case LayerKind::Sliding:
        return std::min<uint64_t>(tokens, slidingWindow);
    case LayerKind::Linear:
        return 0; // a fixed state instead (LinearStateBytesPerLayer)
    case LayerKind::Full:
        break;
    }
    return tokens;
}

double
ModelSpec::KvBytesPerSequence(uint64_t tokens) const
{
    double held = 0;
    for (uint32_t l = 0; l < numLayers; ++l)
    {
        held += double(KvTokensHeld(l, tokens));
    }
    return held * KvBytesPerTokenPerLayer();
}

uint64_t
ModelSpec::LinearAttentionParams() const
{
    if (!linear)
    {
        return 0;
    }
    const LinearAttentionSpec& a = *linear;
    const uint64_t h = hiddenSize;
    const uint64_t nv = a.numValueHeads;
    if (a.kind == LinearKind::Lightning)
    {
        // qkv_proj, output_gate, out_proj and the RMSNorm over every head's output.
        return h * 3 * a.ValueDim() + h * a.ValueDim() + a.ValueDim() * h + a.ValueDim();
    }
    const uint64_t in = h * (2 * a.KeyDim() + 2 * a.ValueDim() + 2 * nv);
    return in + a.ConvDim() * a.convKernel + 2 * nv + a.valueHeadDim + a.ValueDim() * h;
}

uint64_t
ModelSpec::MixerParams(uint32_t layer) const
{
    return KindOf(layer) == LayerKind::Linear ? LinearAttentionParams() : AttentionParams();
}

double
ModelSpec::LinearStateBytesPerLayer() const
{
    if (!linear)
    {
        return 0;
    }
    const LinearAttentionSpec& a = *linear;
    const double recurrent = double(a.numValueHeads) * a.keyHeadDim * a.valueHeadDim;
    const double conv = a.convKernel > 0 ? double(a.ConvDim()) * (a.convKernel - 1) : 0.0;
    return recurrent * DTypeBytes(a.stateDtype.value_or(activationDtype))
           + conv * DTypeBytes(activationDtype);
}

} // namespace fabricsim
