// Recorded step programs replay to the same step times; the records round-trip through JSON;
// the timeline is a Chrome trace.

#include "../unique-temp-path.h"
#include "input-error.h"
#include "program-replay.h"
#include "serving-test-util.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace fabricsim
{
namespace
{

using nlohmann::json;

void
ExpectReplayMatches(const InferenceScenario& sc, const FakeCollectives::Params& fp = {})
{
    ServingResult original = RunOnFake(sc, fp);
    ASSERT_FALSE(original.programTrace.empty());
    // Through the file format, as a user would replay it.
    std::string path = test::UniqueTempPath("programs.jsonl");
    {
        std::ofstream out(path);
        original.WriteProgramTrace(out);
    }
    ProgramReplay replay = ProgramReplay::Load(path);
    EXPECT_EQ(replay.NumSteps(), original.steps.size());
    FakeCollectives api(fp);
    replay.Start(api);
    api.Run();
    ReplayResult r = replay.Finish();
    EXPECT_TRUE(r.incomplete.empty()) << (r.incomplete.empty() ? "" : r.incomplete[0]);
    ASSERT_EQ(r.steps.size(), original.steps.size());
    for (const auto& s : original.steps)
    {
        const StepStats& st = r.steps.at(s.step);
        EXPECT_EQ(st.launchPs, s.launchPs) << "step " << s.step;
        EXPECT_EQ(st.endPs, s.endPs) << "step " << s.step;
    }
}

// Issue 5 (5): replaying a recorded trace with nothing changed reproduces the step times.
TEST(ProgramReplay, ReproducesTheOriginalStepTimes)
{
    ExpectReplayMatches(
        MakeScenario({{"model", "Llama-3-70B"},
                      {"parallelism", {{"tp", 8}}},
                      {"serving",
                       {{"requests",
                         {{"rate_per_s", 40},
                          {"count", 12},
                          {"prompt_tokens", {{"dist", "uniform"}, {"min", 100}, {"max", 3000}}},
                          {"output_tokens", 12}}},
                        {"record", {{"programs", true}}}}}}));
}

TEST(ProgramReplay, ReproducesDisaggregatedAndOverlappedRuns)
{
    for (const std::string mode : {"bulk", "layerwise"})
    {
        ExpectReplayMatches(MakeScenario(
            {{"serving",
              {{"requests",
                {{"rate_per_s", 50}, {"count", 10}, {"prompt_tokens", 700}, {"output_tokens", 6}}},
               {"kv_cache", {{"num_blocks", 200}}},
               {"disaggregation",
                {{"prefill", {{"parallelism", {{"tp", 2}}}}},
                 {"decode", {{"parallelism", {{"tp", 1}, {"pp", 2}}}}},
                 {"kv_transfer", mode}}},
               {"record", {{"programs", true}}}}}}));
    }
    FakeCollectives::Params fp;
    fp.accelsPerServer = 4;
    ExpectReplayMatches(
        MakeScenario(
            {{"model", "Qwen3-30B-A3B"},
             {"parallelism", {{"tp", 4}, {"ep", 8}, {"dp", 2}, {"dp_attention", true}}},
             {"serving",
              {{"requests",
                {{"rate_per_s", 100}, {"count", 6}, {"prompt_tokens", 300}, {"output_tokens", 4}}},
               {"execution", {{"ep_overlap", "two_batch"}}},
               {"record", {{"programs", true}}}}}}),
        fp);
}

// On a faster fabric the same programs finish earlier: replay shows the new times.
TEST(ProgramReplay, FasterFabricShortensReplayedSteps)
{
    InferenceScenario sc = MakeScenario(
        {{"model", "Llama-3-70B"},
         {"parallelism", {{"tp", 8}}},
         {"serving",
          {{"requests",
            {{"rate_per_s", 0}, {"count", 4}, {"prompt_tokens", 512}, {"output_tokens", 4}}},
           {"placement", {{"tp", "across_servers"}}},
           {"record", {{"programs", true}}}}}});
    ServingResult original = RunOnFake(sc);
    FakeCollectives::Params fast;
    fast.nicBw = 200e9;
    FakeCollectives api(fast);
    ReplayResult r = ReplayPrograms(original.programTrace, api, [&]() { api.Run(); });
    ASSERT_EQ(r.steps.size(), original.steps.size());
    EXPECT_LT(r.steps.rbegin()->second.endPs, original.steps.back().endPs);
}

TEST(ProgramReplay, ProgramsRoundTripThroughJson)
{
    InferenceScenario sc = MakeScenario({{"serving",
                                          {{"requests", {{"count", 2}}},
                                           {"kv_cache", {{"placement", "host"}}},
                                           {"record", {{"programs", true}}}}}});
    ServingResult r = RunOnFake(sc);
    for (const auto& line : r.programTrace)
    {
        if (line["type"] == "step")
        {
            EXPECT_EQ(StepProgram::FromJson(JsonObject(line, "t", "")).ToJson(), line);
        }
        else
        {
            EXPECT_EQ(TransferRecord::FromJson(JsonObject(line, "t", "")).ToJson(), line);
        }
    }
}

TEST(ProgramReplay, MalformedTracesAreInputErrors)
{
    auto field = [](const std::vector<json>& lines)
    {
        try
        {
            ProgramReplay replay(lines, "t.jsonl");
        }
        catch (const fabricsim::InputError& e)
        {
            return e.Field();
        }
        return std::string("no error");
    };
    json step = {{"type", "step"},
                 {"step", 0},
                 {"ranks", {{{"rank", 0}, {"items", {{{"t", "c"}, {"ps", 10}}}}}}}};
    EXPECT_EQ(field({step}), "no error");
    EXPECT_EQ(field({step, step}), "line 2");
    EXPECT_EQ(field({json{{"type", "flow"}}}), "line 1");
    json bad = step;
    bad["ranks"][0]["items"][0]["t"] = "q";
    // The common JSON layer names the field inside the record, not only its line.
    EXPECT_EQ(field({bad}), "line 1.ranks[0].items[0].t");
    json big = step;
    big["ranks"][0]["items"][0]["ps"] = -5;
    EXPECT_EQ(field({big}), "line 1.ranks[0].items[0].ps");
    json dep = step;
    dep["deps"] = {{"after_steps", {5}}};
    EXPECT_EQ(field({dep}), "step 0");
    std::string path = test::UniqueTempPath("broken.jsonl");
    std::ofstream(path) << step.dump() << "\n{not json\n";
    EXPECT_THROW(ProgramReplay::Load(path), fabricsim::InputError);
}

TEST(Timeline, ChromeTraceHasEveryRankAndStep)
{
    InferenceScenario sc = MakeScenario(
        {{"parallelism", {{"tp", 2}}},
         {"serving",
          {{"requests", {{"count", 2}, {"output_tokens", 3}}}, {"record", {{"timeline", true}}}}}});
    ServingResult r = RunOnFake(sc);
    ASSERT_TRUE(r.timeline);
    json t = r.timeline->ToJson();
    ASSERT_TRUE(t["traceEvents"].is_array());
    std::set<uint32_t> computePids;
    size_t comm = 0;
    size_t steps = 0;
    for (const auto& e : t["traceEvents"])
    {
        if (e["ph"] != "X")
        {
            continue;
        }
        EXPECT_GE(e["dur"].get<double>(), 0);
        if (e["cat"] == "compute")
        {
            computePids.insert(e["pid"].get<uint32_t>());
        }
        comm += e["cat"] == "comm" ? 1 : 0;
        steps += e["cat"] == "step" ? 1 : 0;
    }
    EXPECT_EQ(computePids, (std::set<uint32_t>{0, 1}));
    EXPECT_GT(comm, 0u);
    EXPECT_EQ(steps, r.steps.size());
}

} // namespace
} // namespace fabricsim

namespace fabricsim
{
namespace
{

// Recorded programs streamed as the run goes (what `run --record` does: held, the docs' example
// took gigabytes) are the same lines, in the same order, as the ones a run keeps, transfers
// included; the run keeps none of them then.
TEST(ProgramReplay, StreamedProgramsAreTheLinesARunKeeps)
{
    const InferenceScenario sc = MakeScenario(
        {{"serving",
          {{"requests",
            {{"rate_per_s", 50}, {"count", 6}, {"prompt_tokens", 300}, {"output_tokens", 5}}},
           {"disaggregation",
            {{"prefill", {{"parallelism", {{"tp", 2}}}}},
             {"decode", {{"parallelism", {{"tp", 2}}}}},
             {"kv_transfer", "bulk"}}},
           {"record", {{"programs", true}}}}}});
    const ServingResult kept = RunOnFake(sc);
    std::ostringstream expected;
    kept.WriteProgramTrace(expected);

    std::ostringstream streamed;
    ServingHooks hooks;
    hooks.programs = &streamed;
    FakeCollectives api(FakeCollectives::Params{});
    const ServingResult r = RunServing(
        sc, api, [&]() { api.Run(); }, hooks);
    EXPECT_TRUE(r.programTrace.empty());
    EXPECT_EQ(streamed.str(), expected.str());
    EXPECT_NE(streamed.str().find("\"type\":\"transfer\""), std::string::npos);
    EXPECT_EQ(r.steps.size(), kept.steps.size());
}

} // namespace
} // namespace fabricsim
