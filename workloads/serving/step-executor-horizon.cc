// The step executor's horizon (CollectiveHorizon): when a rank in the collective now starting
// can next put other traffic on the fabric, and, in disaggregated serving, when a KV handoff
// can next start.
#include "step-executor-state.h"
#include "step-executor.h"

#include <algorithm>
#include <climits>

namespace fabricsim
{

int64_t
StepExecutor::QuietUntilPs(uint32_t rank, int64_t donePs) const
{
    constexpr int64_t kCannotTell = INT64_MIN;
    auto it = m_ranks.find(rank);
    if ((m_transfersExpected && !m_transferTriggers) || !m_starting || it == m_ranks.end()
        || !it->second->cur)
    {
        return kCannotTell;
    }
    const RankState& rs = *it->second;
    // Another communication of this rank gathering its members could start at any time.
    for (const auto& [key, c] : m_colls)
    {
        if (key != *m_starting
            && std::find(c->group.begin(), c->group.end(), rank) != c->group.end())
        {
            return kCannotTell;
        }
    }
    for (const auto& [key, p] : m_p2p)
    {
        if (p->src == rank || p->dst == rank)
        {
            return kCannotTell;
        }
    }
    const RankStepProgram& prog = rs.Program();
    int64_t quiet = kCannotTell;
    for (const RankState::Stream& s : rs.streams)
    {
        if (s.pos >= s.items.size())
        {
            continue; // finished
        }
        // The last member to arrive starts the collective before its stream is marked blocked.
        const ProgramItem& here = prog.items[s.items[s.pos]];
        if (here.type != ProgramItem::Type::Comm || here.key != *m_starting || here.async
            || here.detached)
        {
            return kCannotTell; // work on another stream, or a stream that goes on
        }
        // After this collective the stream computes, then communicates again (or ends, and
        // the rank's next step may communicate at once).
        int64_t at = donePs;
        for (size_t k = s.pos + 1; k < s.items.size(); ++k)
        {
            const ProgramItem& item = prog.items[s.items[k]];
            if (item.type != ProgramItem::Type::Compute)
            {
                break;
            }
            at += item.durationPs;
        }
        quiet = at;
    }
    if (m_transfersExpected && quiet != kCannotTell)
    {
        quiet = std::min(quiet, TransferBoundPs(rs, donePs));
    }
    return quiet;
}

int64_t
StepExecutor::ComputeLeftPs(const RankState& rs, int64_t now) const
{
    const RankStepProgram& prog = rs.Program();
    double left = 0;
    for (uint32_t k = 0; k < rs.streams.size(); ++k)
    {
        const RankState::Stream& s = rs.streams[k];
        for (size_t i = s.pos; i < s.items.size(); ++i)
        {
            const ProgramItem& item = prog.items[s.items[i]];
            if (item.type != ProgramItem::Type::Compute)
            {
                continue;
            }
            if (rs.computing && k == rs.computeStream && i == s.pos)
            {
                // Running: its work left at full rate (SMs handed back only speed it up).
                left += std::max(0.0,
                                 rs.computeLeft - double(now - rs.computeSince) * rs.computeRate);
            }
            else
            {
                left += double(item.durationPs);
            }
        }
    }
    return int64_t(left); // rounded down: still a lower bound
}

int64_t
StepExecutor::TransferBoundPs(const RankState& asking, int64_t donePs) const
{
    const int64_t now = m_api.NowPs();
    int64_t bound = m_transferTriggers();
    if (bound <= now)
    {
        return bound;
    }
    // A step ends no sooner than the compute any of its ranks has left, run back to back on
    // its compute engine, at full rate (communication counted as taking no time). The asking
    // rank computes nothing more of its step before its part of this collective is done.
    if (m_stepEndCache.now != now || m_stepEndCache.key != *m_starting)
    {
        m_stepEndCache.now = now;
        m_stepEndCache.key = *m_starting;
        m_stepEndCache.ends.clear();
        for (StepRun* run : m_runs)
        {
            m_stepEndCache.ends[run] = now; // ranks only queued for it: no bound from them
        }
        for (const auto& [r, rs] : m_ranks)
        {
            if (rs->cur)
            {
                int64_t& end = m_stepEndCache.ends[rs->cur];
                end = std::max(end, now + ComputeLeftPs(*rs, now));
            }
        }
    }
    for (const auto& [run, end] : m_stepEndCache.ends)
    {
        const int64_t e
            = run == asking.cur ? std::max(end, donePs + ComputeLeftPs(asking, now)) : end;
        bound = std::min(bound, e);
    }
    return bound;
}

} // namespace fabricsim
