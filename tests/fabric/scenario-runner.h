// Runs a scenario in-process for tests and returns its summary.json.
#ifndef FABRICSIM_TEST_SCENARIO_RUNNER_H
#define FABRICSIM_TEST_SCENARIO_RUNNER_H

#include <nlohmann/json.hpp>

#include <string>

namespace fabricsim::test
{

/// A fresh, empty temporary directory (removed by the OS's tmp cleaning).
std::string TempDir(const std::string& tag);

/// Run `scenario` (JSON object) with output into `outDir`; returns summary.json.
nlohmann::json RunScenario(const nlohmann::json& scenario, const std::string& outDir);

/// Run the fabricsim binary with `args`; returns the exit code, stdout+stderr in `output`.
int RunCli(const std::string& args, std::string& output);

std::string ReadFile(const std::string& path);

/// Two servers of four accelerators on a rail-optimised fabric (one spine, 400G links with 1 us
/// delay, 450 GB/s scale-up): the small cluster the inference CLI tests run on.
nlohmann::json SmallRailTopology();

} // namespace fabricsim::test

#endif
