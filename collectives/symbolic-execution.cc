#include "symbolic-execution.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

namespace fabricsim
{

SymbolicExecution::SymbolicExecution(const Schedule& schedule,
                                     const std::vector<RankLayout>& layouts,
                                     Order order)
    : m_schedule(schedule)
    , m_layouts(layouts)
    , m_order(order)
{
    const auto programs = ProgramsByRank(schedule);
    m_ranks.resize(programs.size());
    for (size_t r = 0; r < programs.size(); ++r)
    {
        RankState& rs = m_ranks[r];
        rs.m_program = programs[r];
        if (!rs.m_program)
        {
            continue;
        }
        for (int b = 0; b < 3; ++b)
        {
            rs.m_storage[b].resize(layouts[r].m_storageSize[b]);
        }
        std::unordered_map<int, int> indexOf;
        for (size_t t = 0; t < rs.m_program->m_threadblocks.size(); ++t)
        {
            indexOf.emplace(rs.m_program->m_threadblocks[t].m_id, static_cast<int>(t));
        }
        rs.m_tbs.resize(rs.m_program->m_threadblocks.size());
        for (size_t t = 0; t < rs.m_tbs.size(); ++t)
        {
            TbState& ts = rs.m_tbs[t];
            ts.m_tb = &rs.m_program->m_threadblocks[t];
            ts.m_deps.resize(ts.m_tb->m_steps.size());
            for (size_t i = 0; i < ts.m_tb->m_steps.size(); ++i)
            {
                for (const auto& dep : ts.m_tb->m_steps[i].m_deps)
                {
                    auto it = indexOf.find(dep.m_tb);
                    if (it == indexOf.end() || dep.m_step < 0
                        || dep.m_step >= static_cast<int>(
                               rs.m_program->m_threadblocks[it->second].m_steps.size()))
                    {
                        continue; // reported by the structure check
                    }
                    ts.m_deps[i].emplace_back(it->second, dep.m_step);
                }
            }
        }
        // Initial state: input chunk j of rank r holds {(r, j)}; then TE-CCL initial copies.
        const int rank = static_cast<int>(r);
        const int inputSize = layouts[r].View(BufferKind::kInput).m_size;
        for (int j = 0; j < inputSize; ++j)
        {
            if (Slot* s = Locate(rank, BufferKind::kInput, j))
            {
                s->m_value = ContributionSet::Single(rank, j);
            }
        }
        for (const auto& c : rs.m_program->m_initialCopies)
        {
            const Slot* src = Locate(rank, BufferKind::kInput, c.m_inputOffset);
            Slot* dst = Locate(rank, BufferKind::kOutput, c.m_outputOffset);
            if (src && dst)
            {
                dst->m_value = src->m_value;
            }
        }
    }
}

uint64_t
SymbolicExecution::ChannelKey(int sender, int receiver, int channel)
{
    return (static_cast<uint64_t>(static_cast<uint32_t>(sender) & 0x1FFFFF) << 42)
           | (static_cast<uint64_t>(static_cast<uint32_t>(receiver) & 0x1FFFFF) << 21)
           | (static_cast<uint64_t>(static_cast<uint32_t>(channel) & 0x1FFFFF));
}

SymbolicExecution::Channel&
SymbolicExecution::GetChannel(int sender, int receiver, int channel)
{
    auto [it, fresh] = m_channels.try_emplace(ChannelKey(sender, receiver, channel));
    if (fresh)
    {
        it->second.m_sender = sender;
        it->second.m_receiver = receiver;
        it->second.m_channel = channel;
    }
    return it->second;
}

Slot*
SymbolicExecution::Locate(int rank, BufferKind buffer, int offset)
{
    return const_cast<Slot*>(
        static_cast<const SymbolicExecution*>(this)->Read(rank, buffer, offset));
}

const Slot*
SymbolicExecution::Read(int rank, BufferKind buffer, int offset) const
{
    if (rank < 0 || rank >= static_cast<int>(m_ranks.size()) || !m_ranks[rank].m_program)
    {
        return nullptr;
    }
    const BufferView& v = m_layouts[rank].View(buffer);
    if (offset < 0 || offset >= v.m_size)
    {
        return nullptr;
    }
    const auto& storage = m_ranks[rank].m_storage[v.m_storage];
    const long long index = static_cast<long long>(v.m_base) + offset;
    if (index < 0 || index >= static_cast<long long>(storage.size()))
    {
        return nullptr;
    }
    return &storage[index];
}

void
SymbolicExecution::Enqueue(int rank, int tb)
{
    TbState& ts = m_ranks[rank].m_tbs[tb];
    if (!ts.m_queued)
    {
        ts.m_queued = true;
        m_ready.emplace_back(rank, tb);
    }
}

bool
SymbolicExecution::Run(std::vector<Problem>& problems)
{
    for (size_t r = 0; r < m_ranks.size(); ++r)
    {
        for (size_t t = 0; t < m_ranks[r].m_tbs.size(); ++t)
        {
            Enqueue(static_cast<int>(r), static_cast<int>(t));
        }
    }
    const bool forward = m_order == Order::kForward;
    while (!m_ready.empty() || !m_delayed.empty())
    {
        if (m_ready.empty())
        {
            // Only local steps are left to run: let the delayed ones go, latest first.
            for (const auto& [r, t] : m_delayed)
            {
                m_ranks[r].m_tbs[t].m_forced = true;
                Enqueue(r, t);
            }
            m_delayed.clear();
            continue;
        }
        const auto [rank, tb] = forward ? m_ready.front() : m_ready.back();
        if (forward)
        {
            m_ready.pop_front();
        }
        else
        {
            m_ready.pop_back();
        }
        m_ranks[rank].m_tbs[tb].m_queued = false;
        Advance(rank, tb, problems);
    }
    bool complete = true;
    for (const auto& rs : m_ranks)
    {
        for (const auto& ts : rs.m_tbs)
        {
            complete = complete && ts.m_pc == ts.m_tb->m_steps.size();
        }
    }
    if (!complete)
    {
        ReportBlocked(problems);
    }
    // Messages nobody received, in a deterministic order.
    std::vector<const Channel*> channels;
    for (const auto& [key, ch] : m_channels)
    {
        if (!ch.m_queue.empty())
        {
            channels.push_back(&ch);
        }
    }
    std::sort(channels.begin(),
              channels.end(),
              [](const Channel* a, const Channel* b)
              {
                  return std::make_tuple(a->m_sender, a->m_receiver, a->m_channel)
                         < std::make_tuple(b->m_sender, b->m_receiver, b->m_channel);
              });
    for (const Channel* ch : channels)
    {
        for (const Message& m : ch->m_queue)
        {
            problems.push_back(Problem{
                ch->m_sender,
                m.m_srcTb,
                m.m_srcStep,
                ProblemKind::kUnmatchedMessage,
                "message of " + std::to_string(m.m_data.size()) + " chunk(s) to rank "
                    + std::to_string(ch->m_receiver) + " on channel "
                    + std::to_string(ch->m_channel) + ": expected a matching receive, found none ("
                    + std::to_string(ch->m_delivered) + " message(s) on this channel were received"
                    + (complete ? ")" : " before execution stopped)")});
        }
    }
    return complete;
}

void
SymbolicExecution::Advance(int rank, int tbIndex, std::vector<Problem>& problems)
{
    RankState& rs = m_ranks[rank];
    TbState& ts = rs.m_tbs[tbIndex];
    const Threadblock& tb = *ts.m_tb;
    while (ts.m_pc < tb.m_steps.size())
    {
        const Step& step = tb.m_steps[ts.m_pc];
        const bool local = !OpSends(step.m_op) && !OpReceives(step.m_op);
        if (m_order == Order::kLazyLocal && local && !ts.m_forced)
        {
            m_delayed.emplace_back(rank, tbIndex);
            return;
        }
        ts.m_forced = false;
        for (const auto& [dep, depStep] : ts.m_deps[ts.m_pc])
        {
            if (rs.m_tbs[dep].m_pc <= static_cast<size_t>(depStep))
            {
                rs.m_tbs[dep].m_depWaiters.push_back(tbIndex);
                return;
            }
        }
        Message incoming;
        bool received = false;
        const int peers = static_cast<int>(m_ranks.size());
        if (OpReceives(step.m_op) && tb.m_recvPeer >= 0 && tb.m_recvPeer < peers)
        {
            Channel& ch = GetChannel(tb.m_recvPeer, rank, tb.m_channel);
            if (ch.m_queue.empty())
            {
                ch.m_waiters.push_back(tbIndex);
                return;
            }
            incoming = std::move(ch.m_queue.front());
            ch.m_queue.pop_front();
            ++ch.m_delivered;
            received = true;
        }
        Execute(rank, tbIndex, step, received ? &incoming : nullptr, problems);
        ++ts.m_pc;
        ++m_stepsExecuted;
        std::vector<int> waiters;
        waiters.swap(ts.m_depWaiters);
        for (int w : waiters)
        {
            Enqueue(rank, w);
        }
    }
}

void
SymbolicExecution::Execute(
    int rank, int tbIndex, const Step& step, Message* incoming, std::vector<Problem>& problems)
{
    const Threadblock& tb = *m_ranks[rank].m_tbs[tbIndex].m_tb;
    const int position = static_cast<int>(m_ranks[rank].m_tbs[tbIndex].m_pc);
    const size_t n = static_cast<size_t>(std::max(step.m_count, 0));
    if (incoming && incoming->m_data.size() != n)
    {
        problems.push_back(Problem{
            rank,
            tb.m_id,
            position,
            ProblemKind::kCountMismatch,
            "receive count: expected " + std::to_string(incoming->m_data.size())
                + " (cnt of the matching send, rank " + std::to_string(tb.m_recvPeer) + " tb "
                + std::to_string(incoming->m_srcTb) + " step " + std::to_string(incoming->m_srcStep)
                + "), found cnt " + std::to_string(step.m_count)});
    }
    auto recvAt = [&](size_t i) -> const ContributionSet&
    {
        return incoming && i < incoming->m_data.size() ? incoming->m_data[i] : m_empty;
    };
    std::vector<ContributionSet> src(OpReadsSrc(step.m_op) ? n : 0);
    int uninitialised = -1;
    for (size_t i = 0; i < src.size(); ++i)
    {
        const int offset = step.m_srcOffset + static_cast<int>(i);
        if (const Slot* s = Locate(rank, step.m_srcBuffer, offset))
        {
            src[i] = s->m_value;
            if (s->m_value.Empty() && uninitialised < 0)
            {
                uninitialised = offset;
            }
        }
    }
    if (uninitialised >= 0)
    {
        problems.push_back(
            Problem{rank,
                    tb.m_id,
                    position,
                    ProblemKind::kUninitializedRead,
                    "'" + MscclName(step.m_op) + "' reads " + ToString(step.m_srcBuffer) + "["
                        + std::to_string(uninitialised)
                        + "]: expected data written by an earlier step, found a chunk nothing has "
                          "written yet"});
    }
    std::vector<ContributionSet> result(n);
    for (size_t i = 0; i < n; ++i)
    {
        switch (step.m_op)
        {
        case StepOp::kSend:
        case StepOp::kCopy:
            result[i] = src[i];
            break;
        case StepOp::kRecv:
        case StepOp::kRecvCopySend:
            result[i] = recvAt(i);
            break;
        case StepOp::kRecvReduceSend:
        case StepOp::kRecvReduceCopy:
        case StepOp::kRecvReduceCopySend:
            result[i] = recvAt(i);
            result[i].Merge(src[i]);
            break;
        case StepOp::kReduce:
            if (const Slot* d
                = Locate(rank, step.m_dstBuffer, step.m_dstOffset + static_cast<int>(i)))
            {
                result[i] = d->m_value;
            }
            result[i].Merge(src[i]);
            break;
        case StepOp::kNop:
            break;
        }
    }
    if (OpWritesDst(step.m_op))
    {
        for (size_t i = 0; i < n; ++i)
        {
            if (Slot* d = Locate(rank, step.m_dstBuffer, step.m_dstOffset + static_cast<int>(i)))
            {
                d->m_value = result[i];
                d->m_writerTb = tb.m_id;
                d->m_writerStep = position;
            }
        }
    }
    if (OpSends(step.m_op) && tb.m_sendPeer >= 0
        && tb.m_sendPeer < static_cast<int>(m_ranks.size()))
    {
        Channel& ch = GetChannel(rank, tb.m_sendPeer, tb.m_channel);
        ch.m_queue.push_back(Message{std::move(result), tb.m_id, position});
        std::vector<int> waiters;
        waiters.swap(ch.m_waiters);
        for (int w : waiters)
        {
            if (m_ranks[tb.m_sendPeer].m_program)
            {
                Enqueue(tb.m_sendPeer, w);
            }
        }
    }
}

std::string
SymbolicExecution::DescribeWait(int rank, int tbIndex, std::pair<int, int>* next) const
{
    const RankState& rs = m_ranks[rank];
    const TbState& ts = rs.m_tbs[tbIndex];
    auto state = [](const TbState& t)
    {
        if (t.m_pc == t.m_tb->m_steps.size())
        {
            return "has finished all its " + std::to_string(t.m_pc) + " steps";
        }
        return "is blocked at step " + std::to_string(t.m_pc) + " ('"
               + MscclName(t.m_tb->m_steps[t.m_pc].m_op) + "')";
    };
    for (const auto& [dep, depStep] : ts.m_deps[ts.m_pc])
    {
        const TbState& target = rs.m_tbs[dep];
        if (target.m_pc <= static_cast<size_t>(depStep))
        {
            *next = {rank, dep};
            return "waits for tb " + std::to_string(target.m_tb->m_id) + " to finish step "
                   + std::to_string(depStep) + "; tb " + std::to_string(target.m_tb->m_id) + " "
                   + state(target);
        }
    }
    const int peer = ts.m_tb->m_recvPeer;
    const int chan = ts.m_tb->m_channel;
    std::string what = "waits for a message from rank " + std::to_string(peer) + " on channel "
                       + std::to_string(chan) + " (none pending)";
    const RankState& ps = m_ranks[peer];
    for (size_t t = 0; t < ps.m_tbs.size(); ++t)
    {
        const Threadblock& s = *ps.m_tbs[t].m_tb;
        if (s.m_sendPeer == rank && s.m_channel == chan)
        {
            *next = {peer, static_cast<int>(t)};
            return what + "; its sender, rank " + std::to_string(peer) + " tb "
                   + std::to_string(s.m_id) + ", " + state(ps.m_tbs[t]);
        }
    }
    return what + "; rank " + std::to_string(peer) + " has no threadblock sending to rank "
           + std::to_string(rank) + " on channel " + std::to_string(chan);
}

void
SymbolicExecution::ReportBlocked(std::vector<Problem>& problems) const
{
    // One problem per blocked threadblock, then the wait-for cycles among them.
    std::map<std::pair<int, int>, std::pair<int, int>> waitsFor;
    for (size_t r = 0; r < m_ranks.size(); ++r)
    {
        for (size_t t = 0; t < m_ranks[r].m_tbs.size(); ++t)
        {
            const TbState& ts = m_ranks[r].m_tbs[t];
            if (ts.m_pc == ts.m_tb->m_steps.size())
            {
                continue;
            }
            std::pair<int, int> next{-1, -1};
            const std::string why = DescribeWait(static_cast<int>(r), static_cast<int>(t), &next);
            problems.push_back(Problem{
                static_cast<int>(r),
                ts.m_tb->m_id,
                static_cast<int>(ts.m_pc),
                ProblemKind::kDeadlock,
                "blocked at '" + MscclName(ts.m_tb->m_steps[ts.m_pc].m_op) + "' with "
                    + std::to_string(ts.m_tb->m_steps.size() - ts.m_pc) + " step(s) left: " + why});
            if (next.first >= 0)
            {
                waitsFor[{static_cast<int>(r), static_cast<int>(t)}] = next;
            }
        }
    }
    auto label = [this](const std::pair<int, int>& n)
    {
        const TbState& ts = m_ranks[n.first].m_tbs[n.second];
        return "rank " + std::to_string(n.first) + " tb " + std::to_string(ts.m_tb->m_id) + " step "
               + std::to_string(ts.m_pc);
    };
    std::set<std::pair<int, int>> done;
    int cycles = 0;
    for (const auto& [start, unused] : waitsFor)
    {
        (void)unused;
        std::vector<std::pair<int, int>> path;
        std::map<std::pair<int, int>, size_t> onPath;
        auto cur = start;
        while (!done.count(cur) && !onPath.count(cur) && waitsFor.count(cur))
        {
            onPath[cur] = path.size();
            path.push_back(cur);
            cur = waitsFor.at(cur);
        }
        if (onPath.count(cur) && cycles < 8)
        {
            std::string text;
            for (size_t i = onPath[cur]; i < path.size(); ++i)
            {
                text += label(path[i]) + " -> ";
            }
            text += label(cur);
            const TbState& first = m_ranks[cur.first].m_tbs[cur.second];
            problems.push_back(Problem{cur.first,
                                       first.m_tb->m_id,
                                       static_cast<int>(first.m_pc),
                                       ProblemKind::kDeadlock,
                                       "wait-for cycle: " + text});
            ++cycles;
        }
        for (const auto& p : path)
        {
            done.insert(p);
        }
    }
}

} // namespace fabricsim
