/*
 * Per-layer attention kinds from a config.json (layer_types, sliding_window with
 * sliding_window_pattern or max_window_layers) and the defaults a model type's config class
 * supplies for keys its published config.json leaves out.
 */
#ifndef FABRICSIM_WORKLOADS_MODEL_LAYER_KINDS_H
#define FABRICSIM_WORKLOADS_MODEL_LAYER_KINDS_H

#include "json-read.h"
#include "model-spec.h"

#include <nlohmann/json.hpp>

#include <string>

namespace fabricsim
{

/**
 * \brief The keys HuggingFace's config class of \p modelType fills in when config.json leaves
 * them out, for the model types whose published configs rely on it (gemma3_text: vocab_size
 * 262208, sliding_window_pattern 6; gemma2: pattern 2). Empty otherwise. (Gemma's tied
 * embeddings are FromConfig's default for model types gemma*.)
 */
nlohmann::json ModelTypeDefaults(const std::string& modelType);

/**
 * \brief Fill m.layerKinds, m.slidingWindow and m.normsPerLayer from \p o (m.numLayers and
 * m.modelType already read). The window applies when sliding_window is set and
 * use_sliding_window is not false. Kinds: layer_types as listed; else with a window, Gemma's
 * sliding_window_pattern N (layer l full iff (l + 1) mod N = 0), Qwen2's max_window_layers M
 * (layer l sliding iff l >= M), or every layer sliding (Mistral). InputError naming the field
 * for a sliding layer without a window.
 */
void ReadLayerKinds(const JsonObject& o, ModelSpec& m);

} // namespace fabricsim

#endif
