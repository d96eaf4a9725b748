/*
 * Bruck's algorithms: ceil(log2 n) rounds, round k talks to ranks 2^k away, for any n.
 *
 * Alltoall: position i of rank r holds the block for rank r + i (the rotation). In round k the
 * positions with bit k set move to rank r + 2^k, packed into one scratch message and kept where
 * they land (the next pack reads them from there). At the end position i holds the block from
 * rank r - i, which the inverse rotation copies into output[r - i].
 *
 * Allgather: positions 0..2^k-1 of rank r (blocks r, r+1, ...) live contiguously in scratch;
 * round k receives rank r + 2^k's first positions right behind them. A final rotation copies
 * them into the output. The rotation has a threadblock of its own so the next pipeline piece
 * can start while it waits for the last round.
 */
#include "generator-algorithms.h"

#include <stdexcept>

namespace fabricsim
{
namespace gen
{

namespace
{

void
BruckAllToAll(ScheduleBuilder& b, int n, int units, int u, int chan)
{
    // where[r][i]: current place of position i on rank r.
    std::vector<std::vector<Loc>> where(n, std::vector<Loc>(n));
    for (int r = 0; r < n; ++r)
    {
        for (int i = 0; i < n; ++i)
        {
            where[r][i] = In(Mod(r + i, n) * units + u);
        }
    }
    for (int dist = 1; dist < n; dist *= 2)
    {
        std::vector<int> moving;
        for (int i = 0; i < n; ++i)
        {
            if (i & dist)
            {
                moving.push_back(i);
            }
        }
        const int count = static_cast<int>(moving.size());
        std::vector<int> tbs(n);
        for (int r = 0; r < n; ++r)
        {
            tbs[r] = b.Tb(r, Mod(r + dist, n), Mod(r - dist, n), chan);
            std::vector<Piece> pack;
            for (int i : moving)
            {
                pack.push_back(Piece{where[r][i], Loc{}, Loc{}, 1});
            }
            // Positions already adjacent need no packing.
            std::vector<Piece> runs = pack;
            for (size_t k = 0; k < runs.size(); ++k)
            {
                runs[k].m_dst = Scr(static_cast<int>(k));
            }
            runs = Coalesce(runs, false);
            Loc src = pack.front().m_src;
            if (runs.size() > 1)
            {
                const int base = b.AllocScratch(r, count);
                for (const Piece& p : runs)
                {
                    b.Copy(r, tbs[r], p.m_src, Scr(base + p.m_dst.m_off), p.m_count);
                }
                src = Scr(base);
            }
            b.Send(r, tbs[r], src, count);
        }
        for (int r = 0; r < n; ++r)
        {
            const int base = b.AllocScratch(r, count);
            b.Recv(r, tbs[r], Scr(base), count);
            for (int k = 0; k < count; ++k)
            {
                where[r][moving[k]] = Scr(base + k);
            }
        }
    }
    for (int r = 0; r < n; ++r)
    {
        std::vector<Piece> unpack;
        for (int g = 0; g < n; ++g)
        {
            unpack.push_back(Piece{where[r][Mod(r - g, n)], Out(g * units + u), Loc{}, 1});
        }
        const int tb = b.Tb(r, -1, -1, chan);
        for (const Piece& p : Coalesce(unpack, false))
        {
            b.Copy(r, tb, p.m_src, p.m_dst, p.m_count);
        }
    }
}

void
BruckAllGather(ScheduleBuilder& b, int n, int units, int u, int chan)
{
    std::vector<int> area(n);
    for (int r = 0; r < n; ++r)
    {
        area[r] = b.AllocScratch(r, n);
    }
    for (int dist = 1; dist < n; dist *= 2)
    {
        const int count = std::min(dist, n - dist);
        std::vector<int> tbs(n);
        for (int r = 0; r < n; ++r)
        {
            tbs[r] = b.Tb(r, Mod(r - dist, n), Mod(r + dist, n), chan);
            if (dist == 1)
            {
                // Position 0 is the input; later rounds send it from scratch with the rest.
                b.Send(r, tbs[r], In(u), count);
                if (n > 2)
                {
                    b.Copy(r, tbs[r], In(u), Scr(area[r]));
                }
            }
            else
            {
                b.Send(r, tbs[r], Scr(area[r]), count);
            }
        }
        for (int r = 0; r < n; ++r)
        {
            b.Recv(r, tbs[r], Scr(area[r] + dist), count);
        }
    }
    for (int r = 0; r < n; ++r)
    {
        std::vector<Piece> unpack;
        for (int i = 0; i < n; ++i)
        {
            const Loc src = i == 0 ? In(u) : Scr(area[r] + i);
            unpack.push_back(Piece{src, Out(Mod(r + i, n) * units + u), Loc{}, 1});
        }
        const int tb = b.Tb(r, -1, -1, chan);
        for (const Piece& p : Coalesce(unpack, false))
        {
            b.Copy(r, tb, p.m_src, p.m_dst, p.m_count);
        }
    }
}

} // namespace

Schedule
GenerateBruck(CollectiveKind kind, int n, const GeneratorOptions& opt)
{
    const Split split = SplitOf(opt);
    const int units = split.Units();
    ScheduleBuilder b(kind, n, n * units, split.m_channels, opt, ScheduleName("bruck", kind));
    for (int u = 0; u < units; ++u)
    {
        if (kind == CollectiveKind::kAllToAll)
        {
            BruckAllToAll(b, n, units, u, split.Channel(u));
        }
        else if (kind == CollectiveKind::kAllGather)
        {
            BruckAllGather(b, n, units, u, split.Channel(u));
        }
        else
        {
            throw std::logic_error("bruck: unsupported collective " + ToString(kind));
        }
    }
    return b.Finish();
}

} // namespace gen
} // namespace fabricsim
