#include "ep-drawn-rows.h"

#include "seeded-stream.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>

namespace fabricsim
{

std::vector<TokenChoices>
DrawDeepEpTestRouting(uint32_t ranks,
                      uint32_t tokens,
                      uint32_t experts,
                      uint32_t topk,
                      const ExpertGroups& limit,
                      uint32_t masked,
                      uint64_t seed)
{
    const bool grouped = GroupLimitActive(limit, experts, topk);
    const uint32_t perGroup = grouped ? experts / limit.groups : experts;
    const uint32_t pool = grouped ? perGroup * limit.topkGroups : experts;
    if (topk == 0 || topk > pool)
    {
        throw std::invalid_argument("DrawDeepEpTestRouting: top-" + std::to_string(topk) + " of "
                                    + std::to_string(pool) + " experts");
    }
    std::vector<TokenChoices> out(ranks, TokenChoices(tokens));
    std::vector<std::pair<double, uint32_t>> scored(experts);
    std::vector<std::pair<double, uint32_t>> best(grouped ? limit.groups : 0);
    for (uint32_t r = 0; r < ranks; ++r)
    {
        // One stream a rank, as each rank of DeepEP's test draws its own scores.
        SeededStream draw(seed, r);
        for (std::vector<int32_t>& chosen : out[r])
        {
            for (uint32_t e = 0; e < experts; ++e)
            {
                scored[e] = {std::abs(draw.Normal()) + 1, e};
            }
            auto end = scored.end();
            if (grouped)
            {
                // The groups whose best expert scores highest; the others' experts leave the
                // pool (ties, which a continuous draw does not make, go to the lower group).
                for (uint32_t g = 0; g < limit.groups; ++g)
                {
                    const auto first = scored.begin() + g * perGroup;
                    best[g] = {std::max_element(first, first + perGroup)->first, g};
                }
                std::stable_sort(best.begin(),
                                 best.end(),
                                 [](const auto& a, const auto& b) { return a.first > b.first; });
                std::vector<bool> kept(limit.groups, false);
                for (uint32_t i = 0; i < limit.topkGroups; ++i)
                {
                    kept[best[i].second] = true;
                }
                end = std::stable_partition(scored.begin(),
                                            scored.end(),
                                            [&](const auto& s)
                                            { return kept[s.second / perGroup]; });
            }
            std::partial_sort(scored.begin(),
                              scored.begin() + topk,
                              end,
                              [](const auto& a, const auto& b) { return a.first > b.first; });
            chosen.resize(topk);
            for (uint32_t i = 0; i < topk; ++i)
            {
                chosen[i] = int32_t(scored[i].second);
            }
        }
        for (uint32_t m = 0; m < masked && tokens > 0; ++m)
        {
            const auto t = std::min<uint32_t>(tokens - 1, uint32_t(draw.Uniform() * tokens));
            const auto k = std::min<uint32_t>(topk - 1, uint32_t(draw.Uniform() * topk));
            out[r][t][k] = -1;
        }
    }
    return out;
}

std::vector<std::vector<double>>
EpDrawnRows(const std::vector<TokenChoices>& choices,
            uint32_t experts,
            bool perRank,
            const std::vector<uint32_t>& nodeOfRank,
            bool dispatch)
{
    const uint32_t ep = uint32_t(choices.size());
    if (ep == 0 || experts % ep != 0)
    {
        throw std::invalid_argument("EpDrawnRows: experts spread evenly over the ranks");
    }
    const uint32_t perRankExperts = experts / ep;
    // Local index of each rank in its node, and each node's ranks (as EpRowCopies).
    std::map<uint32_t, std::vector<uint32_t>> nodeRanks;
    std::vector<uint32_t> local(ep, 0);
    const bool nodes = perRank && nodeOfRank.size() == ep;
    for (uint32_t r = 0; nodes && r < ep; ++r)
    {
        local[r] = uint32_t(nodeRanks[nodeOfRank[r]].size());
        nodeRanks[nodeOfRank[r]].push_back(r);
    }
    bool even = nodes && nodeRanks.size() > 1;
    for (const auto& [node, ranks] : nodeRanks)
    {
        even = even && ranks.size() == nodeRanks.begin()->second.size();
    }
    std::vector<std::vector<double>> rows(ep, std::vector<double>(ep, 0.0));
    // A copy between the token's rank s and rank r: s sends it (dispatch) or receives it.
    auto copy = [&](uint32_t from, uint32_t to)
    {
        if (dispatch)
        {
            rows[from][to] += 1;
        }
        else
        {
            rows[to][from] += 1;
        }
    };
    std::vector<uint32_t> reached;
    for (uint32_t s = 0; s < ep; ++s)
    {
        for (const std::vector<int32_t>& chosen : choices[s])
        {
            reached.clear();
            for (int32_t e : chosen)
            {
                if (e >= 0)
                {
                    reached.push_back(uint32_t(e) / perRankExperts);
                }
            }
            if (!perRank)
            {
                // Low latency: a copy per chosen expert, straight to its rank.
                for (uint32_t r : reached)
                {
                    copy(s, r);
                }
                continue;
            }
            std::sort(reached.begin(), reached.end());
            reached.erase(std::unique(reached.begin(), reached.end()), reached.end());
            if (!even)
            {
                for (uint32_t r : reached)
                {
                    copy(s, r);
                }
                continue;
            }
            // Inside the node straight to each rank; to another node once, to the rank of our
            // local index there, which forwards to its node's ranks (itself included).
            std::map<uint32_t, std::vector<uint32_t>> byNode;
            for (uint32_t r : reached)
            {
                byNode[nodeOfRank[r]].push_back(r);
            }
            for (const auto& [node, ranks] : byNode)
            {
                if (node == nodeOfRank[s])
                {
                    for (uint32_t r : ranks)
                    {
                        copy(s, r);
                    }
                    continue;
                }
                const uint32_t via = nodeRanks[node][local[s]];
                copy(s, via);
                for (uint32_t r : ranks)
                {
                    copy(via, r);
                }
            }
        }
    }
    return rows;
}

double
EpCrossNodeLoadFactor(const std::vector<std::vector<double>>& drawn,
                      const std::vector<std::vector<double>>& expected,
                      const std::vector<uint32_t>& nodeOfRank)
{
    auto busiest = [&](const std::vector<std::vector<double>>& rows)
    {
        const size_t n = rows.size();
        if (nodeOfRank.size() != n)
        {
            throw std::invalid_argument("EpCrossNodeLoadFactor: a node for every rank");
        }
        double most = 0;
        for (size_t i = 0; i < n; ++i)
        {
            double out = 0;
            double in = 0;
            for (size_t j = 0; j < n; ++j)
            {
                if (nodeOfRank[j] != nodeOfRank[i])
                {
                    out += rows[i][j];
                    in += rows[j][i];
                }
            }
            most = std::max({most, out, in});
        }
        return most;
    };
    const double mean = busiest(expected);
    return mean > 0 ? busiest(drawn) / mean : 1.0;
}

} // namespace fabricsim
