/*
 * Paged KV cache: how many blocks fit on a rank (from HBM left after weights and activations, or
 * an offload tier's capacity) and the block allocator the scheduler draws from.
 */
#ifndef FABRICSIM_SERVING_KV_CACHE_H
#define FABRICSIM_SERVING_KV_CACHE_H

#include "hardware-spec.h"
#include "inference-scenario.h"
#include "model-spec.h"
#include "parallelism-spec.h"
#include "prefix-cache.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>

namespace fabricsim
{

/// Weight bytes one rank of pipeline stage \p stage holds (its layers, experts and shards).
double WeightBytesPerRank(const ModelSpec& model, const ParallelismSpec& par, uint32_t stage);

/**
 * \brief Peak activation bytes of one rank in a step of \p maxTokens tokens and \p maxSeqs
 * sampled sequences (the profiling pass vLLM runs before sizing its cache):
 * T b (2 H + (n_h + 2 n_kv) d / tp + 2 I' / tp) + S V / tp x 4 (fp32 logits), where I' is the
 * dense width I or, for MoE, the k I_e of a token's experts.
 */
double ActivationBytesPerRank(const ModelSpec& model,
                              const ParallelismSpec& par,
                              uint32_t maxTokens,
                              uint32_t maxSeqs);

/**
 * \brief How the layers share one block pool, as vLLM's hybrid KV-cache manager does (design
 * doc at vLLM commit 458e74, docs/design/hybrid_kv_cache_manager.md): layers of one kind form
 * groups of layersPerGroup (the smallest layer count of any kind; the last group of a kind is
 * padded); a block holds blockSize tokens of every layer of one group; a full group needs a
 * block per blockSize tokens, a sliding one frees the blocks wholly before its window, a linear
 * one holds its state in one block (the attention block size grown until a block holds a
 * state). A model with full layers only is one group of all its layers.
 */
struct KvCacheGroups
{
    uint32_t layersPerGroup = 0; //!< layers a block spans (padding included)
    uint32_t full = 1;           //!< groups of full-attention layers
    uint32_t sliding = 0;        //!< groups of sliding-window layers
    uint64_t window = 0;         //!< their window (tokens)
    uint32_t linear = 0;         //!< groups of linear-attention layers: one block a sequence

    /// The groups of \p model's layers.
    static KvCacheGroups Of(const ModelSpec& model);

    /**
     * \brief Blocks one sequence holds with \p tokens tokens in the cache, \p computed of them
     * computed: ceil(tokens / B) per full group; per sliding group that less the blocks wholly
     * before token computed - window + 1 (vLLM's SlidingWindowManager skips those); one per
     * linear group.
     */
    uint64_t Blocks(uint64_t tokens, uint64_t computed, uint32_t blockSize) const;

    /// The most blocks a sequence of \p tokens tokens holds on its way, computing at most
    /// \p chunk tokens a step.
    uint64_t PeakBlocks(uint64_t tokens, uint64_t chunk, uint32_t blockSize) const;
};

/**
 * \brief The KV-cache size of one attention group.
 */
struct KvCacheBudget
{
    double usableBytes = 0;     //!< HBM x gpu_memory_utilization per rank
    double weightBytes = 0;     //!< weights per rank (largest stage)
    double activationBytes = 0; //!< peak activations per rank
    double kvBytesPerRank = 0;  //!< bytes left for the KV cache per rank (or the tier capacity)
    double kvBytesPerToken = 0; //!< KV bytes per token on the rank of the largest stage
    uint64_t numBlocks = 0;     //!< blocks of blockSize tokens the group can hold
    uint32_t blockSize = 16;    //!< tokens per block
    KvCacheGroups groups;       //!< how the layers share the blocks

    /// Tokens the cache holds (numBlocks x blockSize).
    uint64_t Tokens() const
    {
        return numBlocks * blockSize;
    }

    /// Tokens \p blocks blocks hold in a full-attention group (UINT64_MAX past 64 bits).
    uint64_t TokensIn(uint64_t blocks) const;

    /// True if a sequence of \p tokens tokens, computed \p chunk a step at most, fits in
    /// \p blocks blocks all its life.
    bool Holds(uint64_t tokens, uint64_t chunk, uint64_t blocks) const;

    /**
     * \brief Size the cache of a pool. numBlocks = min over stages of
     * floor(kvBytesPerRank / (blockSize x KV bytes per token of the stage's rank)), where
     * kvBytesPerRank = HBM x utilisation - weights - activations (hbm) or the tier capacity.
     * With sliding or linear layers a block spans groups.layersPerGroup layers (of a stage:
     * that share of its layers) instead of all of them; with linear layers blockSize grows, in
     * steps of 16 tokens, until an attention layer's block holds a linear layer's state (vLLM
     * sets its attention block size so, and pads the state to it).
     * InputError naming \p field when the weights and activations do not fit.
     */
    static KvCacheBudget Compute(const ModelSpec& model,
                                 const HardwareSpec& hw,
                                 const ParallelismSpec& par,
                                 const BatchingSpec& batching,
                                 const KvCacheSpec& kv,
                                 const std::string& file = "",
                                 const std::string& field = "parallelism");
};

/**
 * \brief Paged block allocator over one pool shared by the KV-cache groups: a sequence holds
 * KvCacheGroups::Blocks (ceil(tokens / blockSize) with full layers only). With prefix caching
 * (full-attention layers only) the blocks have identities (PrefixBlockPool): a sequence
 * attached with its block hashes may start with blocks another one computed.
 */
class BlockAllocator
{
  public:
    /// \p numBlocks blocks of \p blockSize tokens shared by \p groups; \p prefixCaching
    /// gives them identities (std::invalid_argument with sliding or linear groups).
    BlockAllocator(uint64_t numBlocks = 0,
                   uint32_t blockSize = 16,
                   const KvCacheGroups& groups = KvCacheGroups(),
                   bool prefixCaching = false);

    /// True when blocks have identities.
    bool Caching() const
    {
        return m_prefix != nullptr;
    }

    /// Prefix caching: sequence \p seq's block hashes, before it takes blocks.
    void Attach(uint64_t seq, BlockHashList hashes);

    /// Prefix caching: tokens of \p seq (attached, holding nothing, \p known tokens) in the
    /// cache (PrefixBlockPool::CachedTokens); 0 without caching.
    uint64_t CachedTokens(uint64_t seq, uint64_t known) const;

    /// Prefix caching: tokens of a sequence with \p hashes (not attached) in the cache; 0
    /// without caching or hashes.
    uint64_t CachedTokensOf(const BlockHashList& hashes, uint64_t known) const;

    /// CanGrow for sequence \p seq, holding nothing, with \p hashes not yet attached.
    bool CanAdmit(uint64_t seq,
                  const BlockHashList& hashes,
                  uint64_t tokens,
                  uint64_t computed) const;

    /// Blocks \p tokens tokens need, \p computed of them computed.
    uint64_t BlocksFor(uint64_t tokens, uint64_t computed = 0) const;

    /// True if sequence \p seq can hold \p tokens tokens, \p computed of them computed.
    bool CanGrow(uint64_t seq, uint64_t tokens, uint64_t computed = 0) const;

    /**
     * \brief Make sequence \p seq hold \p tokens tokens, \p computed of them computed: takes
     * the blocks it lacks, returns those a sliding window left behind; false (and no change)
     * if the ones it lacks are not free. With prefix caching, \p scheduled false registers
     * only the computed blocks (the rest is KV still to arrive).
     */
    bool Grow(uint64_t seq, uint64_t tokens, uint64_t computed = 0, bool scheduled = true);

    /// Release every block of \p seq.
    void Free(uint64_t seq);

    /// Blocks held by \p seq.
    uint64_t Held(uint64_t seq) const;

    /// Free blocks (with prefix caching, cached ones no sequence holds count as free).
    uint64_t FreeBlocks() const;

    /// Used blocks.
    uint64_t UsedBlocks() const
    {
        return m_total - FreeBlocks();
    }

    /// All blocks.
    uint64_t TotalBlocks() const
    {
        return m_total;
    }

    /// Tokens per block.
    uint32_t BlockSize() const
    {
        return m_blockSize;
    }

  private:
    uint64_t m_total;                          //!< blocks in the cache
    uint32_t m_blockSize;                      //!< tokens per block
    KvCacheGroups m_groups;                    //!< how the layers share them
    uint64_t m_used = 0;                       //!< blocks in use
    std::map<uint64_t, uint64_t> m_held;       //!< blocks per sequence
    std::unique_ptr<PrefixBlockPool> m_prefix; //!< blocks with identities (prefix caching)
};

} // namespace fabricsim

#endif
