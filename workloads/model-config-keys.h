/*
 * Which config.json keys the model reader uses, which it refuses (they change cost and are not
 * modelled), and which it passes over (listed in the run's output, never silently).
 */
#ifndef FABRICSIM_WORKLOADS_MODEL_CONFIG_KEYS_H
#define FABRICSIM_WORKLOADS_MODEL_CONFIG_KEYS_H

#include "json-read.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace fabricsim
{

/// The config.json keys ModelSpec::FromConfig reads.
const std::vector<std::string>& ModelConfigKeysRead();

/**
 * \brief InputError (exit 2) for the first key of \p o that changes what the model costs and
 * that fabricsim does not model: layer kinds other than full, sliding-window and linear
 * attention, Kimi Linear's linear_attn_config, sparse (indexed) or chunked attention, MLP
 * biases, a quantization method other than fp8.
 */
void RefuseUnmodelledKeys(const JsonObject& o);

/**
 * \brief The keys of \p config the reader passes over, sorted: those of a nested text model as
 * "text_config.key", an outer key the nested one shadows by its own name.
 */
std::vector<std::string> IgnoredConfigKeys(const nlohmann::json& config);

/**
 * \brief A multimodal checkpoint's config.json (Qwen3.5, Gemma 3, Llama 4) holds the language
 * model under text_config beside vision_config. Returns the text object, or nullptr when
 * \p config is flat (no text_config); InputError when text_config is not an object.
 */
const nlohmann::json* NestedTextConfig(const JsonObject& config);

/**
 * \brief Merge \p overrides over \p base (JSON merge patch). A nested base takes each override
 * where it has the key, the outer object for keys only it has, else the text model.
 */
void MergeModelOverrides(nlohmann::json& base, const nlohmann::json& overrides);

} // namespace fabricsim

#endif
