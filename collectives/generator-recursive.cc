/*
 * Recursive doubling (allreduce: exchange the whole vector with partner r ^ 2^s; allgather:
 * exchange doubling windows) and recursive halving-doubling (Rabenseifner: reduce-scatter by
 * halving windows, then allgather by doubling them back).
 *
 * Rank counts that are not powers of two use the standard fold: with m the largest power of
 * two <= n and e = n - m, each even rank r < 2e hands its data to r + 1 first, sits out the
 * power-of-two part, and gets its result from r + 1 at the end. Active rank i of the m ranks
 * owns the blocks of the original ranks it stands for, a contiguous range, so windows stay
 * contiguous. One threadblock per (partner, channel); the fold uses one-way threadblocks so
 * pipeline pieces flow through it.
 */
#include "generator-algorithms.h"

#include <stdexcept>

namespace fabricsim
{
namespace gen
{

namespace
{

/// The fold of n ranks onto the largest power of two m <= n.
struct Fold
{
    int m_n = 0;
    int m_m = 1;
    int m_extra = 0;
    int m_rounds = 0; ///< log2(m)

    explicit Fold(int n)
        : m_n(n)
    {
        while (m_m * 2 <= n)
        {
            m_m *= 2;
            ++m_rounds;
        }
        m_extra = n - m_m;
    }

    /// True for the ranks that sit out the power-of-two part.
    bool Resting(int r) const
    {
        return r < 2 * m_extra && r % 2 == 0;
    }

    /// Active rank standing for resting rank \p r.
    int Helper(int r) const
    {
        return r + 1;
    }

    /// Index among the m active ranks of active rank \p r.
    int Index(int r) const
    {
        return r < 2 * m_extra ? r / 2 : r - m_extra;
    }

    /// Rank of active index \p i.
    int Rank(int i) const
    {
        return i < m_extra ? 2 * i + 1 : i + m_extra;
    }

    /// First block owned by active index \p i (Start(m) = n).
    int Start(int i) const
    {
        return i < m_extra ? 2 * i : i + m_extra;
    }
};

/// Pieces for blocks [first, last): chunk of block g read at src(g) and stored at dst(g) (and
/// reduced with red(g) when given).
std::vector<Piece>
Blocks(int first, int last, const LocOf& src, const LocOf& dst, const LocOf& red = nullptr)
{
    std::vector<Piece> pieces;
    for (int g = first; g < last; ++g)
    {
        pieces.push_back(Piece{src(g), dst(g), red ? red(g) : Loc{}, 1});
    }
    return Coalesce(pieces, static_cast<bool>(red));
}

/// Every block except \p skip, as pieces from src to dst.
std::vector<Piece>
AllBut(int n, int skip, const LocOf& src, const LocOf& dst)
{
    std::vector<Piece> pieces = Blocks(0, skip, src, dst);
    for (const Piece& p : Blocks(skip + 1, n, src, dst))
    {
        pieces.push_back(p);
    }
    return pieces;
}

/// Recursive doubling allreduce of chunk \p chunk.
void
DoublingAllReduce(ScheduleBuilder& b, const Fold& f, int chan, int chunk)
{
    std::vector<Loc> acc(f.m_n, In(chunk));
    for (int r = 0; r < f.m_n; ++r)
    {
        if (f.Resting(r))
        {
            const int h = f.Helper(r);
            b.Transfer(r,
                       b.Tb(r, h, -1, chan),
                       h,
                       b.Tb(h, -1, r, chan),
                       {Piece{In(chunk), Out(chunk), In(chunk), 1}},
                       StepOp::kRecvReduceCopy);
            acc[h] = Out(chunk);
        }
    }
    for (int s = 0; s < f.m_rounds; ++s)
    {
        for (int i = 0; i < f.m_m; ++i)
        {
            const int j = i ^ (1 << s);
            if (i > j)
            {
                continue;
            }
            const int x = f.Rank(i);
            const int y = f.Rank(j);
            b.Exchange(x,
                       b.Tb(x, y, y, chan),
                       {Piece{acc[x], Out(chunk), acc[y], 1}},
                       y,
                       b.Tb(y, x, x, chan),
                       {Piece{acc[y], Out(chunk), acc[x], 1}},
                       StepOp::kRecvReduceCopy);
            acc[x] = acc[y] = Out(chunk);
        }
    }
    for (int r = 0; r < f.m_n; ++r)
    {
        if (f.Resting(r))
        {
            const int h = f.Helper(r);
            b.Transfer(h,
                       b.Tb(h, r, -1, chan),
                       r,
                       b.Tb(r, -1, h, chan),
                       {Piece{Out(chunk), Out(chunk), Loc{}, 1}},
                       StepOp::kRecv);
        }
    }
}

/**
 * Recursive doubling allgather of unit \p u (block g at output g * units + u): windows of
 * active indices double each round, starting from distance 1.
 */
void
DoublingAllGather(ScheduleBuilder& b, const Fold& f, int chan, int units, int u)
{
    const LocOf out = [units, u](int g)
    {
        return Out(g * units + u);
    };
    for (int r = 0; r < f.m_n; ++r)
    {
        b.Copy(r, b.Tb(r, -1, -1, chan), In(u), out(r));
    }
    for (int r = 0; r < f.m_n; ++r)
    {
        if (f.Resting(r))
        {
            const int h = f.Helper(r);
            b.Transfer(r,
                       b.Tb(r, h, -1, chan),
                       h,
                       b.Tb(h, -1, r, chan),
                       {Piece{In(u), out(r), Loc{}, 1}},
                       StepOp::kRecv);
        }
    }
    for (int s = 0; s < f.m_rounds; ++s)
    {
        const int width = 1 << s;
        for (int i = 0; i < f.m_m; ++i)
        {
            const int j = i ^ width;
            if (i > j)
            {
                continue;
            }
            const int x = f.Rank(i);
            const int y = f.Rank(j);
            const int lo = (i / width) * width; // x's window; y's is the next one
            b.Exchange(x,
                       b.Tb(x, y, y, chan),
                       Blocks(f.Start(lo), f.Start(lo + width), out, out),
                       y,
                       b.Tb(y, x, x, chan),
                       Blocks(f.Start(lo + width), f.Start(lo + 2 * width), out, out),
                       StepOp::kRecv);
        }
    }
    for (int r = 0; r < f.m_n; ++r)
    {
        if (f.Resting(r))
        {
            const int h = f.Helper(r);
            b.Transfer(h,
                       b.Tb(h, r, -1, chan),
                       r,
                       b.Tb(r, -1, h, chan),
                       AllBut(f.m_n, r, out, out),
                       StepOp::kRecv);
        }
    }
}

/**
 * Rabenseifner's reduce-scatter by recursive halving: each round a pair splits its common
 * window of active indices, each keeps the half holding itself and reduces the partner's
 * contribution to it. acc[r][g] is where rank r's running sum of block g lives;
 * \p store(r, g, last) is where rank r stores a received sum of block g (last: in the final
 * round, when the sum is complete).
 */
void
HalvingReduceScatter(ScheduleBuilder& b,
                     const Fold& f,
                     int chan,
                     std::vector<std::vector<Loc>>& acc,
                     const std::function<Loc(int, int, bool)>& store)
{
    const int n = f.m_n;
    for (int r = 0; r < n; ++r)
    {
        if (f.Resting(r))
        {
            const int h = f.Helper(r);
            std::vector<Piece> pieces;
            for (int g = 0; g < n; ++g)
            {
                pieces.push_back(Piece{acc[r][g], store(h, g, f.m_rounds == 0), acc[h][g], 1});
                acc[h][g] = pieces.back().m_dst;
            }
            b.Transfer(r,
                       b.Tb(r, h, -1, chan),
                       h,
                       b.Tb(h, -1, r, chan),
                       Coalesce(pieces, true),
                       StepOp::kRecvReduceCopy);
        }
    }
    std::vector<int> lo(f.m_m, 0);
    std::vector<int> hi(f.m_m, f.m_m);
    for (int s = 0; s < f.m_rounds; ++s)
    {
        const bool last = s + 1 == f.m_rounds;
        const int mask = f.m_m >> (s + 1);
        for (int i = 0; i < f.m_m; ++i)
        {
            const int j = i ^ mask;
            if (i > j)
            {
                continue;
            }
            const int x = f.Rank(i);
            const int y = f.Rank(j);
            const int mid = lo[i] + (hi[i] - lo[i]) / 2;
            // x keeps [lo, mid), y keeps [mid, hi).
            auto half = [&](int from, int to, int first, int end)
            {
                std::vector<Piece> pieces;
                for (int g = f.Start(first); g < f.Start(end); ++g)
                {
                    pieces.push_back(Piece{acc[from][g], store(to, g, last), acc[to][g], 1});
                }
                return Coalesce(pieces, true);
            };
            const auto toY = half(x, y, mid, hi[i]);
            const auto toX = half(y, x, lo[i], mid);
            b.Exchange(
                x, b.Tb(x, y, y, chan), toY, y, b.Tb(y, x, x, chan), toX, StepOp::kRecvReduceCopy);
            for (const auto& [who, first, end] :
                 {std::make_tuple(x, lo[i], mid), std::make_tuple(y, mid, hi[i])})
            {
                for (int g = f.Start(first); g < f.Start(end); ++g)
                {
                    acc[who][g] = store(who, g, last);
                }
            }
            hi[i] = mid;
            lo[j] = mid;
        }
    }
}

/// Allgather half of Rabenseifner: windows double back from each active index's own blocks.
void
DoublingExchange(ScheduleBuilder& b, const Fold& f, int chan, const LocOf& at)
{
    for (int s = f.m_rounds - 1; s >= 0; --s)
    {
        const int width = f.m_m >> (s + 1);
        for (int i = 0; i < f.m_m; ++i)
        {
            const int j = i ^ width;
            if (i > j)
            {
                continue;
            }
            const int x = f.Rank(i);
            const int y = f.Rank(j);
            const int lo = (i / width) * width;
            b.Exchange(x,
                       b.Tb(x, y, y, chan),
                       Blocks(f.Start(lo), f.Start(lo + width), at, at),
                       y,
                       b.Tb(y, x, x, chan),
                       Blocks(f.Start(lo + width), f.Start(lo + 2 * width), at, at),
                       StepOp::kRecv);
        }
    }
}

void
HalvingDoublingAllReduce(ScheduleBuilder& b, const Fold& f, int chan, int u)
{
    const int n = f.m_n;
    const LocOf out = [n, u](int g)
    {
        return Out(u * n + g);
    };
    std::vector<std::vector<Loc>> acc(n);
    for (int r = 0; r < n; ++r)
    {
        for (int g = 0; g < n; ++g)
        {
            acc[r].push_back(In(u * n + g));
        }
    }
    HalvingReduceScatter(b, f, chan, acc, [&](int, int g, bool) { return out(g); });
    DoublingExchange(b, f, chan, out);
    for (int r = 0; r < n; ++r)
    {
        if (f.Resting(r))
        {
            const int h = f.Helper(r);
            b.Transfer(h,
                       b.Tb(h, r, -1, chan),
                       r,
                       b.Tb(r, -1, h, chan),
                       Blocks(0, n, out, out),
                       StepOp::kRecv);
        }
    }
}

void
HalvingReduceScatterUnit(ScheduleBuilder& b, const Fold& f, int chan, int units, int u)
{
    const int n = f.m_n;
    std::vector<std::vector<Loc>> acc(n);
    for (int r = 0; r < n; ++r)
    {
        for (int g = 0; g < n; ++g)
        {
            acc[r].push_back(In(g * units + u));
        }
    }
    // Partial sums wait in scratch; a rank's own block lands in its output in the last round.
    HalvingReduceScatter(b,
                         f,
                         chan,
                         acc,
                         [&](int r, int g, bool last)
                         { return last && g == r ? Out(u) : Scr(g * units + u); });
    for (int r = 0; r < n; ++r)
    {
        if (f.Resting(r))
        {
            const int h = f.Helper(r);
            b.Transfer(h,
                       b.Tb(h, r, -1, chan),
                       r,
                       b.Tb(r, -1, h, chan),
                       {Piece{acc[h][r], Out(u), Loc{}, 1}},
                       StepOp::kRecv);
        }
    }
}

} // namespace

Schedule
GenerateRecursiveDoubling(CollectiveKind kind, int n, const GeneratorOptions& opt)
{
    const Split split = SplitOf(opt);
    const int units = split.Units();
    const Fold f(n);
    if (kind == CollectiveKind::kAllReduce)
    {
        ScheduleBuilder b(kind, n, units, split.m_channels, opt, ScheduleName("rd", kind));
        for (int u = 0; u < units; ++u)
        {
            DoublingAllReduce(b, f, split.Channel(u), u);
        }
        return b.Finish();
    }
    if (kind == CollectiveKind::kAllGather)
    {
        ScheduleBuilder b(kind, n, n * units, split.m_channels, opt, ScheduleName("rd", kind));
        for (int u = 0; u < units; ++u)
        {
            DoublingAllGather(b, f, split.Channel(u), units, u);
        }
        return b.Finish();
    }
    throw std::logic_error("rd: unsupported collective " + ToString(kind));
}

Schedule
GenerateHalvingDoubling(CollectiveKind kind, int n, const GeneratorOptions& opt)
{
    const Split split = SplitOf(opt);
    const int units = split.Units();
    const Fold f(n);
    ScheduleBuilder b(kind, n, n * units, split.m_channels, opt, ScheduleName("rhd", kind));
    for (int u = 0; u < units; ++u)
    {
        const int chan = split.Channel(u);
        switch (kind)
        {
        case CollectiveKind::kAllReduce:
            HalvingDoublingAllReduce(b, f, chan, u);
            break;
        case CollectiveKind::kReduceScatter:
            HalvingReduceScatterUnit(b, f, chan, units, u);
            break;
        case CollectiveKind::kAllGather:
            // The allgather half of Rabenseifner is recursive doubling.
            DoublingAllGather(b, f, chan, units, u);
            break;
        default:
            throw std::logic_error("rhd: unsupported collective " + ToString(kind));
        }
    }
    return b.Finish();
}

} // namespace gen
} // namespace fabricsim
