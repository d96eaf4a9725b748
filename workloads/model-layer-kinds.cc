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
            if ((*t)[l].get<std::string>() != "sliding_attention")
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
    return KindOf(layer) == LayerKind::Sliding ? std::min<uint64_t>(tokens, slidingWindow) : tokens;
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

} // namespace fabricsim
