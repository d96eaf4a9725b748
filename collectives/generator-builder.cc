#include "generator-builder.h"

#include <algorithm>
#include <stdexcept>

namespace fabricsim
{
namespace gen
{

namespace
{

std::string
Where(int rank, int tb)
{
    return "rank " + std::to_string(rank) + " tb " + std::to_string(tb);
}

/// Keeps the latest step per threadblock: waiting for it implies the earlier ones.
void
AddDep(std::map<int, int>& deps, int tb, int step)
{
    auto [it, fresh] = deps.emplace(tb, step);
    if (!fresh)
    {
        it->second = std::max(it->second, step);
    }
}

bool
Continues(const Loc& a, int count, const Loc& b)
{
    return a.m_buf == b.m_buf && a.m_off + count == b.m_off;
}

} // namespace

std::vector<Piece>
Coalesce(const std::vector<Piece>& pieces, bool withRed)
{
    std::vector<Piece> out;
    for (const Piece& p : pieces)
    {
        if (!out.empty())
        {
            Piece& last = out.back();
            if (Continues(last.m_src, last.m_count, p.m_src)
                && Continues(last.m_dst, last.m_count, p.m_dst)
                && (!withRed || Continues(last.m_red, last.m_count, p.m_red)))
            {
                last.m_count += p.m_count;
                continue;
            }
        }
        out.push_back(p);
    }
    return out;
}

ScheduleBuilder::ScheduleBuilder(CollectiveKind kind,
                                 int ranks,
                                 int chunksPerLoop,
                                 int channels,
                                 const GeneratorOptions& opt,
                                 const std::string& name,
                                 bool inPlace)
    : m_schedule(Schedule::Create(kind, ranks, chunksPerLoop, false, opt.protocol, channels))
    , m_aliasing(inPlace)
    , m_perRank(ranks > 0 ? chunksPerLoop / ranks : 0)
    , m_ranks(ranks)
{
    m_schedule.m_name = name;
    // With hazards tracked on the in-place storage, both readings are correct.
    m_schedule.m_inPlace = inPlace;
    m_schedule.m_outOfPlace = true;
    if (kind == CollectiveKind::kBroadcast || kind == CollectiveKind::kReduce)
    {
        m_schedule.m_root = static_cast<int>(opt.root);
    }
}

int
ScheduleBuilder::Tb(int rank, int sendPeer, int recvPeer, int channel)
{
    RankState& rs = m_ranks.at(rank);
    const auto key = std::make_tuple(sendPeer, recvPeer, channel);
    auto it = rs.m_tbByKey.find(key);
    if (it != rs.m_tbByKey.end())
    {
        return it->second;
    }
    auto owned = [&](std::map<std::pair<int, int>, int>& owners, int peer, const char* what)
    {
        if (peer >= 0 && owners.count({peer, channel}))
        {
            throw std::logic_error("generator: " + Where(rank, owners[{peer, channel}])
                                   + " already " + what + " peer " + std::to_string(peer)
                                   + " on channel " + std::to_string(channel));
        }
    };
    owned(rs.m_sendOwner, sendPeer, "sends to");
    owned(rs.m_recvOwner, recvPeer, "receives from");
    const int id = m_schedule.Rank(rank).AddThreadblock(sendPeer, recvPeer, channel).m_id;
    rs.m_tbByKey.emplace(key, id);
    if (sendPeer >= 0)
    {
        rs.m_sendOwner[{sendPeer, channel}] = id;
    }
    if (recvPeer >= 0)
    {
        rs.m_recvOwner[{recvPeer, channel}] = id;
    }
    return id;
}

std::pair<int, int>
ScheduleBuilder::Storage(int rank, BufferKind buf, int off) const
{
    const int in = static_cast<int>(BufferKind::kInput);
    const int out = static_cast<int>(BufferKind::kOutput);
    if (buf == BufferKind::kScratch || !m_aliasing)
    {
        return {static_cast<int>(buf), off};
    }
    switch (m_schedule.m_collective)
    {
    case CollectiveKind::kAllGather:
        // Input chunk j is output[rank * K / N + j].
        return buf == BufferKind::kInput ? std::make_pair(out, rank * m_perRank + off)
                                         : std::make_pair(out, off);
    case CollectiveKind::kReduceScatter:
        // Output chunk j is input[rank * K / N + j].
        return buf == BufferKind::kOutput ? std::make_pair(in, rank * m_perRank + off)
                                          : std::make_pair(in, off);
    default:
        return {in, off};
    }
}

ScheduleBuilder::SlotState&
ScheduleBuilder::Slot(int rank, BufferKind buf, int off)
{
    if (off < 0)
    {
        throw std::logic_error("generator: negative offset on rank " + std::to_string(rank));
    }
    const auto [storage, index] = Storage(rank, buf, off);
    auto& slots = m_ranks[rank].m_slots[storage];
    if (index >= static_cast<int>(slots.size()))
    {
        slots.resize(index + 1);
    }
    return slots[index];
}

int
ScheduleBuilder::Add(
    int rank, int tb, StepOp op, Loc src, Loc dst, int count, const std::vector<Dependency>& extra)
{
    Threadblock& block = m_schedule.Rank(rank).m_threadblocks.at(tb);
    if ((OpSends(op) && block.m_sendPeer < 0) || (OpReceives(op) && block.m_recvPeer < 0))
    {
        throw std::logic_error("generator: '" + MscclName(op) + "' on " + Where(rank, tb)
                               + " which lacks that peer");
    }
    const int step = static_cast<int>(block.m_steps.size());
    std::map<int, int> deps;
    const bool reads = OpReadsSrc(op);
    const bool writes = OpWritesDst(op);
    auto gather = [&](const Loc& loc, bool write)
    {
        for (int i = 0; i < count; ++i)
        {
            SlotState& s = Slot(rank, loc.m_buf, loc.m_off + i);
            if (s.m_writerTb >= 0 && s.m_writerTb != tb)
            {
                AddDep(deps, s.m_writerTb, s.m_writerStep);
            }
            if (write)
            {
                for (const auto& [rtb, rstep] : s.m_readers)
                {
                    if (rtb != tb)
                    {
                        AddDep(deps, rtb, rstep);
                    }
                }
            }
        }
    };
    if (reads)
    {
        gather(src, false);
    }
    if (op == StepOp::kReduce)
    {
        gather(dst, false);
    }
    if (writes)
    {
        gather(dst, true);
    }
    for (const auto& d : extra)
    {
        if (d.m_tb != tb)
        {
            AddDep(deps, d.m_tb, d.m_step);
        }
    }
    std::vector<Dependency> list;
    for (const auto& [dtb, dstep] : deps)
    {
        list.push_back(Dependency{dtb, dstep});
    }
    block.AddStep(op, src.m_buf, src.m_off, dst.m_buf, dst.m_off, count, list);

    auto noteRead = [&](const Loc& loc)
    {
        for (int i = 0; i < count; ++i)
        {
            auto& readers = Slot(rank, loc.m_buf, loc.m_off + i).m_readers;
            auto it = std::find_if(
                readers.begin(), readers.end(), [tb](const auto& r) { return r.first == tb; });
            if (it == readers.end())
            {
                readers.emplace_back(tb, step);
            }
            else
            {
                it->second = step;
            }
        }
    };
    if (reads)
    {
        noteRead(src);
    }
    if (op == StepOp::kReduce)
    {
        noteRead(dst);
    }
    if (writes)
    {
        for (int i = 0; i < count; ++i)
        {
            SlotState& s = Slot(rank, dst.m_buf, dst.m_off + i);
            s.m_writerTb = tb;
            s.m_writerStep = step;
            s.m_readers.clear();
        }
    }
    for (const Loc* loc : {reads ? &src : nullptr, writes ? &dst : nullptr})
    {
        if (loc && loc->m_buf == BufferKind::kScratch)
        {
            m_ranks[rank].m_scratch = std::max(m_ranks[rank].m_scratch, loc->m_off + count);
        }
    }

    if (OpReceives(op))
    {
        Match(rank, tb, step, count);
    }
    if (OpSends(op))
    {
        m_fifos[{rank, block.m_sendPeer, block.m_channel}].push_back(
            Pending{rank, tb, step, count});
    }
    return step;
}

void
ScheduleBuilder::Match(int rank, int tb, int step, int count)
{
    const Threadblock& block = m_schedule.Rank(rank).m_threadblocks[tb];
    auto& fifo = m_fifos[{block.m_recvPeer, rank, block.m_channel}];
    if (fifo.empty())
    {
        throw std::logic_error("generator: receive on " + Where(rank, tb) + " step "
                               + std::to_string(step) + " added before its send from rank "
                               + std::to_string(block.m_recvPeer));
    }
    const Pending sent = fifo.front();
    fifo.pop_front();
    if (sent.m_count != count)
    {
        throw std::logic_error("generator: receive on " + Where(rank, tb) + " step "
                               + std::to_string(step) + " takes " + std::to_string(count)
                               + " chunks, its send carries " + std::to_string(sent.m_count));
    }
    Step& s = m_schedule.Rank(sent.m_rank).m_threadblocks[sent.m_tb].m_steps[sent.m_step];
    Step& r = m_schedule.Rank(rank).m_threadblocks[tb].m_steps[step];
    // MSCCL files name the remote place in the fields a step does not use locally.
    if (!OpWritesDst(s.m_op))
    {
        const bool stores = OpWritesDst(r.m_op);
        s.m_dstBuffer = stores ? r.m_dstBuffer : r.m_srcBuffer;
        s.m_dstOffset = stores ? r.m_dstOffset : r.m_srcOffset;
    }
    if (!OpReadsSrc(r.m_op))
    {
        const bool reads = OpReadsSrc(s.m_op);
        r.m_srcBuffer = reads ? s.m_srcBuffer : s.m_dstBuffer;
        r.m_srcOffset = reads ? s.m_srcOffset : s.m_dstOffset;
    }
}

int
ScheduleBuilder::Send(int rank, int tb, Loc src, int count)
{
    return Add(rank, tb, StepOp::kSend, src, Loc{}, count);
}

int
ScheduleBuilder::Recv(int rank, int tb, Loc dst, int count)
{
    return Add(rank, tb, StepOp::kRecv, Loc{}, dst, count);
}

void
ScheduleBuilder::Copy(int rank, int tb, Loc src, Loc dst, int count)
{
    if (src != dst)
    {
        Add(rank, tb, StepOp::kCopy, src, dst, count);
    }
}

int
ScheduleBuilder::AllocScratch(int rank, int count)
{
    const int off = m_ranks.at(rank).m_scratch;
    m_ranks[rank].m_scratch += count;
    return off;
}

int
ScheduleBuilder::LastStep(int rank, int tb) const
{
    return static_cast<int>(m_schedule.Rank(rank).m_threadblocks.at(tb).m_steps.size()) - 1;
}

void
ScheduleBuilder::Transfer(
    int from, int fromTb, int to, int toTb, const std::vector<Piece>& pieces, StepOp recvOp)
{
    for (const Piece& p : pieces)
    {
        Send(from, fromTb, p.m_src, p.m_count);
        Add(to, toTb, recvOp, recvOp == StepOp::kRecv ? Loc{} : p.m_red, p.m_dst, p.m_count);
    }
}

void
ScheduleBuilder::Exchange(int a,
                          int tbA,
                          const std::vector<Piece>& aToB,
                          int b,
                          int tbB,
                          const std::vector<Piece>& bToA,
                          StepOp recvOp)
{
    const bool reduce = recvOp != StepOp::kRecv;
    const size_t n = std::max(aToB.size(), bToA.size());
    for (size_t i = 0; i < n; ++i)
    {
        if (i < aToB.size())
        {
            Send(a, tbA, aToB[i].m_src, aToB[i].m_count);
        }
        if (i < bToA.size())
        {
            Send(b, tbB, bToA[i].m_src, bToA[i].m_count);
            Add(a, tbA, recvOp, reduce ? bToA[i].m_red : Loc{}, bToA[i].m_dst, bToA[i].m_count);
        }
        if (i < aToB.size())
        {
            Add(b, tbB, recvOp, reduce ? aToB[i].m_red : Loc{}, aToB[i].m_dst, aToB[i].m_count);
        }
    }
}

Schedule
ScheduleBuilder::Finish()
{
    for (const auto& [key, fifo] : m_fifos)
    {
        if (!fifo.empty())
        {
            throw std::logic_error("generator: " + std::to_string(fifo.size())
                                   + " message(s) from rank " + std::to_string(std::get<0>(key))
                                   + " to rank " + std::to_string(std::get<1>(key))
                                   + " are never received");
        }
    }
    for (int r = 0; r < Ranks(); ++r)
    {
        m_schedule.Rank(r).m_scratchChunks = m_ranks[r].m_scratch;
    }
    m_schedule.MarkDependencyTargets();
    return std::move(m_schedule);
}

} // namespace gen
} // namespace fabricsim
