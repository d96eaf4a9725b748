/*
 * Automatic prefix caching as vLLM v1 does it: a block is known by the hash of every token up
 * to its end, full blocks are registered once scheduled, freed blocks keep their identity in
 * the free queue until a new block needs their memory, and a request skips the longest run of
 * its leading blocks found there (SGLang's radix cache gives the same hits on full blocks).
 */
#ifndef FABRICSIM_SERVING_PREFIX_CACHE_H
#define FABRICSIM_SERVING_PREFIX_CACHE_H

#include <cstdint>
#include <list>
#include <memory>
#include <unordered_map>
#include <vector>

namespace fabricsim
{

/**
 * \brief A run of tokens of one content: the first \p tokens tokens of content \p content.
 * Two requests whose token sequences begin with the same runs share those tokens (a system
 * prompt, an earlier turn of a conversation, a trace's block).
 */
struct ContentSpan
{
    uint64_t content = 0; //!< what the tokens are (an id; equal ids, equal tokens)
    uint64_t tokens = 0;  //!< how many of them
};

/// Content ids of the kinds of runs a request is made of (kind in the top byte).
enum class ContentKind : uint8_t
{
    Unique = 1,       //!< a request's own tokens (its id)
    SystemPrompt = 2, //!< a shared system prompt (its index)
    Answer = 3,       //!< a request's generated tokens (its id)
    Turn = 4,         //!< a conversation turn's new user tokens (the request's id)
    TraceBlock = 5,   //!< a trace's block hash id
    Encoder = 6       //!< a request's encoder output tokens (its id)
};

/// The content id of run \p value of kind \p kind.
uint64_t ContentId(ContentKind kind, uint64_t value);

/**
 * \brief The hash of each full block of \p blockSize tokens of \p spans, each one chained to
 * the one before (so equal hashes mean equal tokens from the start); the tokens after the last
 * full block have none.
 */
std::vector<uint64_t> BlockHashes(const std::vector<ContentSpan>& spans, uint32_t blockSize);

/// Block hashes of one sequence, shared by the copies of its state.
using BlockHashList = std::shared_ptr<const std::vector<uint64_t>>;

/**
 * \brief Blocks with identities (vLLM's BlockPool and its free queue). Blocks never used are
 * taken first; then the free queue's head, whose identity is dropped (evicted). A sequence
 * frees its blocks last-first onto the queue's tail, so its tail goes before its prefix.
 */
class PrefixBlockPool
{
  public:
    /// \p numBlocks blocks of \p blockSize tokens.
    PrefixBlockPool(uint64_t numBlocks, uint32_t blockSize);

    /// Sequence \p seq's block hashes (kept until Free).
    void Attach(uint64_t seq, BlockHashList hashes);

    /**
     * \brief Tokens of sequence \p seq (attached, holding nothing) found in the cache: whole
     * leading blocks up to the first one missing, at most \p known - 1 tokens (vLLM computes
     * the last token again to sample from it).
     */
    uint64_t CachedTokens(uint64_t seq, uint64_t known) const;

    /// CachedTokens of a sequence with block hashes \p hashes, not attached.
    uint64_t CachedTokensOf(const std::vector<uint64_t>& hashes, uint64_t known) const;

    /// CanGrow of a sequence with \p hashes holding nothing, not attached.
    bool CanAdmit(const std::vector<uint64_t>& hashes, uint64_t tokens, uint64_t computed) const;

    /// True if \p seq can hold ceil(tokens / B) blocks, its first computed / B from the cache.
    bool CanGrow(uint64_t seq, uint64_t tokens, uint64_t computed) const;

    /**
     * \brief Make \p seq hold ceil(tokens / B) blocks: leading blocks inside \p computed are
     * taken from the cache (found by CachedTokens), the others from the free queue; then
     * every full block inside \p tokens (\p scheduled) or inside \p computed (KV that is
     * still to arrive is not findable) is registered under its hash unless another block
     * already is. False (and no change) if they do not fit.
     */
    bool Grow(uint64_t seq, uint64_t tokens, uint64_t computed, bool scheduled = true);

    /// Release \p seq's blocks (registered ones stay in the cache) and its hashes.
    void Free(uint64_t seq);

    /// Blocks held by \p seq.
    uint64_t Held(uint64_t seq) const;

    /// Blocks not held by any sequence (some still cached).
    uint64_t FreeBlocks() const;

    /// Registered blocks (held or in the free queue).
    uint64_t CachedBlocks() const
    {
        return m_cached.size();
    }

  private:
    /// A registered block.
    struct Cached
    {
        uint32_t refs = 0;                      //!< sequences holding it
        std::list<uint64_t>::iterator queuePos; //!< its place in the free queue when refs 0
    };
    /// A sequence's blocks.
    struct Sequence
    {
        BlockHashList hashes;         //!< its block hashes
        uint64_t held = 0;            //!< blocks held
        uint64_t privateBlocks = 0;   //!< of which not registered
        uint64_t registered = 0;      //!< leading blocks looked up or registered
        std::vector<uint64_t> shared; //!< hashes of the registered ones, in block order
    };

    /// Blocks a sequence with \p hashes (may be null) holding \p held would take to hold
    /// ceil(tokens / B), its first computed / B from the cache: new ones and cache hits now in
    /// the free queue.
    uint64_t Cost(const std::vector<uint64_t>* hashes,
                  uint64_t held,
                  uint64_t tokens,
                  uint64_t computed) const;
    /// Take a block from the free queue (never-used ones first, else evict the head).
    void TakeFree();

    uint32_t m_blockSize;                          //!< tokens per block
    uint64_t m_neverUsed;                          //!< blocks not yet handed out
    std::list<uint64_t> m_queue;                   //!< free queue: hash, or 0 if none
    std::unordered_map<uint64_t, Cached> m_cached; //!< registered blocks by hash
    std::unordered_map<uint64_t, Sequence> m_seqs; //!< sequences holding blocks
};

} // namespace fabricsim

#endif
