/*
 * Ring algorithms: NCCL's ring for allreduce / allgather / reduce-scatter, a relaying ring for
 * alltoall, and pipelined chains for broadcast and reduce. One threadblock per rank and channel
 * (send to the next rank, receive from the previous one).
 */
#include "generator-algorithms.h"

#include <stdexcept>

namespace fabricsim
{
namespace gen
{

namespace
{

/// Threadblock of every ring position on \p channel.
std::vector<int>
RingTbs(ScheduleBuilder& b, const std::vector<int>& ring, int channel)
{
    const int m = static_cast<int>(ring.size());
    std::vector<int> tbs(m);
    for (int i = 0; i < m; ++i)
    {
        tbs[i] = b.Tb(ring[i], ring[Mod(i + 1, m)], ring[Mod(i - 1, m)], channel);
    }
    return tbs;
}

/// Reduce-scatter rounds 0..m-2: position i sends block i-s-1, reducing what it received.
void
ReduceRounds(ScheduleBuilder& b,
             const std::vector<int>& ring,
             const std::vector<int>& tbs,
             int count,
             const LocOf& contrib)
{
    const int m = static_cast<int>(ring.size());
    for (int s = 0; s + 1 < m; ++s)
    {
        for (int i = 0; i < m; ++i)
        {
            const int g = Mod(i - s - 1, m);
            if (s == 0)
            {
                b.Send(ring[i], tbs[i], contrib(g), count);
            }
            else
            {
                b.Add(ring[i], tbs[i], StepOp::kRecvReduceSend, contrib(g), Loc{}, count);
            }
        }
    }
}

/// Allgather rounds 1..m-1 after every position sent its own block in round 0.
void
ForwardRounds(ScheduleBuilder& b,
              const std::vector<int>& ring,
              const std::vector<int>& tbs,
              int count,
              const LocOf& dst)
{
    const int m = static_cast<int>(ring.size());
    for (int s = 1; s + 1 < m; ++s)
    {
        for (int i = 0; i < m; ++i)
        {
            b.Add(ring[i], tbs[i], StepOp::kRecvCopySend, Loc{}, dst(Mod(i - s, m)), count);
        }
    }
    for (int i = 0; i < m; ++i)
    {
        b.Recv(ring[i], tbs[i], dst(Mod(i + 1, m)), count);
    }
}

/// Ring of all ranks in rank order.
std::vector<int>
FullRing(int ranks)
{
    std::vector<int> ring(ranks);
    for (int r = 0; r < ranks; ++r)
    {
        ring[r] = r;
    }
    return ring;
}

/**
 * Alltoall on a ring: in round h every rank passes on the blocks of the rank h-1 hops back
 * that still have to travel, keeps the one addressed to itself, and parks the others in
 * scratch until the next round (two alternating areas). Sends and receives alternate. Each
 * batch goes farthest destination first, so in place a rank sends its input block for r - 1
 * before the block from r - 1 lands on top of it.
 */
void
RingAllToAll(ScheduleBuilder& b, int n, const Split& split)
{
    const int units = split.Units();
    for (int u = 0; u < units; ++u)
    {
        const std::vector<int> tbs = RingTbs(b, FullRing(n), split.Channel(u));
        std::vector<std::array<int, 2>> area(n);
        for (int r = 0; r < n; ++r)
        {
            b.Copy(r, tbs[r], In(r * units + u), Out(r * units + u));
            if (n > 2)
            {
                area[r] = {b.AllocScratch(r, n - 2), b.AllocScratch(r, n - 2)};
            }
        }
        for (int h = 1; h < n; ++h)
        {
            // Block idx of round h is addressed n - 1 - idx hops past its origin.
            const int count = n - h;
            for (int idx = 0; idx < count; ++idx)
            {
                for (int r = 0; r < n; ++r)
                {
                    const Loc src = h == 1 ? In(Mod(r - 1 - idx, n) * units + u)
                                           : Scr(area[r][(h - 1) % 2] + idx);
                    b.Send(r, tbs[r], src);
                }
                for (int r = 0; r < n; ++r)
                {
                    const Loc dst = idx + 1 == count ? Out(Mod(r - h, n) * units + u)
                                                     : Scr(area[r][h % 2] + idx);
                    b.Recv(r, tbs[r], dst);
                }
            }
        }
    }
}

/// Pipelined chain root -> root+1 -> ... for broadcast.
void
ChainBroadcast(ScheduleBuilder& b, int n, int root, const Split& split)
{
    for (int u = 0; u < split.Units(); ++u)
    {
        const int chan = split.Channel(u);
        for (int i = 0; i < n; ++i)
        {
            const int r = Mod(root + i, n);
            const int next = i + 1 < n ? Mod(r + 1, n) : -1;
            const int prev = i > 0 ? Mod(r - 1, n) : -1;
            const int tb = b.Tb(r, next, prev, chan);
            if (i == 0)
            {
                b.Send(r, tb, In(u));
                b.Copy(r, tb, In(u), Out(u));
            }
            else if (next >= 0)
            {
                b.Add(r, tb, StepOp::kRecvCopySend, Loc{}, Out(u), 1);
            }
            else
            {
                b.Recv(r, tb, Out(u));
            }
        }
    }
}

/// Pipelined chain root+1 -> ... -> root for reduce.
void
ChainReduce(ScheduleBuilder& b, int n, int root, const Split& split)
{
    for (int u = 0; u < split.Units(); ++u)
    {
        const int chan = split.Channel(u);
        for (int i = 0; i < n; ++i)
        {
            const int r = Mod(root + 1 + i, n);
            const int next = i + 1 < n ? Mod(r + 1, n) : -1;
            const int prev = i > 0 ? Mod(r - 1, n) : -1;
            const int tb = b.Tb(r, next, prev, chan);
            if (i == 0)
            {
                b.Send(r, tb, In(u));
            }
            else if (next >= 0)
            {
                b.Add(r, tb, StepOp::kRecvReduceSend, In(u), Loc{}, 1);
            }
            else
            {
                b.Add(r, tb, StepOp::kRecvReduceCopy, In(u), Out(u), 1);
            }
        }
    }
}

} // namespace

void
RingReduceScatter(ScheduleBuilder& b,
                  const std::vector<int>& ring,
                  int channel,
                  int count,
                  const LocOf& contrib,
                  const LocOf& result)
{
    const int m = static_cast<int>(ring.size());
    if (m == 1)
    {
        b.Copy(ring[0], b.Tb(ring[0], -1, -1, channel), contrib(0), result(0), count);
        return;
    }
    const std::vector<int> tbs = RingTbs(b, ring, channel);
    ReduceRounds(b, ring, tbs, count, contrib);
    for (int i = 0; i < m; ++i)
    {
        b.Add(ring[i], tbs[i], StepOp::kRecvReduceCopy, contrib(i), result(i), count);
    }
}

void
RingAllGather(ScheduleBuilder& b,
              const std::vector<int>& ring,
              int channel,
              int count,
              const LocOf& own,
              const LocOf& dst)
{
    const int m = static_cast<int>(ring.size());
    if (m == 1)
    {
        b.Copy(ring[0], b.Tb(ring[0], -1, -1, channel), own(0), dst(0), count);
        return;
    }
    const std::vector<int> tbs = RingTbs(b, ring, channel);
    for (int i = 0; i < m; ++i)
    {
        b.Send(ring[i], tbs[i], own(i), count);
        b.Copy(ring[i], tbs[i], own(i), dst(i), count);
    }
    ForwardRounds(b, ring, tbs, count, dst);
}

void
RingAllReduce(ScheduleBuilder& b,
              const std::vector<int>& ring,
              int channel,
              int count,
              const LocOf& contrib,
              const LocOf& result)
{
    const int m = static_cast<int>(ring.size());
    if (m == 1)
    {
        b.Copy(ring[0], b.Tb(ring[0], -1, -1, channel), contrib(0), result(0), count);
        return;
    }
    const std::vector<int> tbs = RingTbs(b, ring, channel);
    ReduceRounds(b, ring, tbs, count, contrib);
    // The turn: the last reduction stores the block and starts its allgather.
    for (int i = 0; i < m; ++i)
    {
        b.Add(ring[i], tbs[i], StepOp::kRecvReduceCopySend, contrib(i), result(i), count);
    }
    ForwardRounds(b, ring, tbs, count, result);
}

Schedule
GenerateRing(CollectiveKind kind, int n, const GeneratorOptions& opt)
{
    const Split split = SplitOf(opt);
    const int units = split.Units();
    const std::vector<int> ring = FullRing(n);
    const bool rooted = kind == CollectiveKind::kBroadcast || kind == CollectiveKind::kReduce;
    ScheduleBuilder b(
        kind, n, rooted ? units : n * units, split.m_channels, opt, ScheduleName("ring", kind));
    switch (kind)
    {
    case CollectiveKind::kAllReduce:
        // Unit-major layout: the n blocks of a unit are adjacent.
        for (int u = 0; u < units; ++u)
        {
            RingAllReduce(
                b,
                ring,
                split.Channel(u),
                1,
                [&](int g) { return In(u * n + g); },
                [&](int g) { return Out(u * n + g); });
        }
        break;
    case CollectiveKind::kAllGather:
        for (int u = 0; u < units; ++u)
        {
            RingAllGather(
                b,
                ring,
                split.Channel(u),
                1,
                [&](int) { return In(u); },
                [&](int g) { return Out(g * units + u); });
        }
        break;
    case CollectiveKind::kReduceScatter:
        for (int u = 0; u < units; ++u)
        {
            RingReduceScatter(
                b,
                ring,
                split.Channel(u),
                1,
                [&](int g) { return In(g * units + u); },
                [&](int) { return Out(u); });
        }
        break;
    case CollectiveKind::kAllToAll:
        RingAllToAll(b, n, split);
        break;
    case CollectiveKind::kBroadcast:
        ChainBroadcast(b, n, static_cast<int>(opt.root), split);
        break;
    case CollectiveKind::kReduce:
        ChainReduce(b, n, static_cast<int>(opt.root), split);
        break;
    case CollectiveKind::kCustom:
        throw std::logic_error("ring: custom collective");
    }
    return b.Finish();
}

} // namespace gen
} // namespace fabricsim
