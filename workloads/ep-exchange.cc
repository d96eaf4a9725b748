#include "ep-exchange.h"

#include "unit-conversions.h"

#include <algorithm>
#include <map>
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

} // namespace

std::vector<double>
EpCopiesPerDestination(const std::vector<double>& pi, uint32_t ep, uint32_t topk, bool perRank)
{
    std::vector<double> out(ep, 0.0);
    if (ep == 0 || pi.empty())
    {
        return out;
    }
    for (uint32_t r = 0; r < ep; ++r)
    {
        const double share = RankShare(pi, ep, r);
        out[r] = perRank ? Reaches(share, topk, double(pi.size())) : share;
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
            bool dispatch)
{
    if (tokens.size() != ep || me >= ep)
    {
        throw std::logic_error("EpRowCopies: one token count per EP rank and me below ep");
    }
    const std::vector<double> rank = EpCopiesPerDestination(pi, ep, topk, perRank);
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
    std::map<uint32_t, double> nodeShare;
    for (uint32_t r = 0; r < ep; ++r)
    {
        nodeShare[nodeOfRank[r]] += RankShare(pi, ep, r);
    }
    const double experts = double(pi.size());
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
            out[r] = (dispatch ? tokens[me] : tokens[r])
                     * Reaches(nodeShare[nodeOfRank[dispatch ? r : me]], topk, experts);
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
    }
    return w;
}

std::optional<EpKernelCost>
EpKernelCostOf(EpBackend backend, bool dispatch)
{
    // scripts/fit-deepep-kernels on the corpus DeepEP tables (8 x H200, NVLink at the simulated
    // 313.3 GB/s): fitted on hidden 2048 and 7168 (normal mode at 4 and 24 SMs), the other rows
    // held out (docs/validation.md). The normal kernels' fixed part is their notify / layout
    // pass; their per-copy work is the token bookkeeping (indices, weights, scales).
    switch (backend)
    {
    case EpBackend::DeepEpNormal:
        return dispatch ? EpKernelCost{26.45, 152.2, 24.21e9, true}
                        : EpKernelCost{38.17, 15.7, 17.37e9, true};
    case EpBackend::DeepEpLowLatency:
        return dispatch ? EpKernelCost{10.55, 0.2, 264.2e9, false}
                        : EpKernelCost{10.37, 0.0, 226.2e9, false};
    case EpBackend::DeepEpAuto:
        throw std::logic_error("EpKernelCostOf: deepep-auto is resolved per step");
    case EpBackend::AllToAll:
    case EpBackend::AllGatherReduceScatter:
        break;
    }
    return std::nullopt;
}

int64_t
EpKernelMinPs(const EpKernelCost& cost, double copies, double bytesPerCopy, uint32_t sms)
{
    const double spread = cost.smBudget ? double(std::max<uint32_t>(1, sms)) : 1.0;
    const double own
        = copies * (cost.perCopyNs * 1e-9 + bytesPerCopy / cost.bytesPerSecond) / spread;
    return units::SecondsToPs(cost.fixedUs * 1e-6 + own, "EP kernel time");
}

} // namespace fabricsim
