// The serving loop's requests as sequences: prompt tokens, prefix-cache identities, and the
// later turns of a conversation (part of ServingSimulation::Impl).

#include "input-error.h"
#include "serving-simulation-impl.h"
#include "unit-conversions.h"

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
