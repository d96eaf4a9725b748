#include "collective-postcondition.h"

#include "buffer-layout.h"

#include <string>

namespace fabricsim
{

namespace
{

/// Expected content of one output chunk and how to describe it.
struct Expectation
{
    ContributionSet m_value;
    std::string m_description;
};

Expectation
SumOverRanks(int ranks, int chunk)
{
    Expectation e;
    for (int s = 0; s < ranks; ++s)
    {
        e.m_value.Add(s, chunk);
    }
    e.m_description = "input chunk " + std::to_string(chunk) + " of every rank 0.."
                      + std::to_string(ranks - 1) + " exactly once";
    return e;
}

Expectation
Single(int rank, int chunk)
{
    return Expectation{ContributionSet::Single(rank, chunk),
                       "input chunk " + std::to_string(chunk) + " of rank " + std::to_string(rank)
                           + " only"};
}

void
CompareSlot(const SymbolicExecution& execution,
            int rank,
            int chunk,
            const Expectation& expected,
            std::vector<Problem>& problems)
{
    const Slot* slot = execution.Read(rank, BufferKind::kOutput, chunk);
    if (!slot || slot->m_value == expected.m_value)
    {
        return;
    }
    const auto diff = ContributionSet::Compare(expected.m_value, slot->m_value);
    ProblemKind kind = ProblemKind::kWrongResult;
    if (!diff.m_duplicated.Empty())
    {
        kind = ProblemKind::kDuplicateContribution;
    }
    else if (!diff.m_missing.Empty() && diff.m_unexpected.Empty())
    {
        kind = ProblemKind::kMissingContribution;
    }
    std::string message = "output chunk " + std::to_string(chunk) + ": expected "
                          + expected.m_description + ", found " + slot->m_value.ToString() + " (";
    std::string sep;
    if (!diff.m_missing.Empty())
    {
        message += "missing " + diff.m_missing.ToString();
        sep = "; ";
    }
    if (!diff.m_duplicated.Empty())
    {
        message += sep + "counted more than once " + diff.m_duplicated.ToString();
        sep = "; ";
    }
    if (!diff.m_unexpected.Empty())
    {
        message += sep + "unexpected " + diff.m_unexpected.ToString();
    }
    message += slot->m_writerTb < 0 ? "; never written by any step)"
                                    : "; last written by tb " + std::to_string(slot->m_writerTb)
                                          + " step " + std::to_string(slot->m_writerStep) + ")";
    problems.push_back(Problem{rank, slot->m_writerTb, slot->m_writerStep, kind, message});
}

} // namespace

void
CheckPostcondition(const Schedule& schedule,
                   CollectiveKind collective,
                   const SymbolicExecution& execution,
                   std::vector<Problem>& problems)
{
    const auto geometry = ExpectedGeometry(collective, schedule.m_ranks, schedule.m_chunksPerLoop);
    if (collective == CollectiveKind::kCustom || !geometry)
    {
        return;
    }
    const int n = schedule.m_ranks;
    const int k = schedule.m_chunksPerLoop / n;
    for (int r = 0; r < n; ++r)
    {
        if (collective == CollectiveKind::kReduce && r != schedule.m_root)
        {
            continue;
        }
        // Output buffer size through the layout.
        int available = 0;
        while (available < geometry->m_outputChunks
               && execution.Read(r, BufferKind::kOutput, available))
        {
            ++available;
        }
        if (available < geometry->m_outputChunks)
        {
            problems.push_back(Problem{r,
                                       -1,
                                       -1,
                                       ProblemKind::kStructure,
                                       "output buffer: expected "
                                           + std::to_string(geometry->m_outputChunks)
                                           + " chunks for " + ToString(collective) + ", found "
                                           + std::to_string(available)});
        }
        for (int c = 0; c < available; ++c)
        {
            switch (collective)
            {
            case CollectiveKind::kAllReduce:
            case CollectiveKind::kReduce:
                CompareSlot(execution, r, c, SumOverRanks(n, c), problems);
                break;
            case CollectiveKind::kBroadcast:
                CompareSlot(execution, r, c, Single(schedule.m_root, c), problems);
                break;
            case CollectiveKind::kAllGather:
                CompareSlot(execution, r, c, Single(c / k, c % k), problems);
                break;
            case CollectiveKind::kReduceScatter:
                CompareSlot(execution, r, c, SumOverRanks(n, r * k + c), problems);
                break;
            case CollectiveKind::kAllToAll:
                CompareSlot(execution, r, c, Single(c / k, r * k + c % k), problems);
                break;
            case CollectiveKind::kCustom:
                break;
            }
        }
    }
}

} // namespace fabricsim
