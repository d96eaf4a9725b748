/*
 * Direct algorithms (every pair of ranks talks at once, one threadblock per peer and channel:
 * what an NVSwitch or a full-bisection fabric favours) and pairwise alltoall (round i: send to
 * r + i, receive from r - i, one peer at a time).
 */
#include "generator-algorithms.h"

#include <stdexcept>

namespace fabricsim
{
namespace gen
{

namespace
{

/// Calls \p f(a, b, tbA, tbB) for every pair a < b on \p chan.
template <typename F>
void
ForPairs(ScheduleBuilder& b, int chan, F f)
{
    const int n = b.Ranks();
    for (int x = 0; x < n; ++x)
    {
        for (int y = x + 1; y < n; ++y)
        {
            f(x, y, b.Tb(x, y, y, chan), b.Tb(y, x, x, chan));
        }
    }
}

Piece
One(Loc src, Loc dst, Loc red = Loc{})
{
    return Piece{src, dst, red, 1};
}

/// Every rank sends block g of its input to rank g, which reduces the contributions into
/// \p result (one after another, in pair order).
void
DirectReduceScatter(ScheduleBuilder& b, int chan, const LocOf& block, const Loc& result)
{
    const int n = b.Ranks();
    std::vector<Loc> acc(n);
    for (int r = 0; r < n; ++r)
    {
        acc[r] = block(r);
    }
    ForPairs(b,
             chan,
             [&](int x, int y, int tx, int ty)
             {
                 b.Exchange(x,
                            tx,
                            {One(block(y), result, acc[y])},
                            y,
                            ty,
                            {One(block(x), result, acc[x])},
                            StepOp::kRecvReduceCopy);
                 acc[x] = acc[y] = result;
             });
}

} // namespace

Schedule
GenerateDirect(CollectiveKind kind, int n, const GeneratorOptions& opt)
{
    const Split split = SplitOf(opt);
    const int units = split.Units();
    ScheduleBuilder b(kind, n, n * units, split.m_channels, opt, ScheduleName("direct", kind));
    for (int u = 0; u < units; ++u)
    {
        const int chan = split.Channel(u);
        const LocOf in = [units, u](int g)
        {
            return In(g * units + u);
        };
        const LocOf out = [units, u](int g)
        {
            return Out(g * units + u);
        };
        switch (kind)
        {
        case CollectiveKind::kAllToAll:
            for (int r = 0; r < n; ++r)
            {
                b.Copy(r, b.Tb(r, -1, -1, chan), in(r), out(r));
            }
            ForPairs(
                b,
                chan,
                [&](int x, int y, int tx, int ty) {
                    b.Exchange(
                        x, tx, {One(in(y), out(x))}, y, ty, {One(in(x), out(y))}, StepOp::kRecv);
                });
            break;
        case CollectiveKind::kAllGather:
            for (int r = 0; r < n; ++r)
            {
                b.Copy(r, b.Tb(r, -1, -1, chan), In(u), out(r));
            }
            ForPairs(
                b,
                chan,
                [&](int x, int y, int tx, int ty) {
                    b.Exchange(
                        x, tx, {One(In(u), out(x))}, y, ty, {One(In(u), out(y))}, StepOp::kRecv);
                });
            break;
        case CollectiveKind::kReduceScatter:
            DirectReduceScatter(b, chan, in, Out(u));
            break;
        case CollectiveKind::kAllReduce:
        {
            // Two-shot: reduce-scatter into the output, then every rank sends its block to all.
            const LocOf inBlock = [n, u](int g)
            {
                return In(u * n + g);
            };
            const LocOf outBlock = [n, u](int g)
            {
                return Out(u * n + g);
            };
            std::vector<Loc> acc(n);
            for (int r = 0; r < n; ++r)
            {
                acc[r] = inBlock(r);
            }
            ForPairs(b,
                     chan,
                     [&](int x, int y, int tx, int ty)
                     {
                         b.Exchange(x,
                                    tx,
                                    {One(inBlock(y), outBlock(y), acc[y])},
                                    y,
                                    ty,
                                    {One(inBlock(x), outBlock(x), acc[x])},
                                    StepOp::kRecvReduceCopy);
                         acc[x] = outBlock(x);
                         acc[y] = outBlock(y);
                     });
            ForPairs(b,
                     chan,
                     [&](int x, int y, int tx, int ty)
                     {
                         b.Exchange(x,
                                    tx,
                                    {One(outBlock(x), outBlock(x))},
                                    y,
                                    ty,
                                    {One(outBlock(y), outBlock(y))},
                                    StepOp::kRecv);
                     });
            break;
        }
        default:
            throw std::logic_error("direct: unsupported collective " + ToString(kind));
        }
    }
    return b.Finish();
}

Schedule
GeneratePairwise(CollectiveKind kind, int n, const GeneratorOptions& opt)
{
    if (kind != CollectiveKind::kAllToAll)
    {
        throw std::logic_error("pairwise: unsupported collective " + ToString(kind));
    }
    const Split split = SplitOf(opt);
    const int units = split.Units();
    // Out of place only: round i overwrites o[r - i], which in place is the input block that
    // round n - i still has to send.
    ScheduleBuilder b(
        kind, n, n * units, split.m_channels, opt, ScheduleName("pairwise", kind), false);
    for (int c = 0; c < split.m_channels; ++c)
    {
        for (int r = 0; r < n; ++r)
        {
            for (int q = 0; q < split.m_pieces; ++q)
            {
                const int u = c * split.m_pieces + q;
                b.Copy(r, b.Tb(r, -1, -1, c), In(r * units + u), Out(r * units + u));
            }
        }
        std::vector<int> previous(n, -1);
        for (int i = 1; i < n; ++i)
        {
            std::vector<int> tbs(n);
            for (int r = 0; r < n; ++r)
            {
                tbs[r] = b.Tb(r, Mod(r + i, n), Mod(r - i, n), c);
            }
            for (int q = 0; q < split.m_pieces; ++q)
            {
                const int u = c * split.m_pieces + q;
                for (int r = 0; r < n; ++r)
                {
                    // Round i starts once round i - 1 has received everything.
                    std::vector<Dependency> after;
                    if (q == 0 && previous[r] >= 0)
                    {
                        after.push_back(Dependency{previous[r], b.LastStep(r, previous[r])});
                    }
                    b.Add(r, tbs[r], StepOp::kSend, In(Mod(r + i, n) * units + u), Loc{}, 1, after);
                }
                for (int r = 0; r < n; ++r)
                {
                    b.Recv(r, tbs[r], Out(Mod(r - i, n) * units + u));
                }
            }
            previous = tbs;
        }
    }
    return b.Finish();
}

} // namespace gen
} // namespace fabricsim
