/*
 * The outcome of a trace replay (TraceReplayer::State::Result): per-op times, the ops that never
 * ran and why, and each collective's or transfer's replayed and exposed time.
 */
#include "trace-replay-state.h"

#include <algorithm>
#include <cstdint>

namespace fabricsim
{

namespace
{

/// Merged busy intervals and the covered length of a window.
class Busy
{
  public:
    void Add(int64_t a, int64_t b)
    {
        if (b > a)
        {
            m_raw.emplace_back(a, b);
        }
    }

    void Merge()
    {
        std::sort(m_raw.begin(), m_raw.end());
        for (const auto& iv : m_raw)
        {
            if (!m_merged.empty() && iv.first <= m_merged.back().second)
            {
                m_merged.back().second = std::max(m_merged.back().second, iv.second);
            }
            else
            {
                m_merged.push_back(iv);
            }
        }
        m_raw.clear();
    }

    int64_t Total() const
    {
        int64_t t = 0;
        for (const auto& iv : m_merged)
        {
            t += iv.second - iv.first;
        }
        return t;
    }

    int64_t Covered(int64_t a, int64_t b) const
    {
        int64_t t = 0;
        auto it = std::lower_bound(m_merged.begin(),
                                   m_merged.end(),
                                   std::make_pair(a, INT64_MIN),
                                   [](const auto& x, const auto& y) { return x.second < y.first; });
        for (; it != m_merged.end() && it->first < b; ++it)
        {
            t += std::max<int64_t>(0, std::min(b, it->second) - std::max(a, it->first));
        }
        return t;
    }

  private:
    std::vector<std::pair<int64_t, int64_t>> m_raw;
    std::vector<std::pair<int64_t, int64_t>> m_merged;
};

} // namespace

ReplayRun
TraceReplayer::State::Result() const
{
    ReplayRun run;
    run.complete = true;
    const size_t n = ops.size();
    std::vector<Busy> busy(n);
    run.rankEndPs.assign(n, 0);
    run.opStartPs.resize(n);
    run.opEndPs.resize(n);
    for (uint32_t r = 0; r < n; ++r)
    {
        for (uint32_t i = 0; i < ops[r].size(); ++i)
        {
            const OpState& s = ops[r][i];
            run.opStartPs[r].push_back(s.startPs);
            run.opEndPs[r].push_back(s.endPs);
            if (s.endPs < 0)
            {
                run.complete = false;
                if (run.stuck.size() < 20)
                {
                    const TraceOp& op = Op(r, i);
                    std::string why;
                    if (s.pending > 0)
                    {
                        why = "waits for " + std::to_string(s.pending) + " dependencies";
                    }
                    else if (op.kind == TraceOpKind::kCollective && Simulated(op))
                    {
                        auto it = colls.find(CollKey(op));
                        std::string absent;
                        if (it != colls.end())
                        {
                            for (uint32_t m : it->second.members)
                            {
                                if (!it->second.arrived.count(m))
                                {
                                    absent += (absent.empty() ? "" : ",") + std::to_string(m);
                                }
                            }
                        }
                        why = it != colls.end() && it->second.started
                                  ? "collective " + CollKey(op) + " started but never finished"
                                  : "collective " + CollKey(op) + " waits for ranks " + absent;
                    }
                    else if (op.kind == TraceOpKind::kRecv)
                    {
                        why = "receive from rank " + std::to_string(op.peer) + " never matched";
                    }
                    else
                    {
                        why = "never finished";
                    }
                    run.stuck.push_back("rank " + std::to_string(r) + " op " + std::to_string(i)
                                        + " (" + op.name + "): " + why);
                }
                continue;
            }
            run.rankEndPs[r] = std::max(run.rankEndPs[r], s.endPs);
            if (Op(r, i).kind == TraceOpKind::kCompute)
            {
                busy[r].Add(s.startPs, s.endPs);
            }
        }
        busy[r].Merge();
        run.rankComputePs.push_back(busy[r].Total());
        run.spanPs = std::max(run.spanPs, run.rankEndPs[r]);
    }
    // Communication, grouped by collective (or by transfer), in order of first readiness.
    struct Acc
    {
        ReplayedComm c;
        int64_t first = INT64_MAX;
        double recorded = 0;
        double replayed = 0;
        double exposed = 0;
        uint32_t done = 0;
    };
    std::map<std::string, Acc> acc;
    std::map<std::tuple<uint32_t, uint32_t, int64_t, bool>, uint64_t> p2pCount;
    for (uint32_t r = 0; r < n; ++r)
    {
        for (uint32_t i = 0; i < ops[r].size(); ++i)
        {
            const TraceOp& op = Op(r, i);
            if (!op.IsComm())
            {
                continue;
            }
            std::string key;
            if (op.kind == TraceOpKind::kCollective)
            {
                key = CollKey(op);
            }
            else
            {
                const uint32_t src = op.kind == TraceOpKind::kSend ? r : op.peer;
                const uint32_t dst = op.kind == TraceOpKind::kSend ? op.peer : r;
                // The n-th send src -> dst with a tag pairs with the n-th receive.
                const uint64_t nth
                    = p2pCount[std::make_tuple(src, dst, op.tag, op.kind == TraceOpKind::kSend)]++;
                key = std::to_string(src) + ">" + std::to_string(dst) + "#" + std::to_string(op.tag)
                      + "#" + std::to_string(nth);
            }
            Acc& a = acc[key];
            a.c.key = key;
            a.c.name = op.name;
            a.c.collective = op.collectiveName;
            a.c.bytes = op.bytes;
            a.c.simulated = Simulated(op);
            a.c.members++;
            a.recorded += double(op.durationPs);
            const OpState& s = ops[r][i];
            if (s.endPs >= 0 && s.readyPs >= 0)
            {
                a.first = std::min(a.first, s.readyPs);
                a.replayed += double(s.endPs - s.readyPs);
                a.exposed += double(s.endPs - s.readyPs - busy[r].Covered(s.readyPs, s.endPs));
                a.done++;
            }
        }
    }
    std::vector<Acc*> order;
    for (auto& [k, a] : acc)
    {
        a.c.recordedUs = a.recorded / a.c.members * 1e-6;
        a.c.replayedUs = a.done ? a.replayed / a.done * 1e-6 : 0;
        a.c.exposedUs = a.done ? a.exposed / a.done * 1e-6 : 0;
        order.push_back(&a);
    }
    std::stable_sort(
        order.begin(), order.end(), [](const Acc* x, const Acc* y) { return x->first < y->first; });
    for (const Acc* a : order)
    {
        run.comms.push_back(a->c);
    }
    return run;
}

} // namespace fabricsim
