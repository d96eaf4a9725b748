#include "prefix-cache.h"

#include "mix64.h"

#include <algorithm>
#include <stdexcept>

namespace fabricsim
{

uint64_t
ContentId(ContentKind kind, uint64_t value)
{
    if (value >> 56)
    {
        throw std::out_of_range("content id: value past 56 bits");
    }
    return (uint64_t(kind) << 56) | value;
}

std::vector<uint64_t>
BlockHashes(const std::vector<ContentSpan>& spans, uint32_t blockSize)
{
    std::vector<uint64_t> out;
    uint64_t h = Mix64(0);
    uint64_t fill = 0; // tokens of the current block so far
    for (const ContentSpan& s : spans)
    {
        uint64_t offset = 0;
        while (offset < s.tokens)
        {
            uint64_t n = std::min<uint64_t>(s.tokens - offset, blockSize - fill);
            // The block's hash covers each piece: which content, from where, how much.
            h = Mix64(h ^ Mix64(s.content ^ Mix64(offset ^ Mix64(n))));
            offset += n;
            fill += n;
            if (fill == blockSize)
            {
                out.push_back(h == 0 ? 1 : h); // 0 marks a block without identity
                fill = 0;
            }
        }
    }
    return out;
}

PrefixBlockPool::PrefixBlockPool(uint64_t numBlocks, uint32_t blockSize)
    : m_blockSize(blockSize)
    , m_neverUsed(numBlocks)
{
}

void
PrefixBlockPool::Attach(uint64_t seq, BlockHashList hashes)
{
    Sequence& s = m_seqs[seq];
    if (s.held > 0)
    {
        throw std::logic_error("prefix cache: hashes attached to a sequence holding blocks");
    }
    s.hashes = std::move(hashes);
}

uint64_t
PrefixBlockPool::CachedTokens(uint64_t seq, uint64_t known) const
{
    auto it = m_seqs.find(seq);
    if (it == m_seqs.end() || !it->second.hashes)
    {
        return 0;
    }
    return CachedTokensOf(*it->second.hashes, known);
}

uint64_t
PrefixBlockPool::CachedTokensOf(const std::vector<uint64_t>& h, uint64_t known) const
{
    if (known == 0)
    {
        return 0;
    }
    const uint64_t most = std::min<uint64_t>((known - 1) / m_blockSize, h.size());
    uint64_t n = 0;
    while (n < most && m_cached.count(h[n]))
    {
        ++n;
    }
    return n * m_blockSize;
}

uint64_t
PrefixBlockPool::Cost(const std::vector<uint64_t>* hashes,
                      uint64_t held,
                      uint64_t tokens,
                      uint64_t computed) const
{
    const uint64_t need = (tokens + m_blockSize - 1) / m_blockSize;
    if (need <= held)
    {
        return 0;
    }
    uint64_t cost = need - held;
    const uint64_t hitEnd = std::min<uint64_t>(computed / m_blockSize, hashes ? hashes->size() : 0);
    for (uint64_t j = held; j < std::min(need, hitEnd); ++j)
    {
        auto c = m_cached.find((*hashes)[j]);
        if (c == m_cached.end())
        {
            break;
        }
        if (c->second.refs > 0)
        {
            --cost; // held by another sequence: shared, not taken from the free queue
        }
    }
    return cost;
}

bool
PrefixBlockPool::CanGrow(uint64_t seq, uint64_t tokens, uint64_t computed) const
{
    auto it = m_seqs.find(seq);
    if (it == m_seqs.end())
    {
        return Cost(nullptr, 0, tokens, computed) <= FreeBlocks();
    }
    const Sequence& s = it->second;
    return Cost(s.hashes.get(), s.held, tokens, computed) <= FreeBlocks();
}

bool
PrefixBlockPool::CanAdmit(const std::vector<uint64_t>& hashes,
                          uint64_t tokens,
                          uint64_t computed) const
{
    return Cost(&hashes, 0, tokens, computed) <= FreeBlocks();
}

void
PrefixBlockPool::TakeFree()
{
    if (m_neverUsed > 0)
    {
        --m_neverUsed;
        return;
    }
    uint64_t h = m_queue.front();
    m_queue.pop_front();
    if (h != 0)
    {
        m_cached.erase(h); // evicted: its memory is the new block
    }
}

bool
PrefixBlockPool::Grow(uint64_t seq, uint64_t tokens, uint64_t computed, bool scheduled)
{
    Sequence& s = m_seqs[seq];
    if (Cost(s.hashes.get(), s.held, tokens, computed) > FreeBlocks())
    {
        return false;
    }
    const uint64_t need = (tokens + m_blockSize - 1) / m_blockSize;
    const uint64_t hashed = s.hashes ? s.hashes->size() : 0;
    const uint64_t hitEnd = std::min<uint64_t>(computed / m_blockSize, hashed);
    // Cache hits first, so that no new block evicts one of them.
    while (s.held < std::min(need, hitEnd) && s.held == s.registered)
    {
        auto c = m_cached.find((*s.hashes)[s.held]);
        if (c == m_cached.end())
        {
            break;
        }
        if (c->second.refs++ == 0)
        {
            m_queue.erase(c->second.queuePos);
        }
        s.shared.push_back(c->first);
        ++s.held;
        ++s.registered;
    }
    for (; s.held < need; ++s.held)
    {
        TakeFree();
        ++s.privateBlocks;
    }
    // Register the full blocks scheduled (vLLM caches them at scheduling, before the step).
    const uint64_t full = std::min<uint64_t>((scheduled ? tokens : computed) / m_blockSize, hashed);
    for (; s.registered < full; ++s.registered)
    {
        uint64_t h = (*s.hashes)[s.registered];
        if (m_cached.count(h) == 0)
        {
            m_cached[h].refs = 1;
            s.shared.push_back(h);
            --s.privateBlocks;
        }
    }
    return true;
}

void
PrefixBlockPool::Free(uint64_t seq)
{
    auto it = m_seqs.find(seq);
    if (it == m_seqs.end())
    {
        return;
    }
    Sequence& s = it->second;
    // The tail first: unregistered blocks (the partial last one, duplicates), then the
    // registered ones last-first, so that a prefix outlives its continuations.
    m_queue.insert(m_queue.end(), s.privateBlocks, 0);
    for (auto h = s.shared.rbegin(); h != s.shared.rend(); ++h)
    {
        Cached& c = m_cached.at(*h);
        if (--c.refs == 0)
        {
            c.queuePos = m_queue.insert(m_queue.end(), *h);
        }
    }
    m_seqs.erase(it);
}

uint64_t
PrefixBlockPool::Held(uint64_t seq) const
{
    auto it = m_seqs.find(seq);
    return it == m_seqs.end() ? 0 : it->second.held;
}

uint64_t
PrefixBlockPool::FreeBlocks() const
{
    return m_neverUsed + m_queue.size();
}

} // namespace fabricsim
