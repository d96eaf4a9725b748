#include "ep-exchange.h"

#include "unit-conversions.h"

#include <algorithm>

namespace fabricsim
{

double
Fp8ScaledTokenBytes(uint32_t hidden)
{
    return double(hidden) + double(hidden) / 128.0 * 4.0;
}

std::vector<double>
EpCopiesPerDestination(const std::vector<double>& pi, uint32_t ep, uint32_t topk, bool perRank)
{
    std::vector<double> out(ep, 0.0);
    if (ep == 0 || pi.empty())
    {
        return out;
    }
    const uint32_t per = uint32_t(pi.size()) / ep;
    const double experts = double(pi.size());
    for (uint32_t r = 0; r < ep; ++r)
    {
        double share = 0;
        for (uint32_t e = r * per; e < (r + 1) * per && e < pi.size(); ++e)
        {
            share += pi[e];
        }
        if (!perRank)
        {
            out[r] = share;
            continue;
        }
        // No expert of the token on r: each of its k draws (without replacement) misses.
        const double q = topk > 0 ? share / topk : 0;
        double miss = 1;
        for (uint32_t i = 0; i < topk && i < pi.size(); ++i)
        {
            miss *= std::max(0.0, 1 - q * experts / (experts - i));
        }
        // Never more than one copy per chosen expert (the union bound; the product above
        // overshoots it slightly for a rank of cold experts under skew).
        out[r] = std::min(1 - miss, share);
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
