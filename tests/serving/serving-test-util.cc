#include "serving-test-util.h"

#include <gtest/gtest.h>

#include <memory>

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

EngineLayout
Layout(const ParallelismSpec& par, uint32_t groups, uint32_t first)
{
    EngineLayout l;
    l.par = par;
    l.groups = groups;
    for (uint32_t i = 0; i < groups * par.tp * par.pp; ++i)
    {
        l.hosts.push_back(first + i);
    }
    return l;
}

StepStats
RunStep(FakeCollectives& api, const StepProgram& prog)
{
    StepExecutor exec(api);
    StepStats out;
    bool done = false;
    exec.Submit(std::make_shared<StepProgram>(prog),
                [&](const StepStats& s)
                {
                    out = s;
                    done = true;
                });
    api.Run();
    EXPECT_TRUE(done) << "step did not finish";
    return out;
}

} // namespace fabricsim
