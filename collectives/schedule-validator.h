/*
 * Semantic validator for schedules: structural checks, then a symbolic chunk-level execution
 * (FIFO channels per (sender, receiver, channel), in-order threadblocks, cross-threadblock
 * dependencies, blocking receives), then the collective's post-condition compared as
 * multisets of (rank, chunk) contributions.
 */
#ifndef FABRICSIM_SCHEDULE_VALIDATOR_H
#define FABRICSIM_SCHEDULE_VALIDATOR_H

#include "schedule-ir.h"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace fabricsim
{

/// What is wrong.
enum class ProblemKind
{
    kStructure,             ///< malformed schedule (peers, channels, ranks, counts, sizes)
    kStepIndex,             ///< step index differs from its position
    kDuplicateChannel,      ///< two threadblocks share (send peer, chan) or (recv peer, chan)
    kDependency,            ///< dependency on a missing/later step or one without hasdep
    kOutOfBounds,           ///< offset + count outside the buffer
    kCountMismatch,         ///< receive count differs from the matching send's count
    kDeadlock,              ///< steps remain but none can run
    kUnmatchedMessage,      ///< a sent message is never received
    kUninitializedRead,     ///< a step reads a chunk no step (nor the input) has written
    kMissingContribution,   ///< output lacks an expected contribution
    kDuplicateContribution, ///< output counts a contribution more than once
    kWrongResult,           ///< output holds a contribution it should not
    kCollectiveMismatch     ///< collective or rank count differs from what was expected
};

/// Stable lower-case name of a problem kind, e.g. "deadlock", "duplicate-contribution".
std::string ToString(ProblemKind kind);

/// One problem; rank / tb / step are -1 when not applicable.
struct Problem
{
    int m_rank = -1;
    int m_tb = -1;   ///< threadblock id
    int m_step = -1; ///< step position in the threadblock
    ProblemKind m_kind = ProblemKind::kStructure;
    std::string m_message; ///< says what was expected and what was found

    /// "rank 3 tb 1 step 4: deadlock: ..."
    std::string ToString() const;
};

/// Outcome of ValidateSchedule.
struct ValidationReport
{
    bool m_valid = true;
    std::vector<Problem> m_problems;
    std::vector<std::string> m_notes; ///< informational (modes checked, skipped phases)
    size_t m_stepsExecuted = 0;       ///< steps run (first interleaving, summed over modes)
    /// Chunks one connection must hold at once for the schedule to progress
    /// (ConnectionChunksNeeded; the executor's tiles are sized for it); 0 when it cannot.
    int m_connectionChunks = 0;

    /// Number of problems of \p kind.
    size_t Count(ProblemKind kind) const;
};

/**
 * Validates \p schedule.
 *
 * In-place schedules run with MSCCL's aliasing (allreduce/alltoall/broadcast/reduce: o = i;
 * allgather: input chunk j = output[rank*K/N + j]; reducescatter: output j =
 * input[rank*K/N + j]; K = chunks per loop, N = ranks). A schedule declaring both inplace and
 * outofplace is checked in both modes. Custom collectives get no post-condition.
 *
 * \param expectedCollective if set and different from the schedule's, a kCollectiveMismatch
 *        problem (a custom schedule is instead checked against this collective's
 *        post-condition)
 * \param expectedRanks if > 0 and different from the schedule's rank count, a problem
 */
ValidationReport ValidateSchedule(const Schedule& schedule,
                                  std::optional<CollectiveKind> expectedCollective = std::nullopt,
                                  int expectedRanks = 0);

} // namespace fabricsim

#endif
