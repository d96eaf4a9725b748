// Group-limited routing (DeepSeek-V3's n_group / topk_group, DeepEP's internode test): closed
// forms, a Monte Carlo of the routing itself, and what it changes on the wire (issue 26).
#include "draws.h"
#include "ep-drawn-rows.h"
#include "ep-exchange.h"
#include "input-error.h"
#include "model-spec.h"
#include "routing-model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <numeric>

namespace fabricsim
{
namespace
{

/// How many of EP rank r's experts (E / ep consecutive) lie in each of \p groups groups.
std::vector<uint32_t>
RankPerGroup(uint32_t r, uint32_t experts, uint32_t ep, uint32_t groups)
{
    std::vector<uint32_t> out(groups, 0);
    for (uint32_t e = r * experts / ep; e < (r + 1) * experts / ep; ++e)
    {
        out[e / (experts / groups)]++;
    }
    return out;
}

TEST(ExpertGroups, ReachMatchesClosedForms)
{
    // DeepSeek-V3 on EP 64 over 8 servers: 256 experts in 8 groups of 32, a token's 8 experts
    // in 4 of them. A whole group (one server) is reached by exactly half the tokens (4 / 8),
    // against 1 - C(224, 8) / C(256, 8) = 0.662 unlimited.
    const ExpertGroups v3{8, 4};
    ASSERT_TRUE(GroupLimitActive(v3, 256, 8));
    std::vector<uint32_t> server(8, 0);
    server[3] = 32;
    EXPECT_NEAR(GroupLimitedReach(server, 256, 8, v3), 0.5, 1e-12);
    // Two whole groups: 1 - C(6, 4) / C(8, 4) = 1 - 15 / 70.
    server[5] = 32;
    EXPECT_NEAR(GroupLimitedReach(server, 256, 8, v3), 1 - 15.0 / 70, 1e-12);
    // One expert is still chosen with probability k / E.
    std::vector<uint32_t> one(8, 0);
    one[2] = 1;
    EXPECT_NEAR(GroupLimitedReach(one, 256, 8, v3), 8.0 / 256, 1e-12);
    // A rank's 4 experts inside a group: chosen (1/2), then neither the group's guaranteed
    // expert (28 / 32) nor any of the 4 others (drawn from the chosen groups' 124) hit them.
    const double rank = 0.5 * (1 - 28.0 / 32 * AllMiss(124, 4, 4));
    EXPECT_NEAR(GroupLimitedReach(RankPerGroup(9, 256, 64, 8), 256, 8, v3), rank, 1e-12);
    // Expected copies per token summed over ranks: k at most (one per expert), and fewer than
    // the unlimited 64 x (1 - C(252, 8) / C(256, 8)).
    const auto pi = RoutingModel::Uniform().SelectionProbabilities(256, 8);
    const auto limited = EpCopiesPerDestination(pi, 64, 8, true, v3);
    const auto plain = EpCopiesPerDestination(pi, 64, 8, true);
    for (uint32_t r = 0; r < 64; ++r)
    {
        EXPECT_NEAR(limited[r], rank, 1e-12) << r;
        EXPECT_NEAR(plain[r], 1 - AllMiss(256, 4, 8), 1e-12) << r;
    }
    EXPECT_LT(std::accumulate(limited.begin(), limited.end(), 0.0),
              std::accumulate(plain.begin(), plain.end(), 0.0));
}

TEST(ExpertGroups, ModelAgreesWithDeepEpsRoutingSampled)
{
    // DeepEP's internode test: scores |N(0,1)| + 1, a group's score its best expert, the 4 best
    // groups of 8, then the 8 best experts inside them. Sampled, each server (group) is reached
    // by half the tokens and each rank by what the model says, within sampling noise (drawn
    // by DrawDeepEpTestRouting).
    const uint32_t experts = 256, groups = 8, topk = 8, ep = 64, tokens = 20000;
    const ExpertGroups limit{groups, 4};
    std::vector<double> rankHits(ep, 0), serverHits(groups, 0);
    const std::vector<TokenChoices> drawn
        = DrawDeepEpTestRouting(1, tokens, experts, topk, limit, 0, 7);
    for (const std::vector<int32_t>& chosen : drawn[0])
    {
        std::vector<bool> rank(ep, false), server(groups, false);
        for (int32_t e : chosen)
        {
            rank[e / (experts / ep)] = true;
            server[e / (experts / groups)] = true;
        }
        for (uint32_t r = 0; r < ep; ++r)
        {
            rankHits[r] += rank[r];
        }
        for (uint32_t g = 0; g < groups; ++g)
        {
            serverHits[g] += server[g];
        }
    }
    const double total = std::accumulate(serverHits.begin(), serverHits.end(), 0.0);
    // Nearly every chosen server holds one of the 8 (3.98 servers a token sampled).
    EXPECT_NEAR(total / tokens, 4.0, 0.03);
    const double modelRank
        = GroupLimitedReach(RankPerGroup(0, experts, ep, groups), experts, topk, limit);
    const double sampled = std::accumulate(rankHits.begin(), rankHits.end(), 0.0) / ep / tokens;
    EXPECT_NEAR(sampled / modelRank, 1.0, 0.015) << sampled << " vs " << modelRank;
    std::cout << "servers per token " << total / tokens << ", rank reach sampled " << sampled
              << " model " << modelRank << std::endl;
}

TEST(ExpertGroups, RdmaRowsCrossHalfTheServers)
{
    // DeepEP normal on EP 64 over 8 servers: each token crosses to the servers holding its
    // experts, 4 of 8 with the limit (0.5 per server) instead of 5.29 (0.662).
    const auto pi = RoutingModel::Uniform().SelectionProbabilities(256, 8);
    std::vector<uint32_t> nodes(64);
    for (uint32_t r = 0; r < 64; ++r)
    {
        nodes[r] = r / 8;
    }
    const std::vector<double> tokens(64, 100.0);
    const auto limited = EpRowCopies(pi, 64, 8, true, nodes, tokens, 3, true, {8, 4});
    const auto plain = EpRowCopies(pi, 64, 8, true, nodes, tokens, 3, true);
    EXPECT_NEAR(limited[11], 50.0, 1e-9);
    EXPECT_NEAR(plain[11], 100 * (1 - AllMiss(256, 32, 8)), 1e-9);
    EXPECT_NEAR(limited[12], 0.0, 1e-12); // another local index: no RDMA
    // Limits that limit nothing, or routing they do not describe, change nothing: all groups,
    // fewer experts per token than groups, groups not dividing the experts, skewed routing.
    for (const ExpertGroups g : {ExpertGroups{8, 8}, ExpertGroups{16, 12}, ExpertGroups{6, 2}})
    {
        EXPECT_FALSE(GroupLimitActive(g, 256, 8));
        EXPECT_EQ(EpRowCopies(pi, 64, 8, true, nodes, tokens, 3, true, g), plain);
    }
    const auto zipf = RoutingModel::Zipf(1.0, 3).SelectionProbabilities(256, 8);
    EXPECT_EQ(EpRowCopies(zipf, 64, 8, true, nodes, tokens, 3, true, {8, 4}),
              EpRowCopies(zipf, 64, 8, true, nodes, tokens, 3, true));
    // Per-expert copies (low latency, NCCL all-to-all) keep k / E per expert.
    EXPECT_EQ(EpRowCopies(pi, 64, 8, false, nodes, tokens, 3, true, {8, 4}),
              EpRowCopies(pi, 64, 8, false, nodes, tokens, 3, true));
}

TEST(ExpertGroups, ReadFromTheModelConfig)
{
    const ModelSpec v3 = ModelSpec::Preset("DeepSeek-V3");
    ASSERT_TRUE(v3.moe);
    EXPECT_EQ(v3.moe->groups, 8u);
    EXPECT_EQ(v3.moe->topkGroups, 4u);
    nlohmann::json cfg = ModelSpec::PresetConfig("DeepSeek-V3");
    cfg["topk_method"] = "greedy"; // ignores the groups
    EXPECT_EQ(ModelSpec::FromConfig(cfg).moe->groups, 0u);
    cfg["topk_method"] = "noaux_tc";
    cfg["topk_group"] = 8; // every group: no limit
    EXPECT_EQ(ModelSpec::FromConfig(cfg).moe->groups, 0u);
    cfg["n_group"] = 7; // 256 experts do not split into 7 groups
    EXPECT_THROW(ModelSpec::FromConfig(cfg, "v3.json"), InputError);
    const ModelSpec qwen = ModelSpec::Preset("Qwen3-30B-A3B");
    EXPECT_EQ(qwen.moe->groups, 0u);
}

} // namespace
} // namespace fabricsim
