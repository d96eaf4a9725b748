/*
 * What the workload parsers still keep beside the common JSON layer (json-reader.h, which does
 * the typed reads): where an object sits (JsonWhere, until the parsers carry JsonObjects),
 * quantities with units, JSON files and name normalisation.
 */
#ifndef FABRICSIM_WORKLOADS_JSON_READ_H
#define FABRICSIM_WORKLOADS_JSON_READ_H

#include "json-describe.h"
#include "json-reader.h"
#include "units.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace fabricsim
{

/**
 * \brief Where a JSON object came from: file name (may be empty for inline input) and the path
 * of the object inside it (empty at the root, else like "model.encoder").
 */
struct JsonWhere
{
    std::string file;   //!< source file, "" for inline JSON
    std::string prefix; //!< path of the object inside the file, "" at the root

    /// Path of \p key inside this object, e.g. "model.encoder.hidden_size".
    std::string Field(const std::string& key) const;
    /// The location of the child object \p key.
    JsonWhere Child(const std::string& key) const;
};

/**
 * \brief The field \p key of \p obj, or nullptr when absent or JSON null.
 */
const nlohmann::json* FindField(const nlohmann::json& obj, const std::string& key);

/**
 * \brief A quantity with units (see ParseQuantity) that must be finite and > 0 (>= 0 when
 * \p allowZero); a JSON number is taken in base units.
 */
double ReadQuantity(const nlohmann::json& v,
                    UnitKind kind,
                    const std::string& file,
                    const std::string& field,
                    bool allowZero = false);

/**
 * \brief Parse a JSON file; InputError(path, "", ...) when unreadable or malformed.
 */
nlohmann::json LoadJsonFile(const std::string& path);

/**
 * \brief Lower-case \p s and drop everything but letters and digits, so that "Llama-3.1-405B",
 * "llama_3.1_405b" and "LLAMA 3.1 405B" compare equal. A leading "org/" is dropped.
 */
std::string NormalizeName(const std::string& s);

} // namespace fabricsim

#endif
