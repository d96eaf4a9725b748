// Async scheduling (vLLM's default): the engine decides a step while the previous one runs, so
// a request it takes mid-step joins the step after next, unless the GPU would otherwise idle.
// What the measured runs call queued and scheduled is recorded the same way.

#include "input-error.h"
#include "serving-scheduler.h"
#include "serving-test-util.h"

#include <gtest/gtest.h>

namespace fabricsim
{
namespace
{

using nlohmann::json;

TEST(AsyncScheduling, SchedulerAdmitsOnlyWhatItHeldWhenItDecided)
{
    BatchingSpec b;
    ServingScheduler s(b, 1000, 16);
    SequenceState first;
    first.id = 1;
    first.promptTokens = 100;
    first.targetTokens = 4;
    first.enqueuedPs = 10;
    SequenceState second = first;
    second.id = 2;
    second.enqueuedPs = 30;
    s.Enqueue(first);
    s.Enqueue(second);
    // Decided at 20: the one taken at 30 waits, and FCFS nothing behind it passes.
    ScheduledBatch at20 = s.Schedule(20);
    ASSERT_EQ(at20.sequences.size(), 1u);
    EXPECT_EQ(at20.sequences[0].id, 1u);
    s.Complete(at20);
    ScheduledBatch at30 = s.Schedule(30);
    ASSERT_EQ(at30.sequences.size(), 2u);
    EXPECT_EQ(at30.sequences[1].id, 2u);
    EXPECT_TRUE(at30.sequences[1].prefill);
}

/// Two requests, the second \p gapFraction of the first's prefill step after it; the first
/// generates \p outputA tokens.
ServingResult
RunTwo(double gapFraction, uint32_t outputA, bool async)
{
    auto scenario = [&](uint32_t count, double rate)
    {
        return MakeScenario({{"serving",
                              {{"requests",
                                {{"count", count},
                                 {"rate_per_s", rate},
                                 {"arrival", "uniform"},
                                 {"output_tokens", outputA}}},
                               {"execution", {{"async_scheduling", async}}}}}});
    };
    ServingResult alone = RunOnFake(scenario(1, 1));
    const double prefillS = double(alone.steps.at(0).DurationPs()) * 1e-12;
    return RunOnFake(scenario(2, 1.0 / (gapFraction * prefillS)));
}

TEST(AsyncScheduling, ARequestTakenMidStepJoinsTheStepAfterNext)
{
    for (bool async : {true, false})
    {
        ServingResult r = RunTwo(0.5, 8, async);
        ASSERT_EQ(r.Completed(), 2u);
        const RequestRecord& a = r.requests[0];
        const RequestRecord& b = r.requests[1];
        // An idle engine takes and schedules the first at once.
        EXPECT_EQ(a.queuedPs, a.arrivalPs);
        EXPECT_EQ(a.scheduledPs, a.arrivalPs);
        EXPECT_EQ(a.prefillStartPs, a.arrivalPs);
        // The second arrives mid-prefill; the engine's loop takes it when that step ends.
        ASSERT_GT(b.arrivalPs, r.steps[0].launchPs);
        ASSERT_LT(b.arrivalPs, r.steps[0].endPs);
        EXPECT_EQ(b.queuedPs, r.steps[0].endPs);
        EXPECT_EQ(b.scheduledPs, b.queuedPs);
        // Synchronous: it runs in step 1. Async: step 1 was decided when step 0 launched, so
        // step 1 is the first's decode alone and the second's prompt runs in step 2.
        const size_t joins = async ? 2 : 1;
        EXPECT_EQ(b.prefillStartPs, r.steps[joins].launchPs) << async;
        EXPECT_EQ(b.tokenPs.front(), r.steps[joins].endPs) << async;
        EXPECT_EQ(r.steps[1].prefillTokens, async ? 0u : 512u) << async;
    }
}

TEST(AsyncScheduling, AnEngineWithNothingDecidedSchedulesAtOnce)
{
    // The first generates two tokens: step 0 (prefill) and step 1 (its last decode). The second
    // arrives during step 1; when step 1 ends nothing was decided for step 2, so its prompt
    // launches then rather than a step later.
    ServingResult alone = RunTwo(0.5, 2, true);
    const double prefillOverStep1
        = double(alone.steps.at(0).DurationPs()) / double(alone.steps.at(1).DurationPs());
    ServingResult r = RunTwo(1.0 + 0.5 / prefillOverStep1, 2, true);
    ASSERT_EQ(r.Completed(), 2u);
    const RequestRecord& b = r.requests[1];
    ASSERT_GT(b.arrivalPs, r.steps[1].launchPs);
    ASSERT_LT(b.arrivalPs, r.steps[1].endPs);
    EXPECT_EQ(r.steps[1].prefillTokens, 0u);
    EXPECT_EQ(b.queuedPs, r.steps[1].endPs);
    EXPECT_EQ(b.prefillStartPs, r.steps[1].endPs);
    EXPECT_EQ(b.scheduledPs, b.prefillStartPs);
}

TEST(AsyncScheduling, ScenarioKeyIsABoolean)
{
    EXPECT_TRUE(MakeScenario().exec.asyncScheduling);
    EXPECT_FALSE(MakeScenario({{"serving", {{"execution", {{"async_scheduling", false}}}}}})
                     .exec.asyncScheduling);
    EXPECT_THROW(MakeScenario({{"serving", {{"execution", {{"async_scheduling", "yes"}}}}}}),
                 InputError);
}

} // namespace
} // namespace fabricsim
