/*
 * Building blocks the schedule generators share: a builder that appends steps to rank
 * programs and derives cross-threadblock dependencies from buffer hazards, and the data split
 * into units (channel x pipeline piece). Internal to the generators.
 */
#ifndef FABRICSIM_GENERATOR_BUILDER_H
#define FABRICSIM_GENERATOR_BUILDER_H

#include "generators.h"
#include "schedule-ir.h"

#include <array>
#include <deque>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace fabricsim
{
namespace gen
{

/// A chunk position in one of a rank's buffers.
struct Loc
{
    BufferKind m_buf = BufferKind::kInput;
    int m_off = -1;

    bool operator==(const Loc& o) const
    {
        return m_buf == o.m_buf && m_off == o.m_off;
    }

    bool operator!=(const Loc& o) const
    {
        return !(*this == o);
    }

    /// The position \p n chunks further in the same buffer.
    Loc Plus(int n) const
    {
        return Loc{m_buf, m_off + n};
    }
};

/// Shorthands for buffer positions.
inline Loc
In(int off)
{
    return Loc{BufferKind::kInput, off};
}

inline Loc
Out(int off)
{
    return Loc{BufferKind::kOutput, off};
}

inline Loc
Scr(int off)
{
    return Loc{BufferKind::kScratch, off};
}

/**
 * One contiguous piece of a message: m_count chunks read from the sender's m_src, stored at
 * the receiver's m_dst; m_red is the receiver's local operand of a reducing receive.
 */
struct Piece
{
    Loc m_src;
    Loc m_dst;
    Loc m_red;
    int m_count = 1;
};

/// Merges consecutive pieces whose src, dst (and red, when \p withRed) all continue each other.
std::vector<Piece> Coalesce(const std::vector<Piece>& pieces, bool withRed);

/**
 * How the data of a collective is cut: every rank's share is split over `channels` channels
 * and each channel's part into `pieces` pipeline pieces. Unit u = channel * pieces + piece;
 * each unit runs the algorithm once, in its channel's threadblocks, in piece order.
 */
struct Split
{
    int m_channels = 1;
    int m_pieces = 1;

    int Units() const
    {
        return m_channels * m_pieces;
    }

    int Channel(int unit) const
    {
        return unit / m_pieces;
    }
};

/**
 * Appends steps to a schedule's rank programs.
 *
 * Threadblocks are found or created by their exact (send peer, recv peer, channel). Each step's
 * cross-threadblock dependencies come from the buffer chunks it touches: it waits for the last
 * writer of what it reads or writes (RAW, WAW) and for the readers of what it overwrites (WAR).
 * Hazards are tracked on the in-place storage (where o aliases i as MSCCL defines), which
 * orders every conflict of both the in-place and the out-of-place reading, so a generated
 * schedule is declared and valid in both modes (unless built as out-of-place only).
 *
 * Steps must be added in an order in which they could run one after another (a receive after
 * its matching send); the builder checks this on the fly, so a generator bug fails at once as a
 * std::logic_error instead of as a schedule that deadlocks later.
 */
class ScheduleBuilder
{
  public:
    /**
     * \param name schedule name (MSCCL `name`)
     * \param chunksPerLoop K of the schedule
     * \param channels channels the schedule declares
     * \param inPlace false for an algorithm that is correct out of place only (the schedule
     *        then declares only that mode and hazards are tracked without aliasing)
     */
    ScheduleBuilder(CollectiveKind kind,
                    int ranks,
                    int chunksPerLoop,
                    int channels,
                    const GeneratorOptions& opt,
                    const std::string& name,
                    bool inPlace = true);

    int Ranks() const
    {
        return m_schedule.m_ranks;
    }

    /// Id of rank \p rank's threadblock with these peers on \p channel (created when absent).
    int Tb(int rank, int sendPeer, int recvPeer, int channel);

    /**
     * Appends a step to threadblock \p tb of \p rank. Unused locations (dst of a send, src of a
     * plain receive) are filled in with the remote side's when the message is matched.
     * \param extra dependencies to add to the derived ones (ordering without a data hazard)
     * \return the step's index in its threadblock
     */
    int Add(int rank,
            int tb,
            StepOp op,
            Loc src,
            Loc dst,
            int count,
            const std::vector<Dependency>& extra = {});

    /// Send \p count chunks from \p src.
    int Send(int rank, int tb, Loc src, int count = 1);
    /// Receive \p count chunks into \p dst.
    int Recv(int rank, int tb, Loc dst, int count = 1);
    /// Local copy; nothing is added when \p src and \p dst are the same place.
    void Copy(int rank, int tb, Loc src, Loc dst, int count = 1);

    /// Reserves \p count fresh scratch chunks on \p rank; returns the first offset.
    int AllocScratch(int rank, int count);

    /// Index of the last step of threadblock \p tb of \p rank (-1 when it has none).
    int LastStep(int rank, int tb) const;

    /**
     * Sends \p pieces from \p from to \p to and receives them there with \p recvOp (kRecv or
     * kRecvReduceCopy), one send and its receive after the other, piece by piece.
     */
    void Transfer(
        int from, int fromTb, int to, int toTb, const std::vector<Piece>& pieces, StepOp recvOp);

    /**
     * Two-way exchange between \p a and \p b, sends and receives alternating piece by piece on
     * both sides (neither side ever has two sends outstanding while the other one sends too).
     */
    void Exchange(int a,
                  int tbA,
                  const std::vector<Piece>& aToB,
                  int b,
                  int tbB,
                  const std::vector<Piece>& bToA,
                  StepOp recvOp);

    /// Checks every message was received, sets scratch sizes and has_dep flags.
    Schedule Finish();

  private:
    struct SlotState
    {
        int m_writerTb = -1;
        int m_writerStep = -1;
        std::vector<std::pair<int, int>> m_readers; ///< (tb, step), one entry per tb
    };

    struct RankState
    {
        std::map<std::tuple<int, int, int>, int> m_tbByKey; ///< (send, recv, chan) -> tb
        std::map<std::pair<int, int>, int> m_sendOwner;     ///< (peer, chan) -> tb
        std::map<std::pair<int, int>, int> m_recvOwner;     ///< (peer, chan) -> tb
        std::array<std::vector<SlotState>, 3> m_slots;      ///< per storage buffer
        int m_scratch = 0;                                  ///< scratch chunks in use
    };

    struct Pending
    {
        int m_rank;
        int m_tb;
        int m_step;
        int m_count;
    };

    /// In-place storage (buffer index, offset) of a logical chunk.
    std::pair<int, int> Storage(int rank, BufferKind buf, int off) const;
    SlotState& Slot(int rank, BufferKind buf, int off);
    void Match(int rank, int tb, int step, int count);

    Schedule m_schedule;
    bool m_aliasing = true; ///< track hazards on the in-place storage
    int m_perRank = 0;      ///< K / N (allgather, reducescatter aliasing)
    std::vector<RankState> m_ranks;
    std::map<std::tuple<int, int, int>, std::deque<Pending>> m_fifos;
};

} // namespace gen
} // namespace fabricsim

#endif
