// The serving loop's requests as sequences: prompt tokens, prefix-cache identities, and the
// later turns of a conversation (part of ServingSimulation::Impl).

#include "input-error.h"
#include "serving-simulation-impl.h"
#include "unit-conversions.h"

#include <algorithm>
#include <climits>

namespace fabricsim
{

uint64_t
ServingSimulation::Impl::LlmPromptTokens(const Request& r) const
{
    double extra = 0;
    if (m_sc.model.encoder)
    {
        extra = r.images * m_sc.model.encoder->outputTokensPerImage
                + r.audioSeconds * m_sc.model.encoder->outputTokensPerAudioSecond;
    }
    return units::CheckedAdd(
        r.promptTokens, units::RoundCount(extra, "encoder tokens"), "prompt tokens");
}

SequenceState
ServingSimulation::Impl::NewSequence(uint64_t id, Role role) const
{
    const Request& r = m_requests[id];
    SequenceState s;
    s.id = id;
    s.promptTokens = LlmPromptTokens(r);
    s.targetTokens = role == Role::Prefill ? 1 : r.outputTokens;
    s.images = r.images;
    s.audioSeconds = r.audioSeconds;
    if (m_sc.kv.prefixCaching)
    {
        // Its tokens: the prompt's runs (its own when none are given), the encoder's output
        // after the text, then the answer, which a later turn may find in the cache.
        std::vector<ContentSpan> spans = r.content;
        if (spans.empty())
        {
            spans.push_back({ContentId(ContentKind::Unique, id), r.promptTokens});
        }
        if (s.promptTokens > r.promptTokens)
        {
            spans.push_back({ContentId(ContentKind::Encoder, id), s.promptTokens - r.promptTokens});
        }
        spans.push_back({ContentId(ContentKind::Answer, id), r.outputTokens});
        s.blockHashes = std::make_shared<const std::vector<uint64_t>>(
            BlockHashes(spans, m_pools.front().budget.blockSize));
    }
    return s;
}

uint64_t
ServingSimulation::Impl::NextFirstTurn(uint64_t id) const
{
    while (id < m_requests.size() && m_requests[id].previousTurn != Request::kNoTurn)
    {
        ++id;
    }
    return id;
}

void
ServingSimulation::Impl::SendNextTurn(uint64_t id)
{
    const uint64_t next = id + 1;
    if (next >= m_requests.size() || m_requests[next].previousTurn != id)
    {
        return;
    }
    ScheduleTrigger(m_requests[next].thinkPs,
                    [this, next]()
                    {
                        m_records[next].arrivalPs = m_api.NowPs();
                        Admit(next);
                    });
}

ServingSimulation::Impl::SlotRef
ServingSimulation::Impl::Route(const SequenceState& seq)
{
    SlotRef least;
    PickSlot(0, nullptr, least);
    if (!m_sc.router.cacheAware)
    {
        return least;
    }
    size_t minLoad = SIZE_MAX;
    size_t maxLoad = 0;
    SlotRef best = least;
    uint64_t bestHit = 0;
    const Pool& p = m_pools[0];
    for (uint32_t e = 0; e < p.engines.size(); ++e)
    {
        for (uint32_t v = 0; v < p.engines[e].ves.size(); ++v)
        {
            const auto& scheds = p.engines[e].ves[v].scheds;
            for (uint32_t g = 0; g < scheds.size(); ++g)
            {
                const size_t load = scheds[g]->Outstanding();
                minLoad = std::min(minLoad, load);
                maxLoad = std::max(maxLoad, load);
                const uint64_t hit
                    = scheds[g]->Blocks().CachedTokensOf(seq.blockHashes, seq.Known());
                if (hit > bestHit)
                {
                    bestHit = hit;
                    best = SlotRef{0, e, v, g};
                }
            }
        }
    }
    const bool imbalanced = maxLoad - minLoad > m_sc.router.balanceAbs
                            && double(maxLoad) > m_sc.router.balanceRel * double(minLoad);
    if (imbalanced || double(bestHit) < m_sc.router.cacheThreshold * double(seq.promptTokens)
        || bestHit == 0)
    {
        return least;
    }
    return best;
}

void
ServingSimulation::Impl::CheckPrefixCaching() const
{
    if (!m_sc.kv.prefixCaching)
    {
        return;
    }
    const KvCacheGroups g = KvCacheGroups::Of(m_sc.model);
    std::string why;
    if (g.sliding > 0 || g.linear > 0)
    {
        why = "a model with full-attention layers only (sliding-window or linear layers "
              "cache by other rules, not modelled yet)";
    }
    else if (m_sc.disagg.enabled && m_sc.disagg.transfer == KvTransferMode::Layerwise)
    {
        why = "bulk KV transfer when disaggregated (a layer-wise transfer of what the decode "
              "engine lacks is not modelled yet)";
    }
    if (!why.empty())
    {
        throw fabricsim::InputError(m_sc.file, "serving.kv_cache.prefix_caching", why, "true");
    }
}

} // namespace fabricsim
