#include "serving-scheduler.h"

#include <algorithm>
#include <stdexcept>

namespace fabricsim
{

StepBatch
ScheduledBatch::ToStepBatch() const
{
    StepBatch b;
    for (const auto& s : sequences)
    {
        b.sequences.push_back(SequenceWork{s.newTokens, s.cached, s.samples});
    }
    b.images = images;
    b.audioSeconds = audioSeconds;
    return b;
}

uint64_t
ScheduledBatch::Tokens() const
{
    uint64_t t = 0;
    for (const auto& s : sequences)
    {
        t += s.newTokens;
    }
    return t;
}

uint64_t
ScheduledBatch::PrefillTokens() const
{
    uint64_t t = 0;
    for (const auto& s : sequences)
    {
        t += s.prefill ? s.newTokens : 0;
    }
    return t;
}

ServingScheduler::ServingScheduler(const BatchingSpec& batching,
                                   uint64_t numBlocks,
                                   uint32_t blockSize,
                                   const KvCacheGroups& groups,
                                   bool prefixCaching)
    : m_batching(batching)
    , m_blocks(numBlocks, blockSize, groups, prefixCaching)
{
}

void
ServingScheduler::Enqueue(const SequenceState& s)
{
    m_seqs[s.id] = s;
    m_waiting.push_back(s.id);
}

bool
ServingScheduler::Reserve(uint64_t id,
                          uint64_t tokens,
                          uint64_t computed,
                          const BlockHashList& hashes)
{
    if (hashes && m_blocks.Caching())
    {
        m_blocks.Attach(id, hashes);
        return m_blocks.Grow(id, tokens, computed, false);
    }
    return m_blocks.Grow(id, tokens, computed);
}

void
ServingScheduler::AddRunning(const SequenceState& s)
{
    m_seqs[s.id] = s;
    m_running.push_back(s.id);
    if (m_blocks.Caching())
    {
        m_blocks.Grow(s.id, s.computed, s.computed); // its KV arrived: now findable
    }
}

void
ServingScheduler::SetAdmitHook(AdmitHook hook)
{
    m_admit = std::move(hook);
}

void
ServingScheduler::SetHoldFinished(bool hold)
{
    m_holdFinished = hold;
}

void
ServingScheduler::Release(uint64_t id)
{
    m_blocks.Free(id);
    if (std::find(m_running.begin(), m_running.end(), id) == m_running.end()
        && std::find(m_waiting.begin(), m_waiting.end(), id) == m_waiting.end())
    {
        m_seqs.erase(id);
    }
}

const SequenceState&
ServingScheduler::Get(uint64_t id) const
{
    return m_seqs.at(id);
}

bool
ServingScheduler::HasWork() const
{
    return !m_running.empty() || !m_waiting.empty();
}

size_t
ServingScheduler::Outstanding() const
{
    return m_running.size() + m_waiting.size();
}

uint64_t
ServingScheduler::PreemptLast()
{
    uint64_t id = m_running.back();
    m_running.pop_back();
    m_blocks.Free(id);
    SequenceState& s = m_seqs.at(id);
    s.computed = 0; // recompute: prompt and generated tokens are prefilled again
    s.preemptions++;
    m_preemptions++;
    m_waiting.push_front(id);
    return id;
}

ScheduledBatch
ServingScheduler::Schedule(int64_t admitUpToPs)
{
    ScheduledBatch batch;
    uint64_t budget = m_batching.maxNumBatchedTokens;
    auto add = [&](SequenceState& s, uint64_t n, uint64_t hit)
    {
        ScheduledSequence e;
        e.id = s.id;
        e.newTokens = uint32_t(n);
        e.cached = s.computed;
        e.cacheHit = hit;
        e.samples = s.computed + n == s.Known();
        // A step that brings more than one token, or starts from nothing, is prefill work.
        e.prefill = n > 1 || s.computed < s.promptTokens;
        if (s.computed == hit)
        {
            batch.images += s.images;
            batch.audioSeconds += s.audioSeconds;
        }
        batch.sequences.push_back(e);
        budget -= n;
    };

    for (size_t i = 0; i < m_running.size() && budget > 0;)
    {
        uint64_t id = m_running[i];
        SequenceState& s = m_seqs.at(id);
        uint64_t need = s.Known() - s.computed;
        uint64_t n = std::min<uint64_t>(need, budget);
        if (!m_batching.chunkedPrefill && n < need)
        {
            ++i;
            continue;
        }
        bool self = false;
        while (!m_blocks.CanGrow(id, s.computed + n, s.computed))
        {
            uint64_t victim = PreemptLast();
            batch.preempted++;
            batch.preemptedIds.push_back(victim);
            if (victim == id)
            {
                self = true;
                break;
            }
        }
        if (self)
        {
            break;
        }
        m_blocks.Grow(id, s.computed + n, s.computed);
        add(s, n, 0);
        ++i;
    }

    if (batch.preempted == 0)
    {
        while (!m_waiting.empty() && budget > 0 && m_running.size() < m_batching.maxNumSeqs)
        {
            uint64_t id = m_waiting.front();
            SequenceState& s = m_seqs.at(id);
            if (s.enqueuedPs > admitUpToPs)
            {
                break;
            }
            // A sequence starting over (new or preempted) skips what the prefix cache holds.
            uint64_t hit = 0;
            if (s.blockHashes && s.computed == 0)
            {
                m_blocks.Attach(id, s.blockHashes);
                hit = m_blocks.CachedTokens(id, s.Known());
            }
            const uint64_t from = s.computed + hit;
            uint64_t need = s.Known() - from;
            uint64_t n = std::min<uint64_t>(need, budget);
            if (!m_batching.chunkedPrefill && n < need)
            {
                break;
            }
            if (!m_blocks.CanGrow(id, from + n, from))
            {
                break;
            }
            if (m_admit && !m_admit(s))
            {
                break;
            }
            m_blocks.Grow(id, from + n, from);
            m_waiting.pop_front();
            m_running.push_back(id);
            s.computed = from;
            add(s, n, hit);
        }
    }
    return batch;
}

StepOutcome
ServingScheduler::Complete(const ScheduledBatch& batch)
{
    StepOutcome out;
    for (const auto& e : batch.sequences)
    {
        auto it = m_seqs.find(e.id);
        if (it == m_seqs.end())
        {
            throw std::logic_error("scheduler: completed step names an unknown sequence");
        }
        SequenceState& s = it->second;
        s.computed += e.newTokens;
        if (!e.samples)
        {
            continue;
        }
        s.generated++;
        out.sampled.push_back(s.id);
        if (s.generated >= s.targetTokens)
        {
            out.finished.push_back(s.id);
            m_running.erase(std::find(m_running.begin(), m_running.end(), s.id));
            if (!m_holdFinished)
            {
                m_blocks.Free(s.id);
                m_seqs.erase(it);
            }
        }
    }
    return out;
}

} // namespace fabricsim
