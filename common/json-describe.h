/*
 * The "found" part of an input error when what was found is a JSON value: one description for
 * every layer, so that the same bad value reads the same wherever it is reported.
 */
#ifndef FABRICSIM_COMMON_JSON_DESCRIBE_H
#define FABRICSIM_COMMON_JSON_DESCRIBE_H

#include <nlohmann/json.hpp>

#include <string>

namespace fabricsim
{

/**
 * \brief Compact JSON text of \p value, cut to 60 characters ("..." at the end when cut); invalid
 * UTF-8 is replaced rather than thrown, since the text only reports an error.
 */
std::string DescribeJson(const nlohmann::json& value);

} // namespace fabricsim

#endif
