// What the CLI test files share: scenario files written for a run, and a small inference
// scenario.
#ifndef FABRICSIM_TESTS_CLI_TEST_UTIL_H
#define FABRICSIM_TESTS_CLI_TEST_UTIL_H

#include "scenario-runner.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <string>

namespace fabricsim::test
{

/// Writes \p j to DIR/NAME; returns the path.
inline std::string
WriteScenario(const std::string& dir, const std::string& name, const nlohmann::json& j)
{
    std::string p = dir + "/" + name;
    std::ofstream(p) << j.dump(2);
    return p;
}

/// Qwen3-30B-A3B, DP 8 x EP 8 over 2 servers x 4 H100 on a rail-optimised 400G fabric.
inline nlohmann::json
SmallInference(const nlohmann::json& requests)
{
    return nlohmann::json{
        {"seed", 1},
        {"model", "Qwen3-30B-A3B"},
        {"hardware", "H100"},
        {"parallelism", {{"tp", 1}, {"dp", 8}, {"ep", 8}, {"dp_attention", true}}},
        {"serving", {{"requests", requests}}},
        {"topology", SmallRailTopology()}};
}

} // namespace fabricsim::test

#endif
