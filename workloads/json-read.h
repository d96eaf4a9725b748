/*
 * What the workload parsers still keep beside the common JSON layer (json-reader.h, which does
 * the typed reads, units.h the quantities): JSON files and name normalisation.
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
 * \brief Parse a JSON file; InputError(path, "", ...) when unreadable or malformed.
 */
nlohmann::json LoadJsonFile(const std::string& path);

/// The directory part of \p file, with its trailing slash ("" when none): where paths a
/// scenario file gives are relative to.
std::string DirOf(const std::string& file);

/**
 * \brief Lower-case \p s and drop everything but letters and digits, so that "Llama-3.1-405B",
 * "llama_3.1_405b" and "LLAMA 3.1 405B" compare equal. A leading "org/" is dropped.
 */
std::string NormalizeName(const std::string& s);

} // namespace fabricsim

#endif
