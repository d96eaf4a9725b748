/*
 * A scenario document read whole: the fabric part (topology, transport, switch, traffic,
 * monitors: fabric-scenario.h) and, when a "serving" block is present, the inference part
 * (model, hardware, parallelism, serving: workloads/serving/inference-scenario.h). The entry
 * point of a program that runs a scenario file (docs/scenario-scripts.md, "A scenario file
 * from C++").
 */
#ifndef FABRICSIM_SCENARIO_H
#define FABRICSIM_SCENARIO_H

#include "fabric-scenario.h"
#include "inference-scenario.h"
#include "json-reader.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace fabricsim
{

struct Scenario
{
    nlohmann::json document; ///< as read (after --set), for provenance.json
    FabricScenario fabric;
    std::optional<InferenceScenario> inference; ///< present when "serving" is
};

/**
 * Read and check a scenario document (LoadScenarioJson gives one from a file): every key of
 * both parts; the inference part first, as the serving run needs it. Throws
 * fabricsim::InputError (file, field, expected, found) on any problem.
 */
Scenario ReadScenario(const nlohmann::json& doc, const std::string& file);

/// The top-level keys of a scenario: those of a fabric scenario, and model, hardware,
/// parallelism and serving when "serving" is present (an inference scenario). An unknown key's
/// error lists them all.
void CheckScenarioKeys(const JsonObject& root);

} // namespace fabricsim

#endif
