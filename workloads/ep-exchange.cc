#include "ep-exchange.h"

#include "unit-conversions.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <stdexcept>

namespace fabricsim
{

double
Fp8ScaledTokenBytes(uint32_t hidden)
{
    return double(hidden) + double(hidden) / 128.0 * 4.0;
}

namespace
{

/// Probability that a token's \p topk experts (drawn without replacement from \p experts)
/// include one of a set holding \p share of the selections, at most \p share (the union bound;
/// the product overshoots it slightly for a set of cold experts under skew).
double
Reaches(double share, uint32_t topk, double experts)
{
    const double q = topk > 0 ? share / topk : 0;
    double miss = 1;
    for (uint32_t i = 0; i < topk && double(i) < experts; ++i)
    {
        miss *= std::max(0.0, 1 - q * experts / (experts - i));
    }
    return std::min(1 - miss, share);
}

/// Sum of pi over the experts rank \p r holds (E / ep consecutive experts).
double
RankShare(const std::vector<double>& pi, uint32_t ep, uint32_t r)
{
    const size_t per = pi.size() / ep;
    double share = 0;
    for (size_t e = r * per; e < (r + 1) * per && e < pi.size(); ++e)
    {
        share += pi[e];
    }
    return share;
}

/// The limit when it applies to \p pi: active and uniform routing.
std::optional<ExpertGroups>
LimitFor(const ExpertGroups& limit, const std::vector<double>& pi, uint32_t topk)
{
    if (!GroupLimitActive(limit, uint32_t(pi.size()), topk))
    {
        return std::nullopt;
    }
    for (double p : pi)
    {
        if (std::abs(p - pi.front()) > 1e-12)
        {
            return std::nullopt;
        }
    }
    return limit;
}

/// How many of the experts of \p ranks (E / ep consecutive each) lie in each group.
std::vector<uint32_t>
ExpertsPerGroup(const std::vector<uint32_t>& ranks, uint32_t experts, uint32_t ep, uint32_t groups)
{
    std::vector<uint32_t> out(groups, 0);
    const uint32_t per = experts / ep;
    const uint32_t size = experts / groups;
    for (uint32_t r : ranks)
    {
        for (uint32_t e = r * per; e < (r + 1) * per && e < experts; ++e)
        {
            out[e / size]++;
        }
    }
    return out;
}

/// log C(n, r).
double
LogChoose(double n, double r)
{
    return std::lgamma(n + 1) - std::lgamma(r + 1) - std::lgamma(n - r + 1);
}

/// A token's copies as the empirical start-up and fill terms count them.
double
CountedCopiesPerToken(const EpKernelCost& cost, const EpKernelWork& w)
{
    return cost.copiesPerTokenCap > 0 ? std::min(w.copiesPerToken, cost.copiesPerTokenCap)
                                      : w.copiesPerToken;
}

} // namespace

bool
GroupLimitActive(const ExpertGroups& limit, uint32_t experts, uint32_t topk)
{
    return limit.groups > 1 && limit.topkGroups >= 1 && limit.topkGroups < limit.groups
           && experts % limit.groups == 0 && topk >= limit.topkGroups && topk <= experts;
}

double
GroupLimitedReach(const std::vector<uint32_t>& perGroup,
                  uint32_t experts,
                  uint32_t topk,
                  const ExpertGroups& limit)
{
    if (!GroupLimitActive(limit, experts, topk) || perGroup.size() != limit.groups)
    {
        throw std::logic_error("GroupLimitedReach: an active limit and a count per group");
    }
    const double g = double(experts / limit.groups);
    const uint32_t t = limit.topkGroups;
    // Over the groups holding some of the set: weight of each (groups of them chosen, set
    // experts in the chosen ones), each chosen one's guaranteed expert missing the set.
    std::map<std::pair<uint32_t, uint32_t>, double> w{{{0, 0}, 1.0}};
    uint32_t touched = 0;
    for (uint32_t s : perGroup)
    {
        if (s == 0)
        {
            continue;
        }
        touched++;
        std::map<std::pair<uint32_t, uint32_t>, double> next;
        for (const auto& [key, weight] : w)
        {
            next[key] += weight;
            if (key.first < t && double(s) < g)
            {
                next[{key.first + 1, key.second + s}] += weight * (g - s) / g;
            }
        }
        w = std::move(next);
    }
    // The other k - t experts, uniform over the chosen groups' t (g - 1) others.
    const double pool = t * (g - 1);
    const uint32_t extra = topk - t;
    const double all = LogChoose(limit.groups, t);
    double miss = 0;
    for (const auto& [key, weight] : w)
    {
        const auto [chosen, inSet] = key;
        if (limit.groups - touched < t - chosen)
        {
            continue;
        }
        double avoid = 1;
        for (uint32_t i = 0; i < extra; ++i)
        {
            avoid *= std::max(0.0, (pool - inSet - i) / (pool - i));
        }
        miss += weight * std::exp(LogChoose(limit.groups - touched, t - chosen) - all) * avoid;
    }
    return std::clamp(1 - miss, 0.0, 1.0);
}

std::vector<double>
EpCopiesPerDestination(const std::vector<double>& pi,
                       uint32_t ep,
                       uint32_t topk,
                       bool perRank,
                       const ExpertGroups& limit)
{
    std::vector<double> out(ep, 0.0);
    if (ep == 0 || pi.empty())
    {
        return out;
    }
    const std::optional<ExpertGroups> groups = perRank ? LimitFor(limit, pi, topk) : std::nullopt;
    for (uint32_t r = 0; r < ep; ++r)
    {
        const double share = RankShare(pi, ep, r);
        out[r]
            = !perRank ? share
              : groups
                  ? GroupLimitedReach(ExpertsPerGroup({r}, uint32_t(pi.size()), ep, groups->groups),
                                      uint32_t(pi.size()),
                                      topk,
                                      *groups)
                  : Reaches(share, topk, double(pi.size()));
    }
    return out;
}

std::vector<double>
EpRowCopies(const std::vector<double>& pi,
            uint32_t ep,
            uint32_t topk,
            bool perRank,
            const std::vector<uint32_t>& nodeOfRank,
            const std::vector<double>& tokens,
            uint32_t me,
            bool dispatch,
            const ExpertGroups& limit)
{
    if (tokens.size() != ep || me >= ep)
    {
        throw std::logic_error("EpRowCopies: one token count per EP rank and me below ep");
    }
    const std::vector<double> rank = EpCopiesPerDestination(pi, ep, topk, perRank, limit);
    // Local index of each rank among its node's EP ranks, and the ranks per node.
    std::map<uint32_t, uint32_t> perNode;
    std::vector<uint32_t> local(ep, 0);
    const bool nodes = perRank && nodeOfRank.size() == ep;
    for (uint32_t r = 0; nodes && r < ep; ++r)
    {
        local[r] = perNode[nodeOfRank[r]]++;
    }
    bool even = nodes && perNode.size() > 1;
    for (const auto& [node, n] : perNode)
    {
        even = even && n == perNode.begin()->second;
    }
    std::vector<double> out(ep, 0.0);
    if (!even)
    {
        // Straight to each rank: the dispatch sends our tokens' copies, the combine returns
        // each source the outputs of its tokens on our experts.
        for (uint32_t r = 0; r < ep; ++r)
        {
            out[r] = dispatch ? tokens[me] * rank[r] : tokens[r] * rank[me];
        }
        return out;
    }
    // Probability that a token reaches each node (holds any of its experts).
    const std::optional<ExpertGroups> groups = LimitFor(limit, pi, topk);
    std::map<uint32_t, double> nodeShare;
    std::map<uint32_t, std::vector<uint32_t>> nodeRanks;
    for (uint32_t r = 0; r < ep; ++r)
    {
        nodeShare[nodeOfRank[r]] += RankShare(pi, ep, r);
        nodeRanks[nodeOfRank[r]].push_back(r);
    }
    const double experts = double(pi.size());
    std::map<uint32_t, double> nodeReach;
    for (const auto& [node, share] : nodeShare)
    {
        nodeReach[node]
            = groups ? GroupLimitedReach(
                  ExpertsPerGroup(nodeRanks[node], uint32_t(pi.size()), ep, groups->groups),
                  uint32_t(pi.size()),
                  topk,
                  *groups)
                     : Reaches(share, topk, experts);
    }
    for (uint32_t r = 0; r < ep; ++r)
    {
        if (nodeOfRank[r] == nodeOfRank[me])
        {
            // NVLink inside the node: the tokens whose copies we hand r (dispatch: ours and
            // those we relay for the remote ranks of our local index; combine: r's and those r
            // relays for the remote ranks of its local index), each reaching r (dispatch) or us.
            const uint32_t via = dispatch ? me : r;
            double t = 0;
            for (uint32_t s = 0; s < ep; ++s)
            {
                if (s == via || (nodeOfRank[s] != nodeOfRank[me] && local[s] == local[via]))
                {
                    t += tokens[s];
                }
            }
            out[r] = t * (dispatch ? rank[r] : rank[me]);
        }
        else if (local[r] == local[me])
        {
            // RDMA to the rank of the same local index: once per node holding any of the
            // token's experts (dispatch: our tokens to r's node; combine: r's tokens, reduced
            // over our node).
            out[r] = (dispatch ? tokens[me] : tokens[r]) * nodeReach[nodeOfRank[dispatch ? r : me]];
        }
    }
    return out;
}

EpTokenWire
EpWireOf(EpBackend backend, uint32_t hidden, double activationBytes)
{
    EpTokenWire w;
    const double act = double(hidden) * activationBytes;
    switch (backend)
    {
    case EpBackend::AllToAll:
    case EpBackend::AllGatherReduceScatter:
        w.dispatchBytes = act;
        w.combineBytes = act;
        break;
    case EpBackend::DeepEpNormal:
        w.dispatchBytes = Fp8ScaledTokenBytes(hidden);
        w.combineBytes = 2.0 * hidden;
        w.perRank = true;
        break;
    case EpBackend::DeepEpLowLatency:
        w.dispatchBytes = Fp8ScaledTokenBytes(hidden);
        w.combineBytes = 2.0 * hidden;
        break;
    case EpBackend::DeepEpAuto:
        throw std::logic_error("EpWireOf: deepep-auto is resolved per step (ResolveEpBackend)");
    case EpBackend::TpAllReduce:
        throw std::logic_error("EpWireOf: tp-allreduce moves no tokens (EpExchangesTokens)");
    }
    return w;
}

std::optional<EpKernelCost>
EpKernelCostOf(EpBackend backend, bool dispatch)
{
    // scripts/fit-deepep-kernels on the corpus DeepEP tables (8 x H200, NVLink at the simulated
    // 313.3 GB/s): fitted on hidden 2048 and 7168 and the 8-expert shape at hidden 4096, which
    // sets the per-token terms (normal mode at 4 and 24 SMs), the other rows held out
    // (docs/validation.md). The normal kernels' fixed part is their notify / layout pass; their
    // per-copy work is the token bookkeeping (indices, weights, scales).
    switch (backend)
    {
    case EpBackend::DeepEpNormal:
    {
        // A token's copies counted up to 8 x (1 - C(112, 8) / C(128, 8)) = 5.33936 (rounded up),
        // the fit rows' widest fan-out (top-8 of 128).
        const EpKernelCost d{
            25.19, 78.1, 26.23e9, true, 0.3335, 0, 0, 0, 0, 2.134e9, false, 5.3394};
        const EpKernelCost c{
            24.11, 36.8, 35.92e9, true, 0, 8.564e9, 0, 5.563e9, 1.791e9, 4.161e9, false, 5.3394};
        return dispatch ? d : c;
    }
    case EpBackend::DeepEpLowLatency:
    {
        // The combine's start-up grows with the copies it reduces into one token (its top-k,
        // up to 8, the fit rows' widest). The dispatch copies at 302.8 GB/s of H200's 450 GB/s
        // of NVLink (the links bind it, so it scales with them); the combine's 228.1 GB/s is
        // the GPU's own limit (below the links on H200, kept where they are slower).
        const EpKernelCost d{
            5.51, 1.7, 302.8e9, false, 1.055, 3.864e9, 1.72, 0, 0, 0, true, 8, 0.6729};
        const EpKernelCost c{8.41, 0.1, 228.1e9, false, 0, 12.31e9, 0.375, 52.87e9, 0, 0, false, 8};
        return dispatch ? d : c;
    }
    case EpBackend::DeepEpAuto:
        throw std::logic_error("EpKernelCostOf: deepep-auto is resolved per step");
    case EpBackend::AllToAll:
    case EpBackend::AllGatherReduceScatter:
    case EpBackend::TpAllReduce:
        break;
    }
    return std::nullopt;
}

int64_t
EpKernelMinPs(const EpKernelCost& cost, const EpKernelWork& w)
{
    const bool links = cost.scaleUpShare > 0 && w.scaleUpBytesPerSecond > 0;
    const double copied = links && w.scaleUpCopies >= 0 ? w.scaleUpCopies : w.copies;
    const double rate = links ? cost.scaleUpShare * w.scaleUpBytesPerSecond : cost.bytesPerSecond;
    const double copying = w.copies * cost.perCopyNs * 1e-9 + copied * w.bytesPerCopy / rate;
    const double perToken
        = cost.tokenUs * 1e-6
          + (cost.tokenBytesPerSecond > 0 ? w.bytesPerCopy / cost.tokenBytesPerSecond : 0.0);
    double fixed = cost.fixedUs * 1e-6;
    if (cost.startCopyBytesPerSecond > 0)
    {
        fixed += w.bytesPerCopy * CountedCopiesPerToken(cost, w) / cost.startCopyBytesPerSecond;
    }
    if (cost.startBytesPerSecond > 0)
    {
        fixed += w.bytesPerCopy / cost.startBytesPerSecond;
    }
    double own = 0;
    if (cost.smBudget)
    {
        own = (copying + w.tokens * perToken) / double(std::max<uint32_t>(1, w.smBudget));
    }
    else
    {
        const uint32_t sms = DeepEpLowLatencySms(w.experts, w.gpuSms);
        const double tokensPerSm = sms > 0 ? std::ceil(w.tokens / sms) : 0.0;
        if (cost.warpCopiesSerial && cost.tokenBytesPerSecond > 0)
        {
            const double warp = tokensPerSm * w.bytesPerCopy / cost.tokenBytesPerSecond;
            own = warp + std::max(copying, tokensPerSm * cost.tokenUs * 1e-6);
        }
        else
        {
            own = std::max(copying, tokensPerSm * perToken);
        }
        const double groups = sms > 0 ? std::ceil(double(w.experts) / double(w.gpuSms)) : 1.0;
        fixed += cost.fixedPerGroupUs * 1e-6 * groups;
    }
    return units::SecondsToPs(fixed + own, "EP kernel time");
}

int64_t
EpKernelFillPs(const EpKernelCost& cost, const EpKernelWork& w)
{
    if (cost.fillBytesPerSecond <= 0)
    {
        return 0;
    }
    return units::SecondsToPs(CountedCopiesPerToken(cost, w) * w.bytesPerCopy
                                  / cost.fillBytesPerSecond,
                              "EP kernel fill");
}

uint32_t
DeepEpLowLatencySms(uint32_t experts, uint32_t gpuSms)
{
    if (gpuSms == 0 || experts == 0)
    {
        return 0;
    }
    const uint32_t groupsPerSm = (experts + gpuSms - 1) / gpuSms;
    return (experts + groupsPerSm - 1) / groupsPerSm;
}

} // namespace fabricsim
