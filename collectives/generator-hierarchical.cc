/*
 * Two-level hierarchical algorithms for hosts of L ranks (scale-up domains), numbered host-major:
 * rank = host * L + local. "Intra" phases run among the L ranks of a host, "rail" phases among
 * the H = n / L ranks with the same local index (one per host, the rank behind the same NIC
 * rail), so inter-host traffic stays rail-aligned.
 *
 *  - allreduce: intra ring reduce-scatter (local rank l gets its host's sum of shard l), rail
 *    ring allreduce of shard l, intra ring allgather.
 *  - allgather: rail ring allgather (each rank gets the blocks of its rail), then intra ring
 *    allgather of those. Reduce-scatter mirrors it: intra ring reduce-scatter, then rail ring.
 *  - alltoall: the PXN scheme. Rank (h, l) hands every block addressed to local index l' on
 *    any host to its local peer (h, l') (blocks for its own host land in their output at once),
 *    then the rail exchange moves each aggregate (h, l') -> (h', l') straight into place, so
 *    no intra-host distribution is left to do.
 *
 * Phases run one after another over all units, so the intra threadblocks can start the next
 * unit while the rail phase still works on the previous ones.
 */
#include "generator-algorithms.h"

#include <stdexcept>

namespace fabricsim
{
namespace gen
{

namespace
{

struct Layout
{
    int m_hosts;
    int m_local;

    int Rank(int host, int local) const
    {
        return host * m_local + local;
    }

    std::vector<int> HostRanks(int host) const
    {
        std::vector<int> ring;
        for (int l = 0; l < m_local; ++l)
        {
            ring.push_back(Rank(host, l));
        }
        return ring;
    }

    std::vector<int> RailRanks(int local) const
    {
        std::vector<int> ring;
        for (int h = 0; h < m_hosts; ++h)
        {
            ring.push_back(Rank(h, local));
        }
        return ring;
    }
};

void
HierarchicalAllReduce(ScheduleBuilder& b, const Layout& lay, const Split& split)
{
    const int n = lay.m_hosts * lay.m_local;
    const int units = split.Units();
    const int shard = lay.m_hosts; // chunks per local shard: one per host of the rail ring
    // Unit-major: unit u holds n chunks; shard l is [u*n + l*H, u*n + (l+1)*H).
    for (int u = 0; u < units; ++u)
    {
        for (int h = 0; h < lay.m_hosts; ++h)
        {
            RingReduceScatter(
                b,
                lay.HostRanks(h),
                split.Channel(u),
                shard,
                [&](int l) { return In(u * n + l * shard); },
                [&](int l) { return Out(u * n + l * shard); });
        }
    }
    for (int u = 0; u < units; ++u)
    {
        for (int l = 0; l < lay.m_local; ++l)
        {
            const LocOf at = [&](int h)
            {
                return Out(u * n + l * shard + h);
            };
            RingAllReduce(b, lay.RailRanks(l), split.Channel(u), 1, at, at);
        }
    }
    for (int u = 0; u < units; ++u)
    {
        for (int h = 0; h < lay.m_hosts; ++h)
        {
            const LocOf at = [&](int l)
            {
                return Out(u * n + l * shard);
            };
            RingAllGather(b, lay.HostRanks(h), split.Channel(u), shard, at, at);
        }
    }
}

void
HierarchicalAllGather(ScheduleBuilder& b, const Layout& lay, const Split& split)
{
    const int units = split.Units();
    for (int u = 0; u < units; ++u)
    {
        for (int l = 0; l < lay.m_local; ++l)
        {
            RingAllGather(
                b,
                lay.RailRanks(l),
                split.Channel(u),
                1,
                [&](int) { return In(u); },
                [&](int h) { return Out(lay.Rank(h, l) * units + u); });
        }
    }
    // Local rank l's blocks are strided over the output: one ring pass per host's block.
    for (int u = 0; u < units; ++u)
    {
        for (int h = 0; h < lay.m_hosts; ++h)
        {
            for (int from = 0; from < lay.m_hosts; ++from)
            {
                const LocOf at = [&](int l)
                {
                    return Out(lay.Rank(from, l) * units + u);
                };
                RingAllGather(b, lay.HostRanks(h), split.Channel(u), 1, at, at);
            }
        }
    }
}

void
HierarchicalReduceScatter(ScheduleBuilder& b, const Layout& lay, const Split& split)
{
    const int units = split.Units();
    const bool rail = lay.m_hosts > 1;
    // Host partial sums of the blocks of rail l wait in scratch[h * units + u] of local rank l.
    if (lay.m_local > 1)
    {
        for (int u = 0; u < units; ++u)
        {
            for (int h = 0; h < lay.m_hosts; ++h)
            {
                for (int to = 0; to < lay.m_hosts; ++to)
                {
                    RingReduceScatter(
                        b,
                        lay.HostRanks(h),
                        split.Channel(u),
                        1,
                        [&](int l) { return In(lay.Rank(to, l) * units + u); },
                        [&](int) { return rail ? Scr(to * units + u) : Out(u); });
                }
            }
        }
    }
    if (!rail)
    {
        return;
    }
    for (int u = 0; u < units; ++u)
    {
        for (int l = 0; l < lay.m_local; ++l)
        {
            RingReduceScatter(
                b,
                lay.RailRanks(l),
                split.Channel(u),
                1,
                [&](int h)
                { return lay.m_local > 1 ? Scr(h * units + u) : In(lay.Rank(h, l) * units + u); },
                [&](int) { return Out(u); });
        }
    }
}

void
HierarchicalAllToAll(ScheduleBuilder& b, const Layout& lay, const Split& split)
{
    const int units = split.Units();
    const int L = lay.m_local;
    const int H = lay.m_hosts;
    auto block = [units](int rank, int u)
    {
        return rank * units + u;
    };
    // Rank (h, l') stages the block from (h, l) for (h', l') at scratch[block((h', l), u)].
    for (int u = 0; u < units; ++u)
    {
        const int chan = split.Channel(u);
        for (int h = 0; h < H; ++h)
        {
            for (int l = 0; l < L; ++l)
            {
                const int r = lay.Rank(h, l);
                const int tb = b.Tb(r, -1, -1, chan);
                for (int h2 = 0; h2 < H; ++h2)
                {
                    const int dest = lay.Rank(h2, l);
                    const Loc to = h2 == h ? Out(block(r, u)) : Scr(block(dest, u));
                    b.Copy(r, tb, In(block(dest, u)), to);
                }
            }
            for (int l = 0; l < L; ++l)
            {
                for (int l2 = l + 1; l2 < L; ++l2)
                {
                    const int x = lay.Rank(h, l);
                    const int y = lay.Rank(h, l2);
                    auto pieces = [&](int from, int fromLocal, int toLocal)
                    {
                        std::vector<Piece> list;
                        for (int h2 = 0; h2 < H; ++h2)
                        {
                            const int dest = lay.Rank(h2, toLocal);
                            const Loc at = h2 == h ? Out(block(from, u))
                                                   : Scr(block(lay.Rank(h2, fromLocal), u));
                            list.push_back(Piece{In(block(dest, u)), at, Loc{}, 1});
                        }
                        return Coalesce(list, false);
                    };
                    b.Exchange(x,
                               b.Tb(x, y, y, chan),
                               pieces(x, l, l2),
                               y,
                               b.Tb(y, x, x, chan),
                               pieces(y, l2, l),
                               StepOp::kRecv);
                }
            }
        }
    }
    for (int u = 0; u < units; ++u)
    {
        const int chan = split.Channel(u);
        for (int l = 0; l < L; ++l)
        {
            for (int h = 0; h < H; ++h)
            {
                for (int h2 = h + 1; h2 < H; ++h2)
                {
                    const int x = lay.Rank(h, l);
                    const int y = lay.Rank(h2, l);
                    // x forwards what its host has for y: staged at block((h2, l2)).
                    auto pieces = [&](int fromHost, int toHost)
                    {
                        std::vector<Piece> list;
                        for (int l2 = 0; l2 < L; ++l2)
                        {
                            list.push_back(Piece{Scr(block(lay.Rank(toHost, l2), u)),
                                                 Out(block(lay.Rank(fromHost, l2), u)),
                                                 Loc{},
                                                 1});
                        }
                        return Coalesce(list, false);
                    };
                    b.Exchange(x,
                               b.Tb(x, y, y, chan),
                               pieces(h, h2),
                               y,
                               b.Tb(y, x, x, chan),
                               pieces(h2, h),
                               StepOp::kRecv);
                }
            }
        }
    }
}

} // namespace

Schedule
GenerateHierarchical(CollectiveKind kind, int n, const GeneratorOptions& opt)
{
    const Split split = SplitOf(opt);
    const Layout lay{n / opt.localSize, opt.localSize};
    ScheduleBuilder b(
        kind, n, n * split.Units(), split.m_channels, opt, ScheduleName("hierarchical", kind));
    switch (kind)
    {
    case CollectiveKind::kAllReduce:
        HierarchicalAllReduce(b, lay, split);
        break;
    case CollectiveKind::kAllGather:
        HierarchicalAllGather(b, lay, split);
        break;
    case CollectiveKind::kReduceScatter:
        HierarchicalReduceScatter(b, lay, split);
        break;
    case CollectiveKind::kAllToAll:
        HierarchicalAllToAll(b, lay, split);
        break;
    default:
        throw std::logic_error("hierarchical: unsupported collective " + ToString(kind));
    }
    return b.Finish();
}

} // namespace gen
} // namespace fabricsim
