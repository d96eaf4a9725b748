/*
 * Helpers shared by the serving tests: scenario objects and running a scenario on the fake
 * Collective API.
 */
#ifndef FABRICSIM_TESTS_SERVING_TEST_UTIL_H
#define FABRICSIM_TESTS_SERVING_TEST_UTIL_H

#include "fake-collectives.h"
#include "inference-scenario.h"
#include "serving-simulation.h"
#include "step-executor.h"
#include "step-program-builder.h"

#include <nlohmann/json.hpp>

namespace fabricsim
{

/**
 * \brief A scenario object: Llama-3-8B on H100 at TP 1, ten constant-length requests, merged
 * with \p patch (JSON merge patch: objects merge, other values replace, null deletes).
 */
nlohmann::json ScenarioJson(const nlohmann::json& patch = nlohmann::json::object());

/// Parse ScenarioJson(patch).
InferenceScenario MakeScenario(const nlohmann::json& patch = nlohmann::json::object());

/// Run \p sc on a fresh FakeCollectives with \p params.
ServingResult RunOnFake(const InferenceScenario& sc,
                        const FakeCollectives::Params& params = FakeCollectives::Params());

/// \p groups attention groups of \p par on consecutive hosts from \p first.
EngineLayout Layout(const ParallelismSpec& par, uint32_t groups = 1, uint32_t first = 0);

/// Run one step program on \p api to the end and return its statistics.
StepStats RunStep(FakeCollectives& api, const StepProgram& prog);

} // namespace fabricsim

#endif
