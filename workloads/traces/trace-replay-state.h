/*
 * The replay engine's state (TraceReplayer::State), shared by its parts: the replay itself
 * (trace-replay.cc), its outcome (trace-replay-result.cc) and the horizon it gives the
 * Collective API (trace-replay-horizon.cc). Internal to fabricsim-traces.
 */
#ifndef FABRICSIM_TRACES_TRACE_REPLAY_STATE_H
#define FABRICSIM_TRACES_TRACE_REPLAY_STATE_H

#include "input-error.h"
#include "trace-replay.h"

#include <algorithm>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace fabricsim
{

struct TraceReplayer::State : public CollectiveHorizon
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
        frontier.resize(n);
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
        // The memo (when the API has one) replays a collective only while this replay can
        // tell that its members put nothing else on their links (QuietUntilPs).
        a.SetHorizon(this);
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
        frontier[r].insert(i);
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
        starting = &c.arrived;
        api->Start(
            req, [this, who](uint32_t gi) { Done(who.at(gi).first, who.at(gi).second); }, []() {});
        starting = nullptr;
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
        frontier[r].erase(i);
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

    /// Whether \p op of rank \p r, run, puts traffic of its own on the fabric.
    bool PostsTraffic(uint32_t r, const TraceOp& op) const
    {
        if (!Simulated(op))
        {
            return false;
        }
        if (op.kind == TraceOpKind::kSend)
        {
            return op.peer != r;
        }
        return op.kind == TraceOpKind::kCollective
               && (op.groupRanks.empty() ? ops.size() : op.groupRanks.size()) > 1;
    }

    /// CollectiveHorizon, asked inside the Start of the collective whose members are in
    /// `starting` (trace-replay-horizon.cc).
    int64_t QuietUntilPs(uint32_t rank, int64_t donePs) const override;

    const ImportedTrace& trace;
    ReplayOptions opt;
    CollectiveApi* api = nullptr;
    std::vector<std::vector<OpState>> ops;
    std::vector<std::vector<std::vector<std::pair<uint32_t, int64_t>>>> dependents;
    std::vector<std::map<uint32_t, Lane>> lanes;
    std::map<std::string, Coll> colls;
    std::map<std::tuple<uint32_t, uint32_t, int64_t>, Channel> channels;
    /// Per rank: ops with every dependency met that have not ended (scheduled, ready, running).
    std::vector<std::set<uint32_t>> frontier;
    /// The members (rank -> op) of the collective being started, during its Start.
    const std::map<uint32_t, uint32_t>* starting = nullptr;
};

} // namespace fabricsim

#endif
