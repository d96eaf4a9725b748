/*
 * Schedule IR: a chunk-level collective program, one list of threadblocks per rank, each an
 * ordered list of steps. It follows MSCCL's XML model (buffers i/o/s, offsets and counts in
 * chunks, FIFO channels per (sender, receiver, channel), cross-threadblock dependencies) so
 * MSCCL files import losslessly and generators can build programs with a few helper calls.
 */
#ifndef FABRICSIM_SCHEDULE_IR_H
#define FABRICSIM_SCHEDULE_IR_H

#include "collective-kind.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fabricsim
{

/// Wire protocol (MSCCL `proto`).
enum class Protocol
{
    kSimple,
    kLL,
    kLL128
};

/// Buffer a step reads or writes: input (`i`), output (`o`) or scratch (`s`).
enum class BufferKind
{
    kInput,
    kOutput,
    kScratch
};

/// Step operation (MSCCL step `type`).
enum class StepOp
{
    kSend,               ///< `s`: send src to the tb's send peer
    kRecv,               ///< `r`: receive from the recv peer into dst
    kRecvCopySend,       ///< `rcs`: receive, store into dst, forward
    kRecvReduceSend,     ///< `rrs`: receive, reduce with local src, forward (no store)
    kRecvReduceCopy,     ///< `rrc`: receive, reduce with local src, store into dst
    kRecvReduceCopySend, ///< `rrcs`: receive, reduce with local src, store into dst, forward
    kCopy,               ///< `cpy`: local copy src -> dst
    kReduce,             ///< `re`: local reduce dst = dst (+) src
    kNop                 ///< `nop`: carries dependencies only
};

/// "Simple", "LL" or "LL128".
std::string ToString(Protocol protocol);
/// Case-insensitive protocol parse; nullopt when unknown.
std::optional<Protocol> ParseProtocol(const std::string& name);
/// "i", "o" or "s".
std::string ToString(BufferKind buffer);
/// Parses "i"/"o"/"s" (also "input"/"output"/"scratch"); nullopt when unknown.
std::optional<BufferKind> ParseBufferKind(const std::string& name);
/// MSCCL short name of an op: s, r, rcs, rrs, rrc, rrcs, cpy, re, nop.
std::string MscclName(StepOp op);
/// Long name of an op: send, recv, recv_copy_send, recv_reduce_send, recv_reduce_copy,
/// recv_reduce_copy_send, copy, reduce, nop.
std::string LongName(StepOp op);
/// Parses a short (MSCCL) or long op name; nullopt when unknown.
std::optional<StepOp> ParseStepOp(const std::string& name);

/// True when the op sends to the threadblock's send peer.
bool OpSends(StepOp op);
/// True when the op receives from the threadblock's recv peer.
bool OpReceives(StepOp op);
/// True when the op reads its local src buffer (s, rrs, rrc, rrcs, cpy, re).
bool OpReadsSrc(StepOp op);
/// True when the op writes its local dst buffer (r, rcs, rrc, rrcs, cpy, re).
bool OpWritesDst(StepOp op);

/// Cross-threadblock dependency: wait until threadblock m_tb (same rank) finished step m_step.
struct Dependency
{
    int m_tb = -1;   ///< threadblock id on the same rank
    int m_step = -1; ///< step index within that threadblock

    bool operator==(const Dependency& o) const
    {
        return m_tb == o.m_tb && m_step == o.m_step;
    }
};

/// One step of a threadblock. Offsets and counts are in chunks.
struct Step
{
    int m_index = 0; ///< declared index (MSCCL `s`); must equal the step's position
    StepOp m_op = StepOp::kNop;
    BufferKind m_srcBuffer = BufferKind::kInput;
    int m_srcOffset = -1;
    BufferKind m_dstBuffer = BufferKind::kOutput;
    int m_dstOffset = -1;
    int m_count = 0;                ///< chunks moved (0 for nop)
    std::vector<Dependency> m_deps; ///< MSCCL depid/deps; several allowed
    bool m_hasDep = false;          ///< MSCCL `hasdep`: another step waits on this one

    bool operator==(const Step& o) const;
};

/// A threadblock: one send peer and one recv peer (-1 = none) on one channel.
struct Threadblock
{
    int m_id = 0;
    int m_sendPeer = -1;
    int m_recvPeer = -1;
    int m_channel = 0;
    std::vector<Step> m_steps;

    /**
     * Appends a step with m_index = its position.
     * \return the new step
     */
    Step& AddStep(StepOp op,
                  BufferKind srcBuffer,
                  int srcOffset,
                  BufferKind dstBuffer,
                  int dstOffset,
                  int count,
                  const std::vector<Dependency>& deps = {});

    bool operator==(const Threadblock& o) const;
};

/// TE-CCL's `<copy i_off o_off/>`: input chunk copied to output before the program starts.
struct InitialCopy
{
    int m_inputOffset = 0;
    int m_outputOffset = 0;

    bool operator==(const InitialCopy& o) const
    {
        return m_inputOffset == o.m_inputOffset && m_outputOffset == o.m_outputOffset;
    }
};

/// Program of one rank (MSCCL `<gpu>`).
struct RankProgram
{
    int m_rank = 0;
    int m_inputChunks = 0;   ///< MSCCL i_chunks
    int m_outputChunks = 0;  ///< MSCCL o_chunks
    int m_scratchChunks = 0; ///< MSCCL s_chunks
    std::vector<InitialCopy> m_initialCopies;
    std::vector<Threadblock> m_threadblocks;

    /// Appends a threadblock whose id is its position. \return the new threadblock
    Threadblock& AddThreadblock(int sendPeer, int recvPeer, int channel);
    /// Threadblock with id \p id, or nullptr.
    Threadblock* FindThreadblock(int id);
    /// Threadblock with id \p id, or nullptr.
    const Threadblock* FindThreadblock(int id) const;

    bool operator==(const RankProgram& o) const;
};

/// Chunk counts a collective implies for one rank's user buffers.
struct BufferGeometry
{
    int m_inputChunks = 0;
    int m_outputChunks = 0;
};

/**
 * A complete collective schedule. m_chunksPerLoop is MSCCL's nchunksperloop: the number of
 * chunks the largest user buffer is cut into (allreduce, alltoall, broadcast, reduce: input and
 * output; allgather: output, input = nchunksperloop / ranks; reducescatter: input,
 * output = nchunksperloop / ranks). The program repeats per tile of that many chunks.
 */
struct Schedule
{
    std::string m_name;
    CollectiveKind m_collective = CollectiveKind::kCustom;
    int m_ranks = 0;
    int m_chunksPerLoop = 0;
    bool m_inPlace = false;
    std::optional<bool> m_outOfPlace; ///< RCCL/Azure `outofplace`; absent in msccl-tools files
    Protocol m_protocol = Protocol::kSimple;
    int m_channels = 1;
    int m_root = 0; ///< broadcast / reduce root
    /// Other algo-level attributes kept verbatim (minBytes, maxBytes, nthreads, redop, ...).
    std::map<std::string, std::string> m_attributes;
    std::vector<RankProgram> m_programs; ///< one per rank, normally in rank order
    /// Chunks one connection must hold at once (ConnectionChunksNeeded), kept by whoever runs the
    /// schedule many times; 0: the executor works it out.
    int m_connectionChunks = 0;

    /**
     * Empty schedule with one RankProgram per rank, buffer sizes set from the collective
     * (in-place: the aliased buffer gets 0 chunks, as msccl-tools writes it).
     */
    static Schedule Create(CollectiveKind collective,
                           int ranks,
                           int chunksPerLoop,
                           bool inPlace,
                           Protocol protocol = Protocol::kSimple,
                           int channels = 1);

    /// Program of rank \p rank (must exist).
    RankProgram& Rank(int rank);
    /// Program of rank \p rank (must exist).
    const RankProgram& Rank(int rank) const;
    /// Sets m_hasDep on every step some other step depends on (keeps existing true flags).
    void MarkDependencyTargets();
    /// Total number of steps over all ranks and threadblocks.
    size_t StepCount() const;

    bool operator==(const Schedule& o) const;
    bool operator!=(const Schedule& o) const
    {
        return !(*this == o);
    }
};

/**
 * User-buffer chunk counts implied by a collective (nullopt for custom, or when
 * \p chunksPerLoop is not divisible by \p ranks where the collective needs it).
 */
std::optional<BufferGeometry> ExpectedGeometry(CollectiveKind collective,
                                               int ranks,
                                               int chunksPerLoop);

} // namespace fabricsim

#endif
