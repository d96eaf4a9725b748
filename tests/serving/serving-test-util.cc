#include "serving-test-util.h"

namespace fabricsim
{

using nlohmann::json;

json
ScenarioJson(const json& patch)
{
    json j = {
        {"model", "Llama-3-8B"},
        {"hardware", "H100"},
        {"parallelism", {{"tp", 1}}},
        {"seed", 7},
        {"serving",
         {{"requests",
           {{"rate_per_s", 10}, {"count", 10}, {"prompt_tokens", 512}, {"output_tokens", 32}}}}}};
    j.merge_patch(patch);
    return j;
}

InferenceScenario
MakeScenario(const json& patch)
{
    return InferenceScenario::FromJson(ScenarioJson(patch), "test.json");
}

ServingResult
RunOnFake(const InferenceScenario& sc, const FakeCollectives::Params& params)
{
    FakeCollectives api(params);
    return RunServing(sc, api, [&]() { api.Run(); });
}

} // namespace fabricsim
