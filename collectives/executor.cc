#include "executor.h"

#include "connection-capacity.h"
#include "input-error.h"
#include "schedule-structure-check.h"
#include "unit-conversions.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

namespace fabricsim
{

namespace
{

bool
OpReduces(StepOp op)
{
    return op == StepOp::kRecvReduceSend || op == StepOp::kRecvReduceCopy
           || op == StepOp::kRecvReduceCopySend || op == StepOp::kReduce;
}

uint64_t
CeilDiv(uint64_t a, uint64_t b)
{
    return (a + b - 1) / b;
}

/// Part \p i of \p total split into \p parts nearly equal integers (the first ones larger).
uint64_t
Share(uint64_t total, uint64_t parts, uint64_t i)
{
    return total / parts + (i < total % parts ? 1 : 0);
}

} // namespace

uint64_t
ProtocolBufferBytes(Protocol p)
{
    switch (p)
    {
    case Protocol::kLL:
        return 256 * 1024; // 512 KiB of 16 B lines, half of each line is flags
    case Protocol::kLL128:
        return 4915200ULL * 120 / 128;
    case Protocol::kSimple:
    default:
        return 4 * 1024 * 1024;
    }
}

double
ProtocolEfficiency(Protocol p)
{
    switch (p)
    {
    case Protocol::kLL:
        return 0.5;
    case Protocol::kLL128:
        return 120.0 / 128.0;
    case Protocol::kSimple:
    default:
        return 1.0;
    }
}

Executor::Executor(Transport& transport,
                   const Schedule& schedule,
                   const ExecutorConfig& config,
                   std::vector<uint32_t> rankMap,
                   uint32_t channelBase)
    : m_transport(transport)
    , m_schedule(schedule)
    , m_config(config)
    , m_rankMap(std::move(rankMap))
    , m_channelBase(channelBase)
{
    if (m_rankMap.empty())
    {
        for (int r = 0; r < m_schedule.m_ranks; ++r)
        {
            m_rankMap.push_back(uint32_t(r));
        }
    }
    CheckExecutable();
    m_protocol = m_config.m_overrideProtocol ? m_config.m_protocol : m_schedule.m_protocol;
    m_efficiency = ProtocolEfficiency(m_protocol);

    const int n = m_schedule.m_ranks;
    m_rankTbs.assign(n, {});
    m_ranks.assign(n, 0);
    m_rankDonePs.assign(n, -1);
    for (const RankProgram& p : m_schedule.m_programs)
    {
        int maxId = -1;
        for (const Threadblock& tb : p.m_threadblocks)
        {
            maxId = std::max(maxId, tb.m_id);
        }
        m_rankTbs[p.m_rank].assign(maxId + 1, -1);
        for (const Threadblock& tb : p.m_threadblocks)
        {
            TbState t;
            t.m_rank = p.m_rank;
            t.m_tb = &tb;
            const uint32_t ch = uint32_t(tb.m_channel);
            if (tb.m_sendPeer >= 0)
            {
                t.m_sendConn = ConnectionIndex(uint32_t(p.m_rank), uint32_t(tb.m_sendPeer), ch);
            }
            if (tb.m_recvPeer >= 0)
            {
                t.m_recvConn = ConnectionIndex(uint32_t(tb.m_recvPeer), uint32_t(p.m_rank), ch);
            }
            t.m_done = tb.m_steps.empty();
            m_ranks[p.m_rank] += t.m_done ? 0 : 1;
            m_rankTbs[p.m_rank][tb.m_id] = int(m_tbs.size());
            m_tbs.push_back(t);
        }
    }
    m_queued.assign(m_tbs.size(), false);
}

Executor::~Executor()
{
    *m_alive = false;
}

void
Executor::CheckExecutable() const
{
    const Schedule& s = m_schedule;
    const std::string where = "schedule '" + s.m_name + "'";
    std::vector<Problem> problems;
    CheckStructure(s, problems);
    for (const Problem& p : problems)
    {
        // Structure problems leave peers, ranks or threadblocks undefined; anything else
        // (races, wrong results, deadlocks) still executes and shows in the result.
        if (p.m_kind == ProblemKind::kStructure)
        {
            throw fabricsim::InputError(where, "structure", "an executable schedule", p.ToString());
        }
    }
    if (m_rankMap.size() != size_t(s.m_ranks))
    {
        throw fabricsim::InputError(where,
                                    "ranks",
                                    std::to_string(m_rankMap.size()) + " ranks (the rank group)",
                                    std::to_string(s.m_ranks));
    }
    std::vector<uint32_t> sorted = m_rankMap;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    {
        throw fabricsim::InputError(
            where, "ranks", "distinct transport ranks", "a rank mapped twice");
    }
    for (uint32_t r : m_rankMap)
    {
        if (r >= m_transport.NumRanks())
        {
            throw fabricsim::InputError(where,
                                        "ranks",
                                        "transport ranks below "
                                            + std::to_string(m_transport.NumRanks()),
                                        std::to_string(r));
        }
    }
    for (const RankProgram& p : s.m_programs)
    {
        for (const Threadblock& tb : p.m_threadblocks)
        {
            for (size_t i = 0; i < tb.m_steps.size(); ++i)
            {
                for (const Dependency& d : tb.m_steps[i].m_deps)
                {
                    const Threadblock* target = p.FindThreadblock(d.m_tb);
                    if (!target || d.m_step < 0 || size_t(d.m_step) >= target->m_steps.size())
                    {
                        throw fabricsim::InputError(
                            where,
                            "rank " + std::to_string(p.m_rank) + " tb " + std::to_string(tb.m_id)
                                + " step " + std::to_string(i),
                            "a dependency on an existing step",
                            "tb " + std::to_string(d.m_tb) + " step " + std::to_string(d.m_step));
                    }
                }
            }
        }
    }
}

int
Executor::ConnectionIndex(uint32_t src, uint32_t dst, uint32_t channel)
{
    auto key = std::make_tuple(src, dst, channel);
    auto it = m_connIndex.find(key);
    if (it != m_connIndex.end())
    {
        return it->second;
    }
    Connection c;
    c.m_src = src;
    c.m_dst = dst;
    c.m_channel = channel;
    m_conns.push_back(c);
    m_connIndex[key] = int(m_conns.size() - 1);
    return int(m_conns.size() - 1);
}

void
Executor::Start(uint64_t bytes, RankDone onRankDone, Done onDone)
{
    if (m_started)
    {
        throw std::logic_error("Executor::Start called twice");
    }
    if (bytes == 0)
    {
        throw fabricsim::InputError(
            "schedule '" + m_schedule.m_name + "'", "bytes", "a collective size > 0", "0");
    }
    m_started = true;
    m_onRankDone = std::move(onRankDone);
    m_onDone = std::move(onDone);
    m_startPs = m_transport.NowPs();

    // MSCCL tiling: the buffer is K chunks; one tile moves at most maxChunk bytes per chunk, and
    // by default a step of the largest count fits in one connection's slots.
    const uint64_t k = uint64_t(std::max(1, m_schedule.m_chunksPerLoop));
    m_chunkBytes = std::max<uint64_t>(1, CeilDiv(bytes, k));
    const uint64_t buffer = ProtocolBufferBytes(m_protocol);
    const uint32_t slots = m_config.m_slots > 0 ? m_config.m_slots : 8;
    m_sliceBytes
        = m_config.m_sliceBytes > 0 ? m_config.m_sliceBytes : std::max<uint64_t>(1, buffer / slots);
    int maxCount = 1;
    for (const TbState& t : m_tbs)
    {
        for (const Step& st : t.m_tb->m_steps)
        {
            maxCount = std::max(maxCount, st.m_count);
        }
    }
    uint64_t cap = m_config.m_maxChunkBytes;
    if (cap == 0)
    {
        const uint64_t room
            = m_config.m_slots > 0 ? uint64_t(m_config.m_slots) * m_sliceBytes : buffer;
        cap = std::max<uint64_t>(1, room / uint64_t(maxCount));
    }
    // A schedule that must hold more chunks on one connection than one step's (it sends again
    // before the peer receives) gets tiles of whole slices that many chunks fit in the slots;
    // else a slot it needs frees only when the peer, itself waiting for slots, receives. Only
    // such schedules change: they deadlocked wherever a tile was larger.
    const int needed = m_config.m_slots == 0               ? 0
                       : m_schedule.m_connectionChunks > 0 ? m_schedule.m_connectionChunks
                                                           : ConnectionChunksNeeded(m_schedule);
    if (needed > maxCount)
    {
        if (uint32_t(needed) > m_config.m_slots)
        {
            throw fabricsim::InputError(
                "schedule '" + m_schedule.m_name + "'",
                "ns3::CollectiveExecutor::Slots",
                "at least " + std::to_string(needed)
                    + " slots per connection (the schedule holds that many chunks on one "
                      "connection before the peer receives; 0 = unbounded)",
                std::to_string(m_config.m_slots));
        }
        cap = std::min(cap, uint64_t(m_config.m_slots / uint32_t(needed)) * m_sliceBytes);
    }
    // Tiles are an int and a step's slices a uint32: counts past them would wrap and the
    // collective would finish early (a tiny SliceSize under a huge MaxChunkSize, say).
    const uint64_t tiles = CeilDiv(m_chunkBytes, cap);
    const unsigned __int128 stepSlices
        = ((unsigned __int128)maxCount * std::min(m_chunkBytes, cap) + m_sliceBytes - 1)
          / m_sliceBytes;
    if (tiles > uint64_t(std::numeric_limits<int>::max())
        || stepSlices > std::numeric_limits<uint32_t>::max())
    {
        throw fabricsim::InputError("schedule '" + m_schedule.m_name + "'",
                                    "bytes",
                                    "a size that ns3::CollectiveExecutor's MaxChunkSize and "
                                    "SliceSize cut into at most 2^31 tiles of at most 2^32 "
                                    "slices per step",
                                    std::to_string(bytes) + " bytes: " + std::to_string(tiles)
                                        + " tiles of chunk " + std::to_string(cap) + " B, slice "
                                        + std::to_string(m_sliceBytes) + " B");
    }
    m_tiles = int(tiles);

    for (size_t r = 0; r < m_ranks.size(); ++r)
    {
        if (m_ranks[r] == 0)
        {
            m_rankDonePs[r] = m_startPs;
            m_ranksDone++;
        }
    }
    for (size_t i = 0; i < m_tbs.size(); ++i)
    {
        if (m_tbs[i].m_done)
        {
            continue;
        }
        if (m_config.m_launchLatencyPs > 0)
        {
            StartTimer(int(i), m_config.m_launchLatencyPs);
        }
        else
        {
            Wake(int(i));
        }
    }
    if (Complete())
    {
        m_endPs = m_startPs;
        if (m_onDone)
        {
            m_onDone();
        }
        return;
    }
    Drain();
}

uint64_t
Executor::TileChunkBytes(int tile) const
{
    return Share(m_chunkBytes, uint64_t(m_tiles), uint64_t(tile));
}

uint64_t
Executor::SliceBytes(const TbState& t, uint32_t slice) const
{
    const Step& st = t.m_tb->m_steps[t.m_step];
    const uint64_t stepBytes = uint64_t(std::max(0, st.m_count)) * TileChunkBytes(t.m_tile);
    return Share(stepBytes, std::max<uint64_t>(1, t.m_slices), slice);
}

int64_t
Executor::ComputePs(StepOp op, uint64_t bytes) const
{
    if (m_config.m_memoryBytesPerSecond <= 0)
    {
        return 0;
    }
    double touched = 0;
    if (OpReduces(op))
    {
        touched = 3.0 * double(bytes);
    }
    else if (op == StepOp::kCopy)
    {
        touched = 2.0 * double(bytes);
    }
    return units::BytesAtRatePs(touched, m_config.m_memoryBytesPerSecond, "reduction time");
}

bool
Executor::DependenciesMet(const TbState& t) const
{
    for (const Dependency& d : t.m_tb->m_steps[t.m_step].m_deps)
    {
        const TbState& other = m_tbs[m_rankTbs[t.m_rank][d.m_tb]];
        const uint64_t need
            = uint64_t(t.m_tile) * other.m_tb->m_steps.size() + uint64_t(d.m_step) + 1;
        if (other.m_stepsDone < need)
        {
            return false;
        }
    }
    return true;
}

void
Executor::Wake(int tb)
{
    if (!m_queued[tb])
    {
        m_queued[tb] = true;
        m_ready.push_back(tb);
    }
}

void
Executor::Drain()
{
    // Callbacks may arrive while a threadblock advances; one loop runs them all, no recursion.
    if (m_draining)
    {
        return;
    }
    m_draining = true;
    while (!m_ready.empty())
    {
        int tb = m_ready.front();
        m_ready.pop_front();
        m_queued[tb] = false;
        Advance(tb);
    }
    m_draining = false;
}

void
Executor::StartTimer(int tb, int64_t delayPs)
{
    m_tbs[tb].m_wait = Wait::kTimer;
    m_transport.Schedule(delayPs,
                         [this, tb, alive = m_alive]()
                         {
                             if (!*alive)
                             {
                                 return;
                             }
                             m_tbs[tb].m_wait = Wait::kNone;
                             Wake(tb);
                             Drain();
                         });
}

void
Executor::Delivered(int conn, uint64_t bytes)
{
    Connection& c = m_conns[conn];
    c.m_delivered++;
    c.m_arrived.push_back(bytes);
    for (int w : c.m_waiters)
    {
        Wake(w);
    }
    c.m_waiters.clear();
    Drain();
}

void
Executor::Advance(int tb)
{
    TbState& t = m_tbs[tb];
    if (t.m_done || t.m_wait == Wait::kTimer)
    {
        return;
    }
    t.m_wait = Wait::kNone;
    while (!t.m_done)
    {
        const Step& st = t.m_tb->m_steps[t.m_step];
        if (!t.m_started)
        {
            if (!DependenciesMet(t))
            {
                t.m_wait = Wait::kDependency;
                return;
            }
            t.m_started = true;
            t.m_slice = 0;
            const uint64_t stepBytes = uint64_t(std::max(0, st.m_count)) * TileChunkBytes(t.m_tile);
            if (st.m_op == StepOp::kNop || stepBytes == 0)
            {
                t.m_slices = 0;
            }
            else if (OpSends(st.m_op) || OpReceives(st.m_op))
            {
                t.m_slices = uint32_t(CeilDiv(stepBytes, m_sliceBytes));
            }
            else
            {
                t.m_slices = 1; // local copy or reduction: one pass over the data
            }
            t.m_received = t.m_slotTaken = t.m_computed = false;
            if (st.m_op != StepOp::kNop && m_config.m_stepLatencyPs > 0)
            {
                StartTimer(tb, m_config.m_stepLatencyPs);
                return;
            }
        }
        while (t.m_slice < t.m_slices)
        {
            const uint64_t bytes = SliceBytes(t, t.m_slice);
            if (OpReceives(st.m_op) && !t.m_received)
            {
                Connection& c = m_conns[t.m_recvConn];
                if (c.m_arrived.empty())
                {
                    t.m_wait = Wait::kMessage;
                    c.m_waiters.push_back(tb);
                    return;
                }
                c.m_arrived.pop_front();
                c.m_slotsUsed--;
                t.m_received = true;
                for (int w : c.m_waiters)
                {
                    Wake(w);
                }
                c.m_waiters.clear();
            }
            if (OpSends(st.m_op) && !t.m_slotTaken)
            {
                Connection& c = m_conns[t.m_sendConn];
                if (m_config.m_slots > 0 && c.m_slotsUsed >= m_config.m_slots)
                {
                    t.m_wait = Wait::kSlot;
                    c.m_waiters.push_back(tb);
                    return;
                }
                c.m_slotsUsed++;
                t.m_slotTaken = true;
            }
            if (!t.m_computed)
            {
                t.m_computed = true;
                const int64_t ps = ComputePs(st.m_op, bytes);
                if (ps > 0)
                {
                    StartTimer(tb, ps);
                    return;
                }
            }
            if (OpSends(st.m_op))
            {
                const int conn = t.m_sendConn;
                Connection& c = m_conns[conn];
                const uint64_t wire
                    = std::max<uint64_t>(1,
                                         units::RoundCount(std::ceil(double(bytes) / m_efficiency),
                                                           "protocol wire bytes"));
                c.m_sent++;
                m_messages++;
                m_payloadBytes += bytes;
                m_transferBytes += wire;
                m_transport.Send(m_rankMap[c.m_src],
                                 m_rankMap[c.m_dst],
                                 m_channelBase + c.m_channel,
                                 wire,
                                 [this, conn, bytes, alive = m_alive]()
                                 {
                                     if (*alive)
                                     {
                                         Delivered(conn, bytes);
                                     }
                                 });
            }
            t.m_slice++;
            t.m_received = t.m_slotTaken = t.m_computed = false;
        }
        StepFinished(tb);
    }
}

void
Executor::StepFinished(int tb)
{
    TbState& t = m_tbs[tb];
    t.m_stepsDone++;
    t.m_started = false;
    if (++t.m_step == int(t.m_tb->m_steps.size()))
    {
        t.m_step = 0;
        if (++t.m_tile == m_tiles)
        {
            t.m_done = true;
            t.m_tile = m_tiles - 1;
            t.m_step = int(t.m_tb->m_steps.size()) - 1;
        }
    }
    for (int other : m_rankTbs[t.m_rank])
    {
        if (other >= 0 && m_tbs[other].m_wait == Wait::kDependency)
        {
            Wake(other);
        }
    }
    if (t.m_done && --m_ranks[t.m_rank] == 0)
    {
        m_rankDonePs[t.m_rank] = m_transport.NowPs();
        m_ranksDone++;
        if (m_onRankDone)
        {
            m_onRankDone(uint32_t(t.m_rank));
        }
        if (Complete())
        {
            m_endPs = m_transport.NowPs();
            if (m_onDone)
            {
                m_onDone();
            }
        }
    }
}

ExecutionResult
RunSchedule(Transport& transport,
            const Schedule& schedule,
            uint64_t bytes,
            const ExecutorConfig& config)
{
    Executor ex(transport, schedule, config);
    ex.Start(bytes);
    transport.Run();
    return ex.Result();
}

} // namespace fabricsim
