#include "step-executor.h"

#include "collective-api.h"
#include "step-executor-state.h"
#include "unit-conversions.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace fabricsim
{

namespace
{

/// Timeline lanes of a rank: compute, then one per stream, then bulk transfers.
constexpr uint32_t kComputeLane = 0;
constexpr uint32_t kTransferLane = 9;

} // namespace

StepExecutor::StepExecutor(CollectiveApi& api)
    : m_api(api)
{
    m_api.SetHorizon(this);
}

StepExecutor::~StepExecutor()
{
    for (StepRun* run : m_runs)
    {
        delete run;
    }
}

void
StepExecutor::SetTimeline(ChromeTrace* trace, uint64_t maxSteps)
{
    m_trace = trace;
    m_traceMaxSteps = maxSteps;
}

void
StepExecutor::SetTransferPartDone(TransferPartDone cb)
{
    m_transferPartDone = std::move(cb);
}

StepExecutor::RankState&
StepExecutor::Rank(uint32_t r)
{
    auto& p = m_ranks[r];
    if (!p)
    {
        p = std::make_unique<RankState>();
        p->rank = r;
        if (m_trace)
        {
            m_trace->NameProcess(r, "rank " + std::to_string(r));
            m_trace->NameThread(r, kComputeLane, "compute");
            m_trace->NameThread(r, 1, "comm");
            m_trace->NameThread(r, 2, "comm (stream 1)");
            m_trace->NameThread(r, kTransferLane, "kv transfer");
        }
    }
    return *p;
}

size_t
StepExecutor::InFlight() const
{
    return m_inFlight;
}

void
StepExecutor::Submit(std::shared_ptr<const StepProgram> prog, StepDone done)
{
    auto* run = new StepRun;
    m_runs.insert(run);
    run->prog = std::move(prog);
    run->done = std::move(done);
    run->stats.step = run->prog->step;
    run->stats.launchPs = m_api.NowPs();
    run->ranksLeft = run->prog->ranks.size();
    std::set<uint32_t> seen;
    for (const auto& rp : run->prog->ranks)
    {
        if (!seen.insert(rp.rank).second)
        {
            m_runs.erase(run);
            delete run;
            throw std::logic_error("step program lists rank " + std::to_string(rp.rank) + " twice");
        }
        RankStepStats st;
        st.rank = rp.rank;
        run->stats.ranks.push_back(st);
    }
    m_inFlight++;
    if (run->ranksLeft == 0)
    {
        run->stats.endPs = run->stats.launchPs;
        m_inFlight--;
        StepStats stats = run->stats;
        StepDone cb = std::move(run->done);
        m_runs.erase(run);
        delete run;
        cb(stats);
        return;
    }
    for (size_t i = 0; i < run->prog->ranks.size(); ++i)
    {
        Rank(run->prog->ranks[i].rank).queue.emplace_back(run, i);
    }
    for (const auto& rp : run->prog->ranks)
    {
        Advance(rp.rank);
    }
}

void
StepExecutor::Transfer(
    uint32_t src, uint32_t dst, uint64_t bytes, int64_t transferId, std::function<void()> done)
{
    int64_t start = m_api.NowPs();
    auto finish = [this, src, dst, bytes, transferId, start, done = std::move(done)]()
    {
        if (m_trace)
        {
            Rank(src);
            m_trace->Slice(src,
                           kTransferLane,
                           "kv_transfer",
                           "kv_transfer",
                           start,
                           m_api.NowPs() - start,
                           {{"dst", dst}, {"bytes", bytes}, {"transfer", transferId}});
        }
        done();
    };
    if (bytes == 0)
    {
        m_api.Schedule(0, finish);
        return;
    }
    m_api.SendRecv(src, dst, bytes, finish);
}

bool
StepExecutor::Recording(const RankState& rs) const
{
    return m_trace && rs.cur && (m_traceMaxSteps == 0 || rs.cur->prog->step < m_traceMaxSteps);
}

void
StepExecutor::Account(uint32_t r)
{
    RankState& rs = Rank(r);
    int64_t now = m_api.NowPs();
    int64_t dt = now - rs.last;
    rs.last = now;
    if (!rs.cur || dt <= 0)
    {
        return;
    }
    RankStepStats& st = rs.cur->stats.ranks[rs.idx];
    if (rs.computing)
    {
        st.computePs += dt;
        return;
    }
    for (const auto& s : rs.streams)
    {
        if (!s.blocked)
        {
            continue;
        }
        auto it = rs.comms.find(s.key);
        if (it == rs.comms.end())
        {
            return;
        }
        const ProgramItem& item = *it->second;
        if (rs.started.count(s.key))
        {
            st.commPs[item.category] += dt;
        }
        else if (item.op != CommOp::Recv)
        {
            st.syncPs += dt;
        }
        // A receive whose sender has not sent is a pipeline bubble: idle.
        return;
    }
}

void
StepExecutor::Advance(uint32_t r)
{
    RankState& rs = Rank(r);
    if (rs.advancing)
    {
        rs.again = true;
        return;
    }
    rs.advancing = true;
    do
    {
        rs.again = false;
        AdvanceOnce(r);
    } while (rs.again);
    rs.advancing = false;
}

void
StepExecutor::AdvanceOnce(uint32_t r)
{
    RankState& rs = Rank(r);
    Account(r);
    int64_t now = m_api.NowPs();
    if (!rs.cur)
    {
        if (rs.queue.empty())
        {
            return;
        }
        std::tie(rs.cur, rs.idx) = rs.queue.front();
        rs.queue.pop_front();
        const RankStepProgram& prog = rs.Program();
        rs.streams.assign(std::max<uint32_t>(prog.streams, 1), {});
        rs.comms.clear();
        rs.arrival.clear();
        for (size_t i = 0; i < prog.items.size(); ++i)
        {
            const ProgramItem& it = prog.items[i];
            if (it.stream >= rs.streams.size())
            {
                throw std::logic_error("program item on a stream the rank does not have");
            }
            rs.streams[it.stream].items.push_back(i);
            if (it.type == ProgramItem::Type::Comm)
            {
                rs.comms[it.key] = &it;
            }
        }
        rs.cur->stats.ranks[rs.idx].startPs = now;
        rs.last = now;
    }
    const RankStepProgram& prog = rs.Program();
    bool moved = true;
    while (moved)
    {
        moved = false;
        for (auto& s : rs.streams)
        {
            while (!s.blocked && s.pos < s.items.size())
            {
                const ProgramItem& it = prog.items[s.items[s.pos]];
                if (it.type == ProgramItem::Type::Compute)
                {
                    break;
                }
                if (it.type == ProgramItem::Type::Comm)
                {
                    rs.arrival[it.key] = now;
                    Launch(r, it);
                    if (it.async || it.detached)
                    {
                        s.pos++;
                        moved = true;
                        continue;
                    }
                }
                if (rs.completed.erase(it.key))
                {
                    rs.started.erase(it.key);
                    s.pos++;
                    moved = true;
                    continue;
                }
                s.blocked = true;
                s.key = it.key;
                break;
            }
        }
        if (!rs.computing)
        {
            size_t best = SIZE_MAX;
            uint32_t bestStream = 0;
            for (uint32_t k = 0; k < rs.streams.size(); ++k)
            {
                const auto& s = rs.streams[k];
                if (!s.blocked && s.pos < s.items.size() && s.items[s.pos] < best
                    && prog.items[s.items[s.pos]].type == ProgramItem::Type::Compute)
                {
                    best = s.items[s.pos];
                    bestStream = k;
                }
            }
            if (best != SIZE_MAX)
            {
                const ProgramItem& it = prog.items[best];
                rs.computing = true;
                rs.computeStream = bestStream;
                RankStepStats& st = rs.cur->stats.ranks[rs.idx];
                st.flops += it.flops;
                st.hbmBytes += it.hbmBytes;
                if (Recording(rs))
                {
                    if (rs.sliceStart >= 0 && rs.sliceEnd == now)
                    {
                        rs.sliceOps++;
                    }
                    else
                    {
                        FlushComputeSlice(rs);
                        rs.sliceStart = now;
                        rs.sliceOps = 1;
                        rs.sliceFirst
                            = it.name + (it.layer >= 0 ? " L" + std::to_string(it.layer) : "");
                    }
                }
                rs.computeLeft = double(it.durationPs);
                rs.computeSince = now;
                ScheduleComputeEnd(r);
            }
        }
    }
    if (rs.computing)
    {
        return;
    }
    for (const auto& s : rs.streams)
    {
        if (s.blocked || s.pos < s.items.size())
        {
            return;
        }
    }
    // The rank has finished this step.
    FlushComputeSlice(rs);
    StepRun* run = rs.cur;
    run->stats.ranks[rs.idx].endPs = now;
    rs.cur = nullptr;
    rs.comms.clear();
    rs.streams.clear();
    if (--run->ranksLeft == 0)
    {
        run->stats.endPs = now;
        m_inFlight--;
        StepStats stats = std::move(run->stats);
        StepDone cb = std::move(run->done);
        m_runs.erase(run);
        delete run;
        cb(stats);
    }
    rs.again = true; // start the next queued program
}

void
StepExecutor::FlushComputeSlice(RankState& rs)
{
    if (m_trace && rs.sliceStart >= 0)
    {
        m_trace->Slice(rs.rank,
                       kComputeLane,
                       "compute",
                       "compute",
                       rs.sliceStart,
                       rs.sliceEnd - rs.sliceStart,
                       {{"ops", rs.sliceOps}, {"first", rs.sliceFirst}});
    }
    rs.sliceStart = -1;
}

void
StepExecutor::ScheduleComputeEnd(uint32_t r)
{
    RankState& rs = Rank(r);
    // What the SMs held by collectives leave to compute (at least a tenth: kernels share SMs
    // rather than starve each other).
    rs.computeRate = std::max(0.1, 1 - rs.smHeld);
    const int64_t left = units::RoundPs(
        rs.computeRate >= 1 ? rs.computeLeft : std::ceil(rs.computeLeft / rs.computeRate),
        "compute slowed by collectives' SMs");
    const uint64_t gen = ++rs.computeGen;
    rs.sliceEnd = m_api.NowPs() + left;
    m_api.Schedule(left, [this, r, gen]() { ComputeDone(r, gen); });
}

void
StepExecutor::ChangeSmHeld(uint32_t r, double delta)
{
    RankState& rs = Rank(r);
    rs.smHeld = std::max(0.0, rs.smHeld + delta);
    if (rs.smHeld < 1e-12)
    {
        rs.smHeld = 0;
    }
    if (!rs.computing || std::max(0.1, 1 - rs.smHeld) == rs.computeRate)
    {
        return;
    }
    const int64_t now = m_api.NowPs();
    rs.computeLeft = std::max(0.0, rs.computeLeft - double(now - rs.computeSince) * rs.computeRate);
    rs.computeSince = now;
    ScheduleComputeEnd(r);
}

void
StepExecutor::ComputeDone(uint32_t r, uint64_t gen)
{
    RankState& rs = Rank(r);
    if (gen != rs.computeGen)
    {
        return; // its end moved (ChangeSmHeld)
    }
    Account(r);
    rs.computing = false;
    rs.streams[rs.computeStream].pos++;
    Advance(r);
}

void
StepExecutor::CommStarted(uint32_t r, const std::string& key)
{
    Account(r);
    Rank(r).started.insert(key);
}

void
StepExecutor::CommDone(uint32_t r, const std::string& key)
{
    RankState& rs = Rank(r);
    Account(r);
    auto item = rs.comms.find(key);
    if (item == rs.comms.end())
    {
        throw std::logic_error("communication " + key + " completed on rank " + std::to_string(r)
                               + " outside its step");
    }
    if (item->second->smShare > 0)
    {
        ChangeSmHeld(r, -item->second->smShare);
    }
    if (Recording(rs))
    {
        const ProgramItem& it = *item->second;
        int64_t start = rs.arrival.count(key) ? rs.arrival[key] : m_api.NowPs();
        m_trace->Slice(r,
                       1 + it.stream,
                       it.category,
                       "comm",
                       start,
                       m_api.NowPs() - start,
                       {{"op", CommOpName(it.op)},
                        {"bytes", it.bytes},
                        {"label", it.name},
                        {"layer", it.layer},
                        {"group_size", it.group.size()}});
    }
    bool unblocked = false;
    for (auto& s : rs.streams)
    {
        if (s.blocked && s.key == key)
        {
            s.blocked = false;
            s.pos++;
            unblocked = true;
        }
    }
    if (unblocked)
    {
        rs.started.erase(key);
    }
    else
    {
        rs.completed.insert(key);
    }
    Advance(r);
}

void
StepExecutor::Launch(uint32_t r, const ProgramItem& item)
{
    const std::string key = item.key;
    if (item.smShare > 0)
    {
        ChangeSmHeld(r, item.smShare);
    }
    switch (item.op)
    {
    case CommOp::AllReduce:
    case CommOp::ReduceScatter:
    case CommOp::AllGather:
    case CommOp::AllToAll:
    case CommOp::Gather:
    {
        auto& c = m_colls[key];
        if (!c)
        {
            c = std::make_unique<Collective>();
            c->group = item.group;
            c->op = item.op;
            c->members.assign(item.group.size(), nullptr);
        }
        if (c->group != item.group || c->op != item.op || item.groupIndex >= c->group.size()
            || c->group[item.groupIndex] != r || c->members[item.groupIndex])
        {
            throw std::logic_error("collective " + key + ": rank " + std::to_string(r)
                                   + " does not match the other members");
        }
        c->members[item.groupIndex] = &item;
        if (++c->arrived == c->group.size())
        {
            StartCollective(key);
        }
        return;
    }
    case CommOp::Send:
    case CommOp::Recv:
    {
        auto& p = m_p2p[key];
        if (!p)
        {
            p = std::make_unique<PointToPoint>();
            p->src = item.group.at(0);
            p->dst = item.group.at(1);
        }
        if (item.op == CommOp::Send)
        {
            p->sendIssued = true;
            CommStarted(r, key);
            if (p->recvArrived)
            {
                CommStarted(p->dst, key);
            }
            auto delivered = [this, key]()
            {
                PointToPoint& q = *m_p2p.at(key);
                q.delivered = true;
                uint32_t src = q.src;
                uint32_t dst = q.dst;
                bool recv = q.recvArrived;
                if (recv)
                {
                    m_p2p.erase(key);
                }
                CommDone(src, key);
                if (recv)
                {
                    CommDone(dst, key);
                }
            };
            if (item.bytes == 0)
            {
                m_api.Schedule(0, delivered);
            }
            else
            {
                m_api.SendRecv(p->src, p->dst, item.bytes, delivered);
            }
            return;
        }
        p->recvArrived = true;
        if (p->delivered)
        {
            m_p2p.erase(key);
            CommDone(r, key);
        }
        else if (p->sendIssued)
        {
            CommStarted(r, key);
        }
        return;
    }
    case CommOp::KvFetch:
    {
        CommStarted(r, key);
        if (item.fetchFrom >= 0 && uint32_t(item.fetchFrom) != r && item.bytes > 0)
        {
            m_api.SendRecv(
                uint32_t(item.fetchFrom), r, item.bytes, [this, r, key]() { CommDone(r, key); });
            return;
        }
        RankState& rs = Rank(r);
        int64_t now = m_api.NowPs();
        int64_t start = std::max(now, rs.pcieFree);
        double bw = item.tierBwBytesPerSec > 0 ? item.tierBwBytesPerSec : 1e30;
        rs.pcieFree = units::CheckedAdd(
            start, units::BytesAtRatePs(double(item.bytes), bw, "KV tier fetch"), "KV tier fetch");
        m_api.Schedule(rs.pcieFree - now, [this, r, key]() { CommDone(r, key); });
        return;
    }
    case CommOp::KvSend:
    {
        int64_t id = item.transferId;
        uint32_t dst = item.group.at(1);
        uint64_t bytes = item.bytes;
        int64_t start = m_api.NowPs();
        bool rec = Recording(Rank(r));
        auto done = [this, r, id, dst, bytes, start, rec]()
        {
            if (rec)
            {
                m_trace->Slice(r,
                               kTransferLane,
                               "kv_transfer",
                               "kv_transfer",
                               start,
                               m_api.NowPs() - start,
                               {{"dst", dst}, {"bytes", bytes}, {"transfer", id}});
            }
            if (m_transferPartDone)
            {
                m_transferPartDone(id);
            }
        };
        if (bytes == 0)
        {
            m_api.Schedule(0, done);
        }
        else
        {
            m_api.SendRecv(item.group.at(0), dst, bytes, done);
        }
        return;
    }
    }
}

} // namespace fabricsim
