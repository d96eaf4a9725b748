/*
 * The horizon a trace replay gives the Collective API (CollectiveHorizon): the earliest time a
 * rank could put traffic of its own on the fabric other than the collective now starting. The
 * replay knows every op's dependencies and compute time, so it bounds that time from below:
 * only compute and waits lie between the rank's part of the collective (or whatever it is
 * running) and its next send or collective. Traffic of other ranks to this one is theirs: the
 * memo asks every member, and replays only on a part of the fabric no one else borders.
 */
#include "trace-replay-state.h"

#include <climits>

namespace fabricsim
{

int64_t
TraceReplayer::State::QuietUntilPs(uint32_t rank, int64_t donePs) const
{
    constexpr int64_t kCannotTell = INT64_MIN;
    if (!starting || rank >= ops.size())
    {
        return kCannotTell;
    }
    auto own = starting->find(rank);
    if (own == starting->end())
    {
        return kCannotTell;
    }
    const int64_t now = api->NowPs();
    int64_t quiet = INT64_MAX;
    // Lower bounds on when ops become ready, propagated forward from the ops that are ready
    // (or running) through compute and waits. An op with a dependency that posts traffic is
    // never reached: it cannot be ready before that dependency, whose bound already counts.
    std::map<uint32_t, int64_t> bound;
    std::map<uint32_t, uint32_t> left;
    std::vector<std::pair<uint32_t, int64_t>> todo;
    for (uint32_t i : frontier[rank])
    {
        const OpState& s = ops[rank][i];
        todo.emplace_back(i, s.readyPs >= 0 ? s.readyPs : std::max(s.readyAt, now));
    }
    while (!todo.empty())
    {
        const auto [i, ready] = todo.back();
        todo.pop_back();
        const OpState& s = ops[rank][i];
        const TraceOp& op = Op(rank, i);
        const int64_t from = s.startPs >= 0 ? s.startPs : std::max(ready, now);
        int64_t end = 0;
        if (i == own->second)
        {
            end = donePs;
        }
        else if (PostsTraffic(rank, op))
        {
            quiet = std::min(quiet, std::max(ready, now));
            continue;
        }
        else if (op.kind == TraceOpKind::kCompute)
        {
            end = from + ScaledComputePs(op, opt); // a busy lane only delays it
        }
        else if (!Simulated(op))
        {
            end = from + op.durationPs; // communication taken as recorded
        }
        else
        {
            end = from; // a receive (its sender is another rank), a group of one
        }
        for (const auto& [d, lag] : dependents[rank][i])
        {
            auto [it, fresh] = left.try_emplace(d, ops[rank][d].pending);
            int64_t& b = bound[d];
            if (fresh)
            {
                b = ops[rank][d].readyAt; // the dependencies that have ended
            }
            b = std::max(b, end + lag);
            if (--it->second == 0)
            {
                todo.emplace_back(d, b);
            }
        }
    }
    return quiet;
}

} // namespace fabricsim
