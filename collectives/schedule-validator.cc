#include "schedule-validator.h"

#include "buffer-layout.h"
#include "collective-postcondition.h"
#include "connection-capacity.h"
#include "schedule-structure-check.h"
#include "symbolic-execution.h"

#include <set>
#include <tuple>

namespace fabricsim
{

namespace
{

/// Limits beyond which a schedule is not executed (its header is reported as wrong instead).
constexpr int kMaxRanks = 1 << 16;
constexpr int kMaxChunks = 1 << 24;

bool
SizesExecutable(const Schedule& s, std::vector<Problem>& problems)
{
    bool ok = s.m_ranks > 0 && s.m_ranks <= kMaxRanks && s.m_chunksPerLoop <= kMaxChunks;
    if (s.m_ranks > kMaxRanks)
    {
        problems.push_back(Problem{-1,
                                   -1,
                                   -1,
                                   ProblemKind::kStructure,
                                   "ranks: expected at most " + std::to_string(kMaxRanks)
                                       + ", found " + std::to_string(s.m_ranks)});
    }
    for (const auto& p : s.m_programs)
    {
        for (int size : {p.m_inputChunks, p.m_outputChunks, p.m_scratchChunks})
        {
            if (size > kMaxChunks)
            {
                problems.push_back(Problem{p.m_rank,
                                           -1,
                                           -1,
                                           ProblemKind::kStructure,
                                           "buffer size: expected at most "
                                               + std::to_string(kMaxChunks) + " chunks, found "
                                               + std::to_string(size)});
                ok = false;
            }
        }
        // A step moving more chunks than any buffer can hold would have symbolic execution
        // allocate for it (cnt = 2^31 - 1 ended in bad_alloc).
        for (const auto& tb : p.m_threadblocks)
        {
            for (const auto& st : tb.m_steps)
            {
                if (st.m_count > kMaxChunks)
                {
                    problems.push_back(Problem{p.m_rank,
                                               tb.m_id,
                                               st.m_index,
                                               ProblemKind::kStructure,
                                               "count: expected at most "
                                                   + std::to_string(kMaxChunks) + " chunks, found "
                                                   + std::to_string(st.m_count)});
                    ok = false;
                }
            }
        }
    }
    return ok;
}

auto
Identity(const Problem& p)
{
    return std::make_tuple(p.m_rank, p.m_tb, p.m_step, static_cast<int>(p.m_kind), p.m_message);
}

} // namespace

std::string
ToString(ProblemKind kind)
{
    switch (kind)
    {
    case ProblemKind::kStructure:
        return "structure";
    case ProblemKind::kStepIndex:
        return "step-index";
    case ProblemKind::kDuplicateChannel:
        return "duplicate-channel";
    case ProblemKind::kDependency:
        return "dependency";
    case ProblemKind::kOutOfBounds:
        return "out-of-bounds";
    case ProblemKind::kCountMismatch:
        return "count-mismatch";
    case ProblemKind::kDeadlock:
        return "deadlock";
    case ProblemKind::kUnmatchedMessage:
        return "unmatched-message";
    case ProblemKind::kUninitializedRead:
        return "uninitialized-read";
    case ProblemKind::kMissingContribution:
        return "missing-contribution";
    case ProblemKind::kDuplicateContribution:
        return "duplicate-contribution";
    case ProblemKind::kWrongResult:
        return "wrong-result";
    case ProblemKind::kCollectiveMismatch:
        return "collective-mismatch";
    }
    return "structure";
}

std::string
Problem::ToString() const
{
    std::string where;
    if (m_rank >= 0)
    {
        where += "rank " + std::to_string(m_rank);
    }
    if (m_tb >= 0)
    {
        where += (where.empty() ? "" : " ") + std::string("tb ") + std::to_string(m_tb);
    }
    if (m_step >= 0)
    {
        where += (where.empty() ? "" : " ") + std::string("step ") + std::to_string(m_step);
    }
    if (where.empty())
    {
        where = "schedule";
    }
    return where + ": " + fabricsim::ToString(m_kind) + ": " + m_message;
}

size_t
ValidationReport::Count(ProblemKind kind) const
{
    size_t n = 0;
    for (const auto& p : m_problems)
    {
        n += p.m_kind == kind ? 1 : 0;
    }
    return n;
}

ValidationReport
ValidateSchedule(const Schedule& schedule,
                 std::optional<CollectiveKind> expectedCollective,
                 int expectedRanks)
{
    ValidationReport report;
    auto& problems = report.m_problems;
    if (expectedRanks > 0 && expectedRanks != schedule.m_ranks)
    {
        problems.push_back(Problem{-1,
                                   -1,
                                   -1,
                                   ProblemKind::kCollectiveMismatch,
                                   "ranks: expected " + std::to_string(expectedRanks) + ", found "
                                       + std::to_string(schedule.m_ranks)});
    }
    CollectiveKind collective = schedule.m_collective;
    if (expectedCollective && *expectedCollective != schedule.m_collective)
    {
        if (schedule.m_collective == CollectiveKind::kCustom)
        {
            collective = *expectedCollective;
            report.m_notes.push_back("custom schedule checked against the " + ToString(collective)
                                     + " post-condition");
        }
        else
        {
            problems.push_back(Problem{-1,
                                       -1,
                                       -1,
                                       ProblemKind::kCollectiveMismatch,
                                       "collective: expected " + ToString(*expectedCollective)
                                           + ", found " + ToString(schedule.m_collective)});
        }
    }
    if (!SizesExecutable(schedule, problems))
    {
        CheckStructure(schedule, problems);
        report.m_notes.push_back("symbolic execution skipped: schedule sizes are unusable");
        report.m_valid = false;
        return report;
    }
    CheckStructure(schedule, problems);
    if (collective == CollectiveKind::kCustom)
    {
        report.m_notes.push_back("custom collective: no post-condition to check");
    }

    std::vector<bool> modes;
    if (schedule.m_inPlace)
    {
        modes.push_back(true);
    }
    if (!schedule.m_inPlace || schedule.m_outOfPlace.value_or(false))
    {
        modes.push_back(false);
    }
    const bool dual = modes.size() > 1;
    std::set<decltype(Identity(Problem{}))> seen;
    for (const auto& p : problems)
    {
        seen.insert(Identity(p));
    }
    for (bool inPlace : modes)
    {
        const std::string mode = inPlace ? "in-place" : "out-of-place";
        const auto layouts = ComputeBufferLayouts(schedule, collective, inPlace);
        std::vector<Problem> found;
        CheckBounds(schedule, layouts, found);
        SymbolicExecution execution(schedule, layouts);
        const bool complete = execution.Run(found);
        report.m_stepsExecuted += execution.StepsExecuted();
        if (complete)
        {
            CheckPostcondition(schedule, collective, execution, found);
            // Same program, other interleavings: a different result means two threadblocks
            // touch the same chunk without a dependency ordering them.
            for (auto order :
                 {SymbolicExecution::Order::kReverse, SymbolicExecution::Order::kLazyLocal})
            {
                if (!found.empty())
                {
                    break;
                }
                SymbolicExecution other(schedule, layouts, order);
                std::vector<Problem> otherRun;
                other.Run(otherRun);
                std::vector<Problem> racy;
                for (auto& p : otherRun)
                {
                    if (p.m_kind == ProblemKind::kUninitializedRead)
                    {
                        racy.push_back(std::move(p));
                    }
                }
                CheckPostcondition(schedule, collective, other, racy);
                for (auto& p : racy)
                {
                    p.m_message = "result depends on execution order (race between threadblocks "
                                  "not ordered by a dependency): in another interleaving, "
                                  + p.m_message;
                    found.push_back(std::move(p));
                }
            }
        }
        else
        {
            report.m_notes.push_back(mode
                                     + ": post-condition not checked, execution did not "
                                       "complete");
        }
        report.m_notes.push_back(mode + ": executed " + std::to_string(execution.StepsExecuted())
                                 + " of " + std::to_string(schedule.StepCount()) + " steps");
        for (auto& p : found)
        {
            if (!seen.insert(Identity(p)).second)
            {
                continue; // same finding in both modes
            }
            if (dual)
            {
                p.m_message = "[" + mode + "] " + p.m_message;
            }
            problems.push_back(std::move(p));
        }
    }
    report.m_valid = problems.empty();
    if (report.m_valid)
    {
        report.m_connectionChunks = ConnectionChunksNeeded(schedule);
    }
    return report;
}

} // namespace fabricsim
