#include "schedule-structure-check.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

namespace fabricsim
{

namespace
{

void
Add(std::vector<Problem>& problems,
    int rank,
    int tb,
    int step,
    ProblemKind kind,
    const std::string& message)
{
    problems.push_back(Problem{rank, tb, step, kind, message});
}

std::string
IdList(const std::vector<int>& ids)
{
    std::string out;
    for (size_t i = 0; i < ids.size() && i < 16; ++i)
    {
        out += (i ? ", " : "") + std::to_string(ids[i]);
    }
    if (ids.size() > 16)
    {
        out += ", ...";
    }
    return out;
}

void
CheckScheduleHeader(const Schedule& s, std::vector<Problem>& problems)
{
    if (s.m_ranks <= 0)
    {
        Add(problems,
            -1,
            -1,
            -1,
            ProblemKind::kStructure,
            "ranks: expected > 0, found " + std::to_string(s.m_ranks));
    }
    if (s.m_chunksPerLoop <= 0)
    {
        Add(problems,
            -1,
            -1,
            -1,
            ProblemKind::kStructure,
            "chunks per loop: expected > 0, found " + std::to_string(s.m_chunksPerLoop));
    }
    if (s.m_channels <= 0)
    {
        Add(problems,
            -1,
            -1,
            -1,
            ProblemKind::kStructure,
            "channels: expected > 0, found " + std::to_string(s.m_channels));
    }
    const bool needsDivisible = s.m_collective == CollectiveKind::kAllGather
                                || s.m_collective == CollectiveKind::kReduceScatter
                                || s.m_collective == CollectiveKind::kAllToAll;
    if (needsDivisible && s.m_ranks > 0 && s.m_chunksPerLoop > 0
        && s.m_chunksPerLoop % s.m_ranks != 0)
    {
        Add(problems,
            -1,
            -1,
            -1,
            ProblemKind::kStructure,
            "chunks per loop: expected a multiple of ranks (" + std::to_string(s.m_ranks) + ") for "
                + ToString(s.m_collective) + ", found " + std::to_string(s.m_chunksPerLoop));
    }
    if ((s.m_collective == CollectiveKind::kBroadcast || s.m_collective == CollectiveKind::kReduce)
        && (s.m_root < 0 || s.m_root >= s.m_ranks))
    {
        Add(problems,
            -1,
            -1,
            -1,
            ProblemKind::kStructure,
            "root: expected a rank in [0, " + std::to_string(s.m_ranks) + "), found "
                + std::to_string(s.m_root));
    }
    if (static_cast<int>(s.m_programs.size()) != s.m_ranks)
    {
        Add(problems,
            -1,
            -1,
            -1,
            ProblemKind::kStructure,
            "rank programs: expected " + std::to_string(s.m_ranks) + " (one per rank), found "
                + std::to_string(s.m_programs.size()));
    }
    std::set<int> seen;
    for (const auto& p : s.m_programs)
    {
        if (p.m_rank < 0 || p.m_rank >= s.m_ranks)
        {
            Add(problems,
                p.m_rank,
                -1,
                -1,
                ProblemKind::kStructure,
                "rank id: expected in [0, " + std::to_string(s.m_ranks) + "), found "
                    + std::to_string(p.m_rank));
        }
        else if (!seen.insert(p.m_rank).second)
        {
            Add(problems,
                p.m_rank,
                -1,
                -1,
                ProblemKind::kStructure,
                "rank id: expected each rank once, found rank " + std::to_string(p.m_rank)
                    + " again");
        }
        if (p.m_inputChunks < 0 || p.m_outputChunks < 0 || p.m_scratchChunks < 0)
        {
            Add(problems,
                p.m_rank,
                -1,
                -1,
                ProblemKind::kStructure,
                "buffer sizes: expected >= 0, found i=" + std::to_string(p.m_inputChunks) + " o="
                    + std::to_string(p.m_outputChunks) + " s=" + std::to_string(p.m_scratchChunks));
        }
    }
    for (int r = 0; r < s.m_ranks && r < 1 << 20; ++r)
    {
        if (!seen.count(r) && seen.size() < static_cast<size_t>(s.m_ranks))
        {
            Add(problems, r, -1, -1, ProblemKind::kStructure, "rank has no program");
        }
    }
}

void
CheckThreadblocks(const Schedule& s, const RankProgram& p, std::vector<Problem>& problems)
{
    const int r = p.m_rank;
    // Ids must be exactly 0..T-1.
    std::vector<int> ids;
    for (const auto& tb : p.m_threadblocks)
    {
        ids.push_back(tb.m_id);
    }
    std::vector<int> sorted = ids;
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 0; i < sorted.size(); ++i)
    {
        if (sorted[i] != static_cast<int>(i))
        {
            Add(problems,
                r,
                -1,
                -1,
                ProblemKind::kStructure,
                "threadblock ids: expected 0.." + std::to_string(sorted.size() - 1)
                    + " each once, found " + IdList(ids));
            break;
        }
    }
    std::map<std::pair<int, int>, int> sendOwner;
    std::map<std::pair<int, int>, int> recvOwner;
    for (const auto& tb : p.m_threadblocks)
    {
        for (const auto& [peer, what] :
             {std::make_pair(tb.m_sendPeer, "send"), std::make_pair(tb.m_recvPeer, "recv")})
        {
            if (peer < -1 || peer >= s.m_ranks)
            {
                Add(problems,
                    r,
                    tb.m_id,
                    -1,
                    ProblemKind::kStructure,
                    std::string(what) + " peer: expected -1 or a rank in [0, "
                        + std::to_string(s.m_ranks) + "), found " + std::to_string(peer));
            }
            else if (peer == r)
            {
                Add(problems,
                    r,
                    tb.m_id,
                    -1,
                    ProblemKind::kStructure,
                    std::string(what) + " peer: expected another rank, found the rank itself");
            }
        }
        if (tb.m_channel < 0 || tb.m_channel >= s.m_channels)
        {
            Add(problems,
                r,
                tb.m_id,
                -1,
                ProblemKind::kStructure,
                "channel: expected in [0, " + std::to_string(s.m_channels) + "), found "
                    + std::to_string(tb.m_channel));
        }
        if (tb.m_sendPeer >= 0)
        {
            auto [it, fresh]
                = sendOwner.emplace(std::make_pair(tb.m_sendPeer, tb.m_channel), tb.m_id);
            if (!fresh)
            {
                Add(problems,
                    r,
                    tb.m_id,
                    -1,
                    ProblemKind::kDuplicateChannel,
                    "(send peer " + std::to_string(tb.m_sendPeer) + ", channel "
                        + std::to_string(tb.m_channel) + "): expected one threadblock, found tb "
                        + std::to_string(it->second) + " and tb " + std::to_string(tb.m_id));
            }
        }
        if (tb.m_recvPeer >= 0)
        {
            auto [it, fresh]
                = recvOwner.emplace(std::make_pair(tb.m_recvPeer, tb.m_channel), tb.m_id);
            if (!fresh)
            {
                Add(problems,
                    r,
                    tb.m_id,
                    -1,
                    ProblemKind::kDuplicateChannel,
                    "(recv peer " + std::to_string(tb.m_recvPeer) + ", channel "
                        + std::to_string(tb.m_channel) + "): expected one threadblock, found tb "
                        + std::to_string(it->second) + " and tb " + std::to_string(tb.m_id));
            }
        }
    }
}

void
CheckSteps(const RankProgram& p, std::vector<Problem>& problems)
{
    const int r = p.m_rank;
    for (const auto& tb : p.m_threadblocks)
    {
        for (size_t i = 0; i < tb.m_steps.size(); ++i)
        {
            const Step& st = tb.m_steps[i];
            const int si = static_cast<int>(i);
            const std::string op = MscclName(st.m_op);
            if (st.m_index != si)
            {
                Add(problems,
                    r,
                    tb.m_id,
                    si,
                    ProblemKind::kStepIndex,
                    "step index: expected " + std::to_string(si) + " (its position), found "
                        + std::to_string(st.m_index));
            }
            if (OpSends(st.m_op) && tb.m_sendPeer < 0)
            {
                Add(problems,
                    r,
                    tb.m_id,
                    si,
                    ProblemKind::kStructure,
                    "'" + op + "' sends, but the threadblock has send=-1");
            }
            if (OpReceives(st.m_op) && tb.m_recvPeer < 0)
            {
                Add(problems,
                    r,
                    tb.m_id,
                    si,
                    ProblemKind::kStructure,
                    "'" + op + "' receives, but the threadblock has recv=-1");
            }
            if (st.m_op != StepOp::kNop && st.m_count <= 0)
            {
                Add(problems,
                    r,
                    tb.m_id,
                    si,
                    ProblemKind::kStructure,
                    "count of '" + op + "': expected > 0, found " + std::to_string(st.m_count));
            }
            for (const auto& dep : st.m_deps)
            {
                const Threadblock* target = p.FindThreadblock(dep.m_tb);
                const std::string what = "dependency (tb " + std::to_string(dep.m_tb) + ", step "
                                         + std::to_string(dep.m_step) + ")";
                if (!target)
                {
                    Add(problems,
                        r,
                        tb.m_id,
                        si,
                        ProblemKind::kDependency,
                        what + ": expected an existing threadblock, found none with id "
                            + std::to_string(dep.m_tb));
                }
                else if (dep.m_step < 0 || dep.m_step >= static_cast<int>(target->m_steps.size()))
                {
                    Add(problems,
                        r,
                        tb.m_id,
                        si,
                        ProblemKind::kDependency,
                        what + ": expected a step in [0, " + std::to_string(target->m_steps.size())
                            + ") of tb " + std::to_string(dep.m_tb) + ", found "
                            + std::to_string(dep.m_step));
                }
                else if (target == &tb && dep.m_step >= si)
                {
                    Add(problems,
                        r,
                        tb.m_id,
                        si,
                        ProblemKind::kDependency,
                        what + ": expected an earlier step of its own threadblock, found step "
                            + std::to_string(dep.m_step) + " (can never be satisfied)");
                }
                else if (!target->m_steps[dep.m_step].m_hasDep)
                {
                    Add(problems,
                        r,
                        tb.m_id,
                        si,
                        ProblemKind::kDependency,
                        what
                            + ": expected the target step to have hasdep=1 (MSCCL only "
                              "signals such steps), found hasdep=0");
                }
            }
        }
    }
}

std::string
Range(int off, int cnt)
{
    return "[" + std::to_string(off) + ", " + std::to_string(static_cast<long long>(off) + cnt)
           + ")";
}

void
CheckAccess(const RankLayout& layout,
            int rank,
            int tb,
            int step,
            const std::string& role,
            BufferKind buffer,
            int offset,
            int count,
            std::vector<Problem>& problems)
{
    const BufferView& v = layout.View(buffer);
    if (offset < 0 || count < 0 || static_cast<long long>(offset) + count > v.m_size)
    {
        Add(problems,
            rank,
            tb,
            step,
            ProblemKind::kOutOfBounds,
            role + " " + ToString(buffer) + Range(offset, count) + ": expected within [0, "
                + std::to_string(v.m_size) + ") (buffer '" + ToString(buffer) + "' has "
                + std::to_string(v.m_size) + " chunks), found offset " + std::to_string(offset)
                + " + count " + std::to_string(count));
    }
}

} // namespace

void
CheckStructure(const Schedule& schedule, std::vector<Problem>& problems)
{
    CheckScheduleHeader(schedule, problems);
    for (const auto& p : schedule.m_programs)
    {
        CheckThreadblocks(schedule, p, problems);
        CheckSteps(p, problems);
    }
}

void
CheckBounds(const Schedule& schedule,
            const std::vector<RankLayout>& layouts,
            std::vector<Problem>& problems)
{
    const auto programs = ProgramsByRank(schedule);
    for (size_t r = 0; r < programs.size(); ++r)
    {
        if (!programs[r])
        {
            continue;
        }
        const RankLayout& layout = layouts[r];
        const int rank = static_cast<int>(r);
        for (int b = 0; b < 3; ++b)
        {
            const BufferView& v = layout.m_views[b];
            if (v.m_base + v.m_size > layout.m_storageSize[v.m_storage])
            {
                Add(problems,
                    rank,
                    -1,
                    -1,
                    ProblemKind::kOutOfBounds,
                    "in-place buffer '" + ToString(static_cast<BufferKind>(b)) + "' aliases "
                        + ToString(static_cast<BufferKind>(v.m_storage)) + Range(v.m_base, v.m_size)
                        + ": expected within the "
                        + std::to_string(layout.m_storageSize[v.m_storage]) + " chunks declared");
            }
        }
        for (const auto& c : programs[r]->m_initialCopies)
        {
            CheckAccess(layout,
                        rank,
                        -1,
                        -1,
                        "initial copy source",
                        BufferKind::kInput,
                        c.m_inputOffset,
                        1,
                        problems);
            CheckAccess(layout,
                        rank,
                        -1,
                        -1,
                        "initial copy destination",
                        BufferKind::kOutput,
                        c.m_outputOffset,
                        1,
                        problems);
        }
        for (const auto& tb : programs[r]->m_threadblocks)
        {
            for (size_t i = 0; i < tb.m_steps.size(); ++i)
            {
                const Step& st = tb.m_steps[i];
                if (st.m_op == StepOp::kNop || st.m_count <= 0)
                {
                    continue;
                }
                const int si = static_cast<int>(i);
                if (OpReadsSrc(st.m_op))
                {
                    CheckAccess(layout,
                                rank,
                                tb.m_id,
                                si,
                                "source",
                                st.m_srcBuffer,
                                st.m_srcOffset,
                                st.m_count,
                                problems);
                }
                if (OpWritesDst(st.m_op))
                {
                    CheckAccess(layout,
                                rank,
                                tb.m_id,
                                si,
                                "destination",
                                st.m_dstBuffer,
                                st.m_dstOffset,
                                st.m_count,
                                problems);
                }
            }
        }
    }
}

} // namespace fabricsim
