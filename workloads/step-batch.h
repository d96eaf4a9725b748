/*
 * The work of one inference step: which sequences run and how many tokens each brings.
 */
#ifndef FABRICSIM_WORKLOADS_STEP_BATCH_H
#define FABRICSIM_WORKLOADS_STEP_BATCH_H

#include <cstdint>
#include <vector>

namespace fabricsim
{

/**
 * \brief One sequence's share of a step: q new tokens on top of c cached ones.
 * Decode: q = 1; prefill: q = prompt (chunk) length, c = tokens already prefilled.
 */
struct SequenceWork
{
    uint32_t newTokens = 1;    //!< q: tokens computed this step
    uint64_t cachedTokens = 0; //!< c: tokens already in the KV cache
    bool samples = true;       //!< true if this step samples a token for it (LM head runs)
};

/**
 * \brief The batch one attention group (tp ranks) runs in one step.
 */
struct StepBatch
{
    std::vector<SequenceWork> sequences; //!< the sequences of the step
    double images = 0;                   //!< images to encode this step (multimodal encoder stage)
    double audioSeconds = 0;             //!< seconds of audio to encode this step

    /// T = sum of q.
    double Tokens() const
    {
        double t = 0;
        for (const auto& s : sequences)
        {
            t += s.newTokens;
        }
        return t;
    }

    /// Some sequence computes prompt tokens (more than one new token, or none cached yet).
    bool HasPrefill() const
    {
        for (const auto& s : sequences)
        {
            if (s.newTokens > 1 || s.cachedTokens == 0)
            {
                return true;
            }
        }
        return false;
    }

    /// S = sequences that sample.
    uint32_t SamplingSequences() const
    {
        uint32_t n = 0;
        for (const auto& s : sequences)
        {
            n += s.samples ? 1 : 0;
        }
        return n;
    }

    /// \p batch decode sequences, each with \p context cached tokens.
    static StepBatch Decode(uint32_t batch, uint64_t context)
    {
        StepBatch b;
        b.sequences.assign(batch, SequenceWork{1, context, true});
        return b;
    }

    /// \p batch prefills of \p prompt tokens each from an empty cache.
    static StepBatch Prefill(uint32_t batch, uint32_t prompt)
    {
        StepBatch b;
        b.sequences.assign(batch, SequenceWork{prompt, 0, true});
        return b;
    }
};

} // namespace fabricsim

#endif
