// Goodput: the highest request rate that still meets the SLO attainment target.

#include "goodput-search.h"
#include "input-error.h"
#include "serving-test-util.h"

#include <gtest/gtest.h>

namespace fabricsim
{
namespace
{

TEST(GoodputSearch, FindsTheHighestRateMeetingTheSlos)
{
    InferenceScenario sc = MakeScenario(
        {{"serving",
          {{"requests", {{"count", 60}, {"prompt_tokens", 2048}, {"output_tokens", 32}}},
           {"slo", {{"ttft_ms", 150}, {"tpot_ms", 15}, {"attainment", 0.9}}}}}});
    auto run = [](const InferenceScenario& s)
    {
        return RunOnFake(s);
    };
    GoodputResult g = FindGoodput(sc, run, 1, 50, 8);
    ASSERT_GE(g.points.size(), 3u);
    EXPECT_GT(g.goodputRatePerSec, 1);
    EXPECT_LT(g.goodputRatePerSec, 50);
    for (const auto& p : g.points)
    {
        // Every rate at or below the answer passed, every rate above it failed.
        EXPECT_EQ(p.attainment >= 0.9, p.ratePerSec <= g.goodputRatePerSec) << p.ratePerSec;
    }
    EXPECT_EQ(g.ToJson()["points"].size(), g.points.size());
}

TEST(GoodputSearch, NeedsSlosAndASyntheticSource)
{
    auto run = [](const InferenceScenario& s)
    {
        return RunOnFake(s);
    };
    EXPECT_THROW(FindGoodput(MakeScenario(), run, 1, 10), fabricsim::InputError);
}

} // namespace
} // namespace fabricsim
