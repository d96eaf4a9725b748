#include "connection-capacity.h"

#include "buffer-layout.h"

#include <algorithm>
#include <deque>
#include <map>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

namespace fabricsim
{

namespace
{

using TbRef = std::pair<int, int>; // (rank, threadblock index)

/// One run of the schedule's control flow (counts only) at a fixed capacity.
class CountRun
{
  public:
    CountRun(const std::vector<const RankProgram*>& programs, int capacity)
        : m_programs(programs)
        , m_capacity(capacity)
    {
        m_tbs.resize(programs.size());
        for (size_t r = 0; r < programs.size(); ++r)
        {
            if (!programs[r])
            {
                continue;
            }
            const auto& tbs = programs[r]->m_threadblocks;
            std::unordered_map<int, int> indexOf;
            for (size_t t = 0; t < tbs.size(); ++t)
            {
                indexOf.emplace(tbs[t].m_id, int(t));
            }
            m_tbs[r].resize(tbs.size());
            for (size_t t = 0; t < tbs.size(); ++t)
            {
                Tb& tb = m_tbs[r][t];
                tb.m_tb = &tbs[t];
                tb.m_deps.resize(tbs[t].m_steps.size());
                for (size_t i = 0; i < tbs[t].m_steps.size(); ++i)
                {
                    for (const Dependency& d : tbs[t].m_steps[i].m_deps)
                    {
                        auto it = indexOf.find(d.m_tb);
                        if (it != indexOf.end() && d.m_step >= 0
                            && d.m_step < int(tbs[it->second].m_steps.size()))
                        {
                            tb.m_deps[i].emplace_back(it->second, d.m_step);
                        }
                    }
                }
                m_ready.emplace_back(int(r), int(t));
            }
        }
    }

    /// True when every step ran.
    bool Complete()
    {
        while (!m_ready.empty())
        {
            const TbRef tb = m_ready.front();
            m_ready.pop_front();
            Advance(tb.first, tb.second);
        }
        for (const auto& rank : m_tbs)
        {
            for (const Tb& tb : rank)
            {
                if (tb.m_pc < tb.m_tb->m_steps.size())
                {
                    return false;
                }
            }
        }
        return true;
    }

  private:
    struct Tb
    {
        const Threadblock* m_tb = nullptr;
        size_t m_pc = 0;
        bool m_received = false; ///< the current step has its message and waits to send
        std::vector<std::vector<std::pair<int, int>>> m_deps; ///< per step: (tb index, step)
        std::vector<int> m_depWaiters;                        ///< tbs of this rank
    };

    struct Connection
    {
        std::deque<int> m_messages; ///< chunk counts, oldest first
        int m_held = 0;             ///< chunks sent and not yet received
        std::vector<TbRef> m_receivers;
        std::vector<TbRef> m_senders;
    };

    bool ValidPeer(int peer) const
    {
        return peer >= 0 && peer < int(m_programs.size()) && m_programs[peer];
    }

    Connection& Conn(int src, int dst, int channel)
    {
        return m_conns[std::make_tuple(src, dst, channel)];
    }

    void Wake(std::vector<TbRef>& waiters)
    {
        for (const TbRef& w : waiters)
        {
            m_ready.push_back(w);
        }
        waiters.clear();
    }

    void Advance(int rank, int index)
    {
        Tb& t = m_tbs[rank][index];
        const Threadblock& tb = *t.m_tb;
        while (t.m_pc < tb.m_steps.size())
        {
            const Step& st = tb.m_steps[t.m_pc];
            for (const auto& [dep, depStep] : t.m_deps[t.m_pc])
            {
                if (m_tbs[rank][dep].m_pc <= size_t(depStep))
                {
                    m_tbs[rank][dep].m_depWaiters.push_back(index);
                    return;
                }
            }
            // A step takes its message first, freeing the peer's room, then waits for room to send
            // (the executor does so slice by slice: a receive-and-send step never holds both).
            if (OpReceives(st.m_op) && ValidPeer(tb.m_recvPeer) && !t.m_received)
            {
                Connection& in = Conn(tb.m_recvPeer, rank, tb.m_channel);
                if (in.m_messages.empty())
                {
                    in.m_receivers.emplace_back(rank, index);
                    return;
                }
                in.m_held -= in.m_messages.front();
                in.m_messages.pop_front();
                t.m_received = true;
                Wake(in.m_senders);
            }
            const int count = std::max(st.m_count, 0);
            if (OpSends(st.m_op) && ValidPeer(tb.m_sendPeer))
            {
                Connection& out = Conn(rank, tb.m_sendPeer, tb.m_channel);
                // The whole message must fit (what the executor's tiles are sized for).
                if (out.m_held + count > m_capacity)
                {
                    out.m_senders.emplace_back(rank, index);
                    return;
                }
                out.m_messages.push_back(count);
                out.m_held += count;
                Wake(out.m_receivers);
            }
            t.m_received = false;
            t.m_pc++;
            for (int w : t.m_depWaiters)
            {
                m_ready.emplace_back(rank, w);
            }
            t.m_depWaiters.clear();
        }
    }

    const std::vector<const RankProgram*>& m_programs;
    const int m_capacity;
    std::vector<std::vector<Tb>> m_tbs;
    std::map<std::tuple<int, int, int>, Connection> m_conns;
    std::deque<TbRef> m_ready;
};

} // namespace

int
ConnectionChunksNeeded(const Schedule& schedule)
{
    const std::vector<const RankProgram*> programs = ProgramsByRank(schedule);
    // Bounds: one step of the largest count must fit; all a connection ever carries always does.
    int lo = 1;
    std::map<std::tuple<int, int, int>, long long> carried;
    for (size_t r = 0; r < programs.size(); ++r)
    {
        if (!programs[r])
        {
            continue;
        }
        for (const Threadblock& tb : programs[r]->m_threadblocks)
        {
            for (const Step& st : tb.m_steps)
            {
                if (OpSends(st.m_op))
                {
                    lo = std::max(lo, st.m_count);
                    carried[std::make_tuple(int(r), tb.m_sendPeer, tb.m_channel)]
                        += std::max(st.m_count, 0);
                }
            }
        }
    }
    long long most = lo;
    for (const auto& [key, chunks] : carried)
    {
        most = std::max(most, chunks);
    }
    int hi = int(std::min<long long>(most, 1 << 30));
    if (!CountRun(programs, hi).Complete())
    {
        return 0;
    }
    while (lo < hi)
    {
        const int mid = lo + (hi - lo) / 2;
        if (CountRun(programs, mid).Complete())
        {
            hi = mid;
        }
        else
        {
            lo = mid + 1;
        }
    }
    return hi;
}

} // namespace fabricsim
