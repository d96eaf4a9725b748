/*
 * The imported-trace form every importer produces (Kineto, Chakra, fabricsim's own program
 * traces) and the replayer consumes: per rank, the recorded ops (compute with measured
 * durations, collectives and point-to-point transfers with their sizes and groups) and the
 * dependencies between them, with what each importer had to assume written down.
 */
#ifndef FABRICSIM_TRACES_TRACE_IR_H
#define FABRICSIM_TRACES_TRACE_IR_H

#include "schedule-ir.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fabricsim
{

/// What an op does.
enum class TraceOpKind : uint8_t
{
    kCompute,    ///< busy its lane for its duration
    kCollective, ///< joins a collective of its group
    kSend,       ///< point-to-point send to peer
    kRecv        ///< completes when the paired send is delivered
};

/// Cost class of a compute op, for scaling to another accelerator.
enum class OpClass : uint8_t
{
    kGemm,   ///< math-bound (GEMM, convolution, attention kernels)
    kMemory, ///< memory-bound (element-wise, reductions, copies)
    kHost,   ///< CPU-side work (kept as recorded)
    kComm    ///< communication
};

/// "gemm", "memory", "host", "comm".
std::string OpClassName(OpClass c);

/// Classify a GPU kernel by its name (GEMM / convolution / attention libraries vs the rest).
OpClass ClassifyKernel(const std::string& name);

/// A dependency: this op starts no earlier than lagPs after op \c op (same rank) ended.
struct TraceDep
{
    uint32_t op = 0;
    int64_t lagPs = 0;
};

/// One recorded op of one rank.
struct TraceOp
{
    TraceOpKind kind = TraceOpKind::kCompute;
    std::string name;
    uint32_t lane = 0;    ///< stream (Kineto), 0 GPU / 1 CPU (Chakra); compute on a lane is serial
    int64_t startPs = -1; ///< recorded start from the rank's origin; -1 = not recorded
    int64_t durationPs = 0; ///< recorded duration
    OpClass opClass = OpClass::kMemory;
    uint64_t sourceId = 0; ///< Chakra node id, Kineto correlation id

    // Communication (collectives, send, recv).
    CollectiveKind collective = CollectiveKind::kAllReduce;
    std::string collectiveName; ///< as the trace names it ("allreduce", "ALL_TO_ALL", ...)
    bool sized = false;         ///< bytes known
    uint64_t bytes = 0;         ///< nccl-tests convention (send/recv: the message)
    std::string dtype;
    std::string sizeSource;           ///< where the size came from
    std::string missing;              ///< why it is not sized / cannot be re-simulated
    std::string group;                ///< process-group name ("" = the world)
    std::vector<uint32_t> groupRanks; ///< global ranks in group order; empty = the world
    bool groupAssumed = false;        ///< the trace does not say: the world was assumed
    uint64_t seq = 0;                 ///< collective sequence number on its group
    uint32_t peer = 0;                ///< send / recv: the other rank
    int64_t tag = 0;                  ///< send / recv tag

    std::vector<TraceDep> deps;
    int64_t releasePs = 0; ///< an op without deps starts this long after the rank starts

    /// True for collectives, sends and receives.
    bool IsComm() const
    {
        return kind != TraceOpKind::kCompute;
    }

    /// The collective can run over the Collective API (sized, a kind it supports).
    bool Simulable() const;
};

/// The recorded ops of one rank.
struct RankTrace
{
    uint32_t rank = 0;
    std::string file;
    std::string device;          ///< accelerator name as recorded ("" = unknown)
    int64_t recordedSpanPs = -1; ///< recorded time of the imported window; -1 = unknown
    uint32_t steps = 1;          ///< profiler steps in the window
    int mirrorOf = -1;           ///< >= 0: a copy of that rank's ops (no trace of its own)
    std::vector<TraceOp> ops;    ///< deps refer to indices here
};

/// An imported trace: every rank of the job.
struct ImportedTrace
{
    std::string format; ///< "kineto", "chakra", "fabricsim-program"
    uint32_t worldSize = 1;
    std::vector<RankTrace> ranks;           ///< index = rank, after CompleteRanks
    std::vector<std::string> notes;         ///< assumptions and what could not be read
    std::map<std::string, uint64_t> counts; ///< importer statistics

    /// Add 1 (or \p n) to counts[\p key].
    void Count(const std::string& key, uint64_t n = 1)
    {
        counts[key] += n;
    }
};

/**
 * Give every rank of the world an entry, index = rank: a rank without a trace of its own runs a
 * copy of the traced rank with the same position in its groups (SPMD), and a note says so; or,
 * with \p copyMissing false (a recording that holds every rank that worked: ranks are hosts),
 * it stays idle.
 * \throws fabricsim::InputError when two traces claim one rank, or an op's group names a rank
 * outside the world
 */
void CompleteRanks(ImportedTrace& trace, bool copyMissing = true);

/// Per-rank and per-kind statistics and the list of comm ops (for reports).
nlohmann::json SummarizeTrace(const ImportedTrace& trace);

/// Bytes of one element of a dtype as traces name it ("Float", "c10::BFloat16", "long int",
/// "fp16", ...); nothing when unknown.
std::optional<uint32_t> DtypeBytes(const std::string& dtype);

/// A collective named the way PyTorch, NCCL or Chakra name them ("allreduce",
/// "all_gather_into_tensor", "_reduce_scatter_base", "AllToAll", "alltoall_base", ...).
std::optional<CollectiveKind> CollectiveFromName(const std::string& name);

} // namespace fabricsim

#endif
