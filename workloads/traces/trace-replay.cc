#include "trace-replay.h"

#include "input-error.h"
#include "unit-conversions.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <set>
#include <tuple>

namespace fabricsim
{

int64_t
ScaledComputePs(const TraceOp& op, const ReplayOptions& opt)
{
    double f = op.opClass == OpClass::kHost ? 1.0 : opt.computeScale;
    auto it = opt.classScale.find(op.opClass);
    if (it != opt.classScale.end())
    {
        f *= it->second;
    }
    return units::RoundPs(double(op.durationPs) * f, "scaled compute time");
}

struct TraceReplayer::State
{
    struct OpState
    {
        uint32_t pending = 0;
        int64_t readyAt = 0;
        int64_t readyPs = -1; ///< dependencies met (and release passed)
        int64_t startPs = -1; ///< running (collectives: every member arrived)
        int64_t endPs = -1;
    };

    struct Lane
    {
        bool busy = false;
        std::deque<uint32_t> queue;
    };

    struct Coll
    {
        std::vector<uint32_t> members;
        std::map<uint32_t, uint32_t> arrived; ///< rank -> op index
        bool started = false;
    };

    struct Channel
    {
        uint64_t delivered = 0;       ///< deliveries no receive has taken yet
        std::deque<uint32_t> waiting; ///< receives (op indices on the destination)
    };

    State(const ImportedTrace& t, const ReplayOptions& o)
        : trace(t)
        , opt(o)
    {
        const size_t n = trace.ranks.size();
        ops.resize(n);
        dependents.resize(n);
        lanes.resize(n);
        for (size_t r = 0; r < n; ++r)
        {
            const RankTrace& rt = trace.ranks[r];
            if (rt.rank != r)
            {
                throw fabricsim::InputError(rt.file,
                                            "rank",
                                            "ranks 0..N-1 in order (CompleteRanks)",
                                            std::to_string(rt.rank));
            }
            ops[r].resize(rt.ops.size());
            dependents[r].resize(rt.ops.size());
            for (uint32_t i = 0; i < rt.ops.size(); ++i)
            {
                for (const TraceDep& d : rt.ops[i].deps)
                {
                    if (d.op >= rt.ops.size() || d.op == i)
                    {
                        throw fabricsim::InputError(rt.file,
                                                    "op " + std::to_string(i) + " dependency",
                                                    "another op of the same rank",
                                                    std::to_string(d.op));
                    }
                    dependents[r][d.op].push_back({i, d.lagPs});
                }
                ops[r][i].pending = uint32_t(rt.ops[i].deps.size());
                ops[r][i].readyAt = rt.ops[i].deps.empty() ? rt.ops[i].releasePs : 0;
            }
        }
    }

    const TraceOp& Op(uint32_t r, uint32_t i) const
    {
        return trace.ranks[r].ops[i];
    }

    bool Simulated(const TraceOp& op) const
    {
        return opt.simulateComm && op.Simulable();
    }

    std::string CollKey(const TraceOp& op) const
    {
        return (op.group.empty() ? std::string("world") : op.group) + "#" + std::to_string(op.seq);
    }

    void Begin(CollectiveApi& a)
    {
        api = &a;
        for (uint32_t r = 0; r < ops.size(); ++r)
        {
            for (uint32_t i = 0; i < ops[r].size(); ++i)
            {
                if (ops[r][i].pending == 0)
                {
                    MakeReady(r, i);
                }
            }
        }
    }

    void MakeReady(uint32_t r, uint32_t i)
    {
        const int64_t delay = std::max<int64_t>(0, ops[r][i].readyAt - api->NowPs());
        api->Schedule(delay, [this, r, i]() { OnReady(r, i); });
    }

    void OnReady(uint32_t r, uint32_t i)
    {
        OpState& s = ops[r][i];
        s.readyPs = api->NowPs();
        const TraceOp& op = Op(r, i);
        if (op.kind == TraceOpKind::kCompute)
        {
            lanes[r][op.lane].queue.push_back(i);
            RunLane(r, op.lane);
            return;
        }
        if (!Simulated(op))
        {
            s.startPs = s.readyPs;
            api->Schedule(op.durationPs, [this, r, i]() { Done(r, i); });
            return;
        }
        if (op.kind == TraceOpKind::kCollective)
        {
            Arrive(r, i);
        }
        else if (op.kind == TraceOpKind::kSend)
        {
            s.startPs = s.readyPs;
            if (op.peer == r)
            {
                Done(r, i);
                return;
            }
            const uint32_t dst = op.peer;
            const auto key = std::make_tuple(r, dst, op.tag);
            api->SendRecv(r,
                          dst,
                          op.bytes,
                          [this, r, i, key]()
                          {
                              Done(r, i);
                              Channel& c = channels[key];
                              if (!c.waiting.empty())
                              {
                                  const uint32_t recv = c.waiting.front();
                                  c.waiting.pop_front();
                                  Done(std::get<1>(key), recv);
                              }
                              else
                              {
                                  c.delivered++;
                              }
                          });
        }
        else
        {
            s.startPs = s.readyPs;
            if (op.peer == r)
            {
                Done(r, i);
                return;
            }
            Channel& c = channels[std::make_tuple(op.peer, r, op.tag)];
            if (c.delivered > 0)
            {
                c.delivered--;
                Done(r, i);
            }
            else
            {
                c.waiting.push_back(i);
            }
        }
    }

    void Arrive(uint32_t r, uint32_t i)
    {
        const TraceOp& op = Op(r, i);
        const std::string key = CollKey(op);
        std::vector<uint32_t> members = op.groupRanks;
        if (members.empty())
        {
            for (uint32_t k = 0; k < ops.size(); ++k)
            {
                members.push_back(k);
            }
        }
        auto [it, fresh] = colls.try_emplace(key);
        Coll& c = it->second;
        if (fresh)
        {
            c.members = members;
        }
        else if (c.members != members || c.arrived.count(r))
        {
            throw fabricsim::InputError(trace.ranks[r].file,
                                        op.name + " (" + key + ")",
                                        "the same group on every member, reached once per rank",
                                        "a different group or a second arrival of rank "
                                            + std::to_string(r));
        }
        if (std::find(members.begin(), members.end(), r) == members.end())
        {
            throw fabricsim::InputError(trace.ranks[r].file,
                                        op.name,
                                        "a group that includes rank " + std::to_string(r),
                                        "one without it");
        }
        c.arrived[r] = i;
        if (c.arrived.size() < c.members.size())
        {
            return;
        }
        if (c.members.size() == 1)
        {
            // A group of one has nothing to exchange.
            c.started = true;
            ops[r][i].startPs = api->NowPs();
            Done(r, i);
            return;
        }
        c.started = true;
        CollectiveRequest req;
        req.kind = op.collective;
        req.bytes = op.bytes;
        req.ranks = c.members;
        req.algorithm = opt.algorithm;
        req.tag = op.name;
        for (const auto& [rank, idx] : c.arrived)
        {
            ops[rank][idx].startPs = api->NowPs();
        }
        std::vector<std::pair<uint32_t, uint32_t>> who;
        for (uint32_t m : c.members)
        {
            who.emplace_back(m, c.arrived.at(m));
        }
        api->Start(
            req, [this, who](uint32_t gi) { Done(who.at(gi).first, who.at(gi).second); }, []() {});
    }

    void RunLane(uint32_t r, uint32_t lane)
    {
        Lane& l = lanes[r][lane];
        if (l.busy || l.queue.empty())
        {
            return;
        }
        const uint32_t i = l.queue.front();
        l.queue.pop_front();
        l.busy = true;
        ops[r][i].startPs = api->NowPs();
        api->Schedule(ScaledComputePs(Op(r, i), opt),
                      [this, r, i, lane]()
                      {
                          lanes[r][lane].busy = false;
                          Done(r, i);
                          RunLane(r, lane);
                      });
    }

    void Done(uint32_t r, uint32_t i)
    {
        OpState& s = ops[r][i];
        if (s.endPs >= 0)
        {
            return;
        }
        s.endPs = api->NowPs();
        for (const auto& [d, lag] : dependents[r][i])
        {
            OpState& ds = ops[r][d];
            ds.readyAt = std::max(ds.readyAt, s.endPs + lag);
            if (--ds.pending == 0)
            {
                MakeReady(r, d);
            }
        }
    }

    ReplayRun Result() const;

    const ImportedTrace& trace;
    ReplayOptions opt;
    CollectiveApi* api = nullptr;
    std::vector<std::vector<OpState>> ops;
    std::vector<std::vector<std::vector<std::pair<uint32_t, int64_t>>>> dependents;
    std::vector<std::map<uint32_t, Lane>> lanes;
    std::map<std::string, Coll> colls;
    std::map<std::tuple<uint32_t, uint32_t, int64_t>, Channel> channels;
};

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

TraceReplayer::TraceReplayer(const ImportedTrace& trace, const ReplayOptions& opt)
    : m_state(std::make_unique<State>(trace, opt))
{
}

TraceReplayer::~TraceReplayer() = default;

void
TraceReplayer::Start(CollectiveApi& api)
{
    m_state->Begin(api);
}

ReplayRun
TraceReplayer::Finish() const
{
    return m_state->Result();
}

ReplayRun
ReplayTrace(const ImportedTrace& trace,
            const ReplayOptions& opt,
            CollectiveApi& api,
            const std::function<void()>& runEventLoop)
{
    TraceReplayer r(trace, opt);
    r.Start(api);
    runEventLoop();
    return r.Finish();
}

} // namespace fabricsim
