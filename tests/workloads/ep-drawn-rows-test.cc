// An EP exchange's rows from drawn routing (DeepEP's own tests' routing): the draw, the rows
// against their expectation (EpRowCopies), and the busiest NIC's load against the mean (issue
// 26: the published internode figures wait for it).
#include "ep-drawn-rows.h"
#include "ep-exchange.h"
#include "routing-model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <stdexcept>

namespace fabricsim
{
namespace
{

/// The server of each of \p ranks ranks: servers of 8.
std::vector<uint32_t>
ServersOfEight(uint32_t ranks)
{
    std::vector<uint32_t> nodes(ranks);
    for (uint32_t r = 0; r < ranks; ++r)
    {
        nodes[r] = r / 8;
    }
    return nodes;
}

TEST(EpDrawnRows, DrawsDeepEpsTestRouting)
{
    // test_internode.py at EP 64: 256 experts in 8 groups (a server each), the 4 best groups.
    const ExpertGroups limit{8, 4};
    const auto a = DrawDeepEpTestRouting(4, 500, 256, 8, limit, 0, 1);
    ASSERT_EQ(a.size(), 4u);
    for (const TokenChoices& rank : a)
    {
        ASSERT_EQ(rank.size(), 500u);
        for (const std::vector<int32_t>& chosen : rank)
        {
            ASSERT_EQ(chosen.size(), 8u);
            std::set<int32_t> experts(chosen.begin(), chosen.end());
            std::set<int32_t> groups;
            for (int32_t e : chosen)
            {
                ASSERT_GE(e, 0);
                ASSERT_LT(e, 256);
                groups.insert(e / 32);
            }
            EXPECT_EQ(experts.size(), 8u); // distinct experts
            EXPECT_LE(groups.size(), 4u);  // inside the 4 chosen groups
        }
    }
    // Seeded: the same draw again; another seed, another draw; each rank its own stream.
    EXPECT_EQ(DrawDeepEpTestRouting(4, 500, 256, 8, limit, 0, 1), a);
    EXPECT_NE(DrawDeepEpTestRouting(4, 500, 256, 8, limit, 0, 2), a);
    EXPECT_NE(a[0], a[1]);
    // test_low_latency.py: plain top-k, 10 slots a rank masked (two may fall on one slot).
    const auto ll = DrawDeepEpTestRouting(2, 128, 288, 8, ExpertGroups{}, 10, 1);
    for (const TokenChoices& rank : ll)
    {
        size_t masked = 0;
        for (const std::vector<int32_t>& chosen : rank)
        {
            masked += size_t(std::count(chosen.begin(), chosen.end(), -1));
        }
        EXPECT_GE(masked, 8u);
        EXPECT_LE(masked, 10u);
    }
    // More experts than the groups leave: refused.
    EXPECT_THROW(DrawDeepEpTestRouting(1, 1, 16, 9, ExpertGroups{4, 2}, 0, 1),
                 std::invalid_argument);
}

TEST(EpDrawnRows, AgreeWithTheExpectedRowsOverManyTokens)
{
    // EP 16 over two servers, 256 experts top-8, 4000 tokens a rank: each drawn row is its
    // expectation (EpRowCopies) within sampling noise, per backend and direction, relays
    // included.
    const uint32_t ep = 16, experts = 256, topk = 8, tokens = 4000;
    const std::vector<uint32_t> nodes = ServersOfEight(ep);
    const auto pi = RoutingModel::Uniform().SelectionProbabilities(experts, topk);
    const auto drawn = DrawDeepEpTestRouting(ep, tokens, experts, topk, ExpertGroups{}, 0, 3);
    for (bool perRank : {false, true})
    {
        for (bool dispatch : {true, false})
        {
            const auto rows = EpDrawnRows(drawn, experts, perRank, nodes, dispatch);
            for (uint32_t i : {0u, 5u, 11u})
            {
                const auto expected = EpRowCopies(
                    pi, ep, topk, perRank, nodes, std::vector<double>(ep, tokens), i, dispatch);
                for (uint32_t j = 0; j < ep; ++j)
                {
                    if (expected[j] == 0)
                    {
                        EXPECT_EQ(rows[i][j], 0) << perRank << dispatch << " " << i << "->" << j;
                    }
                    else
                    {
                        EXPECT_NEAR(rows[i][j] / expected[j], 1.0, 0.06)
                            << perRank << dispatch << " " << i << "->" << j;
                    }
                }
            }
        }
    }
    // Low latency sends every chosen expert's copy: the rows hold all of them.
    double all = 0;
    for (const auto& row : EpDrawnRows(drawn, experts, false, nodes, true))
    {
        for (double c : row)
        {
            all += c;
        }
    }
    EXPECT_EQ(all, double(ep) * tokens * topk);
}

TEST(EpDrawnRows, BusiestNicAgainstTheMean)
{
    // Four ranks on two nodes, a copy between every pair expected: each rank sends 2 and
    // receives 2 across. Drawn: rank 0 sends 3 to rank 2, so it egresses 4 and rank 2
    // ingresses 4: twice the expectation.
    const std::vector<uint32_t> nodes{0, 0, 1, 1};
    const std::vector<std::vector<double>> expected(4, std::vector<double>(4, 1.0));
    auto drawn = expected;
    drawn[0][2] = 3;
    EXPECT_DOUBLE_EQ(EpCrossNodeLoadFactor(drawn, expected, nodes), 2.0);
    EXPECT_DOUBLE_EQ(EpCrossNodeLoadFactor(expected, expected, nodes), 1.0);
    // Only ingress loaded: ranks 0 and 1 send rank 3 two each (4 in against 2).
    drawn = expected;
    drawn[0][3] = 2;
    drawn[1][3] = 2;
    drawn[0][2] = 0;
    drawn[1][2] = 0;
    EXPECT_DOUBLE_EQ(EpCrossNodeLoadFactor(drawn, expected, nodes), 2.0);
    // One node: nothing crosses.
    EXPECT_DOUBLE_EQ(EpCrossNodeLoadFactor(drawn, expected, {0, 0, 0, 0}), 1.0);
    // DeepEP's low-latency test at EP 16 (288 experts, 128 tokens a rank, 10 slots masked):
    // the busiest of the 16 NICs carries about 7 % more than a rank's expected share.
    const uint32_t ep = 16;
    const auto pi = RoutingModel::Uniform().SelectionProbabilities(288, 8);
    std::vector<std::vector<double>> mean(ep);
    for (uint32_t i = 0; i < ep; ++i)
    {
        mean[i] = EpRowCopies(
            pi, ep, 8, false, ServersOfEight(ep), std::vector<double>(ep, 128), i, true);
    }
    const auto ll = DrawDeepEpTestRouting(ep, 128, 288, 8, ExpertGroups{}, 10, 1);
    const double f = EpCrossNodeLoadFactor(
        EpDrawnRows(ll, 288, false, ServersOfEight(ep), true), mean, ServersOfEight(ep));
    EXPECT_GT(f, 1.02);
    EXPECT_LT(f, 1.15);
}

} // namespace
} // namespace fabricsim
