#include "input-error.h"
#include "routing-model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

using namespace fabricsim;

TEST(Routing, ExpectedDistinctExpertsFormula)
{
    // E (1 - (1 - k/E)^T)
    EXPECT_DOUBLE_EQ(ExpectedDistinctExperts(8, 2, 1), 2.0);
    EXPECT_NEAR(ExpectedDistinctExperts(256, 8, 64), 256 * (1 - std::pow(1 - 8.0 / 256, 64)), 1e-9);
    EXPECT_NEAR(ExpectedDistinctExperts(256, 8, 64), 222.44, 0.01);
    EXPECT_NEAR(ExpectedDistinctExperts(128, 8, 100000), 128.0, 1e-9);
    EXPECT_DOUBLE_EQ(ExpectedDistinctExperts(128, 8, 0), 0.0);
    // The probability form agrees for uniform routing.
    auto pi = RoutingModel::Uniform().SelectionProbabilities(256, 8);
    EXPECT_NEAR(ExpectedDistinctExperts(pi, 0, 256, 64), ExpectedDistinctExperts(256, 8, 64), 1e-9);
}

TEST(Routing, ZipfIsDeterministicCappedAndSumsToK)
{
    RoutingModel z = RoutingModel::Zipf(1.2, 7);
    auto a = z.SelectionProbabilities(64, 8);
    auto b = RoutingModel::Zipf(1.2, 7).SelectionProbabilities(64, 8);
    EXPECT_EQ(a, b);
    EXPECT_NE(a, RoutingModel::Zipf(1.2, 8).SelectionProbabilities(64, 8));
    EXPECT_NEAR(std::accumulate(a.begin(), a.end(), 0.0), 8.0, 1e-9);
    for (double p : a)
    {
        EXPECT_LE(p, 1.0);
        EXPECT_GT(p, 0.0);
    }
    // Heavy skew: the most popular experts are picked by every token.
    auto c = RoutingModel::Zipf(3.0, 1).SelectionProbabilities(16, 4);
    EXPECT_EQ(std::count(c.begin(), c.end(), 1.0), 2);
    EXPECT_NEAR(std::accumulate(c.begin(), c.end(), 0.0), 4.0, 1e-9);
    // Skew hits fewer distinct experts than uniform.
    EXPECT_LT(ExpectedDistinctExperts(a, 0, 64, 32), ExpectedDistinctExperts(64, 8, 32));
}

TEST(Routing, FromJson)
{
    using nlohmann::json;
    EXPECT_TRUE(RoutingModel::FromJson(json::object()).IsUniform());
    RoutingModel z = RoutingModel::FromJson(json{{"kind", "zipf"}, {"s", 0.8}, {"seed", 5}});
    EXPECT_DOUBLE_EQ(z.Skew(), 0.8);
    EXPECT_EQ(z.Seed(), 5u);
    EXPECT_THROW(RoutingModel::FromJson(json{{"kind", "pareto"}}), fabricsim::InputError);
    EXPECT_THROW(RoutingModel::FromJson(json{{"kind", "zipf"}, {"s", -1}}), fabricsim::InputError);
}
