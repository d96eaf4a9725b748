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

#include <cstdint>
#include <map>
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

    /// Tokens the cache holds (numBlocks x blockSize).
    uint64_t Tokens() const
    {
        return numBlocks * blockSize;
    }

    /**
     * \brief Size the cache of a pool. numBlocks = min over stages of
     * floor(kvBytesPerRank / (blockSize x KV bytes per token of the stage's rank)), where
     * kvBytesPerRank = HBM x utilisation - weights - activations (hbm) or the tier capacity.
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
 * \brief Paged block allocator: each sequence holds ceil(tokens / blockSize) blocks.
 */
class BlockAllocator
{
  public:
    /// \p numBlocks blocks of \p blockSize tokens.
    BlockAllocator(uint64_t numBlocks = 0, uint32_t blockSize = 16);

    /// Blocks \p tokens tokens need.
    uint64_t BlocksFor(uint64_t tokens) const;

    /// True if sequence \p seq can grow to \p tokens tokens.
    bool CanGrow(uint64_t seq, uint64_t tokens) const;

    /// Grow sequence \p seq to hold \p tokens tokens; false (and no change) if it does not fit.
    bool Grow(uint64_t seq, uint64_t tokens);

    /// Release every block of \p seq.
    void Free(uint64_t seq);

    /// Blocks held by \p seq.
    uint64_t Held(uint64_t seq) const;

    /// Free blocks.
    uint64_t FreeBlocks() const
    {
        return m_total - m_used;
    }

    /// Used blocks.
    uint64_t UsedBlocks() const
    {
        return m_used;
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
    uint64_t m_total;                    //!< blocks in the cache
    uint32_t m_blockSize;                //!< tokens per block
    uint64_t m_used = 0;                 //!< blocks in use
    std::map<uint64_t, uint64_t> m_held; //!< blocks per sequence
};

} // namespace fabricsim

#endif
