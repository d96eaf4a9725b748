/*
 * Continuous-batching scheduler of one attention group (vLLM v1 policy): FCFS admission under a
 * token budget and a sequence limit, chunked prefill, a paged KV cache, and preemption by
 * recompute when the cache is full.
 */
#ifndef FABRICSIM_SERVING_SCHEDULER_H
#define FABRICSIM_SERVING_SCHEDULER_H

#include "inference-scenario.h"
#include "kv-cache.h"
#include "step-batch.h"

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <vector>

namespace fabricsim
{

/**
 * \brief A sequence inside an engine.
 */
struct SequenceState
{
    uint64_t id = 0;           //!< request id
    uint64_t promptTokens = 1; //!< LLM prompt tokens (text + encoder output tokens)
    uint64_t targetTokens = 1; //!< generate until this many tokens exist (1 in a prefill pool)
    uint64_t generated = 0;    //!< tokens generated so far (in any engine)
    uint64_t computed = 0;     //!< tokens whose KV is in this engine's cache
    double images = 0;         //!< images to encode before the prompt
    double audioSeconds = 0;   //!< audio to encode before the prompt
    uint32_t preemptions = 0;  //!< times preempted (recompute)
    int64_t enqueuedPs = 0;    //!< when the engine took it (admission cutoffs compare this)
    BlockHashList blockHashes; //!< prefix caching: hashes of its full blocks (prompt, answer)

    /// Tokens known so far: prompt + generated.
    uint64_t Known() const
    {
        return promptTokens + generated;
    }
};

/**
 * \brief One sequence's share of a scheduled step.
 */
struct ScheduledSequence
{
    uint64_t id = 0;        //!< request id
    uint32_t newTokens = 0; //!< tokens computed this step
    uint64_t cached = 0;    //!< tokens already cached
    bool samples = false;   //!< the step ends its known tokens: a token is sampled
    bool prefill = false;   //!< tokens of the prompt (or a recompute) rather than a decode
    uint64_t cacheHit = 0;  //!< admitted this step with this many tokens from the prefix cache
};

/**
 * \brief What the scheduler picked for a step.
 */
struct ScheduledBatch
{
    std::vector<ScheduledSequence> sequences; //!< in schedule order
    double images = 0;                        //!< images encoded this step
    double audioSeconds = 0;                  //!< audio seconds encoded this step
    uint32_t preempted = 0;                   //!< sequences preempted while scheduling
    std::vector<uint64_t> preemptedIds;       //!< which

    /// True when nothing was scheduled.
    bool Empty() const
    {
        return sequences.empty();
    }

    /// The roofline view of the batch.
    StepBatch ToStepBatch() const;

    /// Tokens computed.
    uint64_t Tokens() const;

    /// Tokens of prefill (and recompute) work.
    uint64_t PrefillTokens() const;
};

/**
 * \brief Result of completing a step.
 */
struct StepOutcome
{
    std::vector<uint64_t> sampled;  //!< sequences that got a token
    std::vector<uint64_t> finished; //!< sequences that reached their target
};

/**
 * \brief The scheduler (see the file comment). Per step: running sequences first, in admission
 * order, each taking min(remaining, budget) tokens (whole prompts only without chunked
 * prefill); when a sequence's blocks do not fit, the latest-admitted running sequence is
 * preempted (blocks freed, progress dropped, back to the head of the queue) until they do.
 * Waiting sequences are admitted FCFS after that, unless something was preempted this step,
 * while the budget, max_num_seqs and the free blocks allow; the head of the queue blocks the rest.
 */
class ServingScheduler
{
  public:
    /// Hook asked before a waiting sequence is admitted; false keeps it (and the queue) waiting.
    using AdmitHook = std::function<bool(const SequenceState&)>;

    /**
     * \param batching budget and limits
     * \param numBlocks KV blocks of this scheduler
     * \param blockSize tokens per block
     * \param groups how the model's layers share the blocks
     * \param prefixCaching blocks have identities: a sequence admitted with blockHashes
     * starts from the longest prefix in the cache
     */
    ServingScheduler(const BatchingSpec& batching,
                     uint64_t numBlocks,
                     uint32_t blockSize,
                     const KvCacheGroups& groups = KvCacheGroups(),
                     bool prefixCaching = false);

    /// Queue a new sequence (FCFS).
    void Enqueue(const SequenceState& s);

    /**
     * \brief Reserve blocks for \p tokens tokens of sequence \p id ahead of its arrival (KV
     * transferred in), \p computed of them computed (with prefix caching: found in the cache
     * with \p hashes, which are attached); false if they do not fit. Blocks still to arrive
     * become findable when AddRunning says they are there.
     */
    bool Reserve(uint64_t id,
                 uint64_t tokens,
                 uint64_t computed = 0,
                 const BlockHashList& hashes = nullptr);

    /// Add a sequence whose KV (s.computed tokens, reserved with Reserve) is present: it runs.
    void AddRunning(const SequenceState& s);

    /// Set the admission hook.
    void SetAdmitHook(AdmitHook hook);

    /// When true, finished sequences keep their blocks until Release (prefill pools).
    void SetHoldFinished(bool hold);

    /// Release the blocks of a finished (or reserved) sequence.
    void Release(uint64_t id);

    /**
     * \brief Pick the next step (may be empty). Waiting sequences enqueued after
     * \p admitUpToPs are not admitted yet (nor, FCFS, any behind them): an engine that
     * schedules one step ahead (async scheduling) decided this step before they came.
     */
    ScheduledBatch Schedule(int64_t admitUpToPs = INT64_MAX);

    /// Apply a finished step: advance computed tokens, sample, finish.
    StepOutcome Complete(const ScheduledBatch& batch);

    /// True when something is running or waiting.
    bool HasWork() const;

    /// Sequences running and waiting.
    size_t Outstanding() const;

    /// The state of sequence \p id (must exist).
    const SequenceState& Get(uint64_t id) const;

    /// Running sequence ids in admission order.
    const std::vector<uint64_t>& Running() const
    {
        return m_running;
    }

    /// Waiting sequence ids in queue order.
    const std::deque<uint64_t>& Waiting() const
    {
        return m_waiting;
    }

    /// The block allocator.
    const BlockAllocator& Blocks() const
    {
        return m_blocks;
    }

    /// Preemptions so far.
    uint64_t Preemptions() const
    {
        return m_preemptions;
    }

  private:
    /// Preempt the latest-admitted running sequence; returns its id.
    uint64_t PreemptLast();

    BatchingSpec m_batching;                  //!< limits
    BlockAllocator m_blocks;                  //!< KV blocks
    std::map<uint64_t, SequenceState> m_seqs; //!< every sequence held
    std::vector<uint64_t> m_running;          //!< admission order
    std::deque<uint64_t> m_waiting;           //!< FCFS queue
    AdmitHook m_admit;                        //!< admission hook
    bool m_holdFinished = false;              //!< keep blocks of finished sequences
    uint64_t m_preemptions = 0;               //!< preemption count
};

} // namespace fabricsim

#endif
