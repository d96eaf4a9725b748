/*
 * The program each rank runs in one engine step: compute delays and communication items on one
 * or more streams. Built from the roofline and step-communication lists, executed over the
 * Collective API, and recorded as JSON lines for replay.
 */
#ifndef FABRICSIM_SERVING_STEP_PROGRAM_H
#define FABRICSIM_SERVING_STEP_PROGRAM_H

#include "json-reader.h"

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fabricsim
{

/**
 * \brief Communication a program item performs. The workload layer keeps its own list (the
 * Collective API's kinds have no gather, send/recv or KV fetch).
 */
enum class CommOp : uint8_t
{
    AllReduce,
    ReduceScatter,
    AllGather,
    AllToAll,
    Gather,  //!< to group index 0, as point-to-point sends
    Send,    //!< point-to-point, paired with a Recv of the same key
    Recv,    //!< completes when the paired Send is delivered
    KvFetch, //!< read KV from the offload tier (PCIe delay, or a send from a remote pool host)
    KvSend   //!< disaggregated KV transfer of one layer to a decode rank (detached)
};

/// Lower-case name ("all_reduce", "kv_fetch", ...).
std::string CommOpName(CommOp op);

/// Parse a CommOpName; nothing if unknown.
std::optional<CommOp> ParseCommOp(const std::string& name);

/**
 * \brief One item of a rank program.
 */
struct ProgramItem
{
    /// What the item is.
    enum class Type : uint8_t
    {
        Compute, //!< the compute engine is busy for durationPs
        Comm,    //!< a communication (blocking the stream unless async or detached)
        Wait     //!< wait for the async communication with the same key
    };

    Type type = Type::Compute; //!< kind
    uint32_t stream = 0;       //!< stream it belongs to (streams share one compute engine)
    std::string name;          //!< compute: op kind ("attention"); comm: label ("attn_out")
    int32_t layer = -1;        //!< layer (-1: none)

    int64_t durationPs = 0; //!< compute time
    double flops = 0;       //!< compute FLOPs (for MFU)
    double hbmBytes = 0;    //!< compute HBM bytes (for MBU)

    CommOp op = CommOp::AllReduce; //!< communication kind
    std::string category;          //!< breakdown bucket ("tp_allreduce", "ep_dispatch", ...)
    std::string key;               //!< matches the items of one collective / pair / wait
    std::vector<uint32_t> group;   //!< global ranks in group order; send/recv: {src, dst}
    uint32_t groupIndex = 0;       //!< this rank's index in group
    uint64_t bytes = 0;            //!< size (nccl-tests convention; all-to-all: sent to others)
    std::vector<uint64_t> row;     //!< all-to-all: bytes to each group member
    int64_t kernelLaunchPs = -1;   //!< all-to-all on own kernels: fixed cost (-1: NCCL's launch)
    int64_t kernelMinPs = 0;       //!< all-to-all on own kernels: earliest result after start
    int64_t kernelFillPs = 0;      //!< all-to-all on own kernels: their pipeline's fill
    double smShare = 0;            //!< share of the SMs held from launch to done, off compute
    bool async = false;            //!< the stream goes on; a Wait item with the key waits
    bool detached = false;         //!< nobody waits (completion goes to the transfer)
    int64_t transferId = -1;       //!< KV transfer it belongs to (KvSend)
    int64_t fetchFrom = -1;        //!< KvFetch: remote pool host, or -1 for the host tier
    double tierBwBytesPerSec = 0;  //!< KvFetch from the host tier: its bandwidth

    /// Compact JSON form (one entry of a recorded program).
    nlohmann::json ToJson() const;
    /// Parse the compact form; InputError naming the field on malformed input.
    static ProgramItem FromJson(const JsonObject& j);
};

/**
 * \brief The program of one rank in one step.
 */
struct RankStepProgram
{
    uint32_t rank = 0;              //!< global rank (topology host index)
    uint32_t streams = 1;           //!< number of streams
    std::vector<ProgramItem> items; //!< in program order (streams interleaved)
};

/**
 * \brief What a step (or a KV transfer) waits for before it may start.
 */
struct StepDependencies
{
    std::vector<uint64_t> afterSteps;     //!< steps that must have finished
    std::vector<uint64_t> afterTransfers; //!< KV transfers that must have finished
    int64_t notBeforePs = 0;              //!< earliest start (request arrival)
};

/**
 * \brief One engine step: the programs of all its ranks.
 */
struct StepProgram
{
    uint64_t step = 0;                  //!< step id (launch order over the whole run)
    uint32_t pool = 0;                  //!< pool index (0 unified or prefill, 1 decode)
    uint32_t engine = 0;                //!< engine index in the pool
    uint32_t virtualEngine = 0;         //!< pipeline virtual engine
    StepDependencies deps;              //!< launch condition (for replay)
    std::vector<RankStepProgram> ranks; //!< per rank

    /// One JSON-lines record ({"type": "step", ...}).
    nlohmann::json ToJson() const;
    /// Parse a record; InputError naming the field on malformed input.
    static StepProgram FromJson(const JsonObject& j);
};

/**
 * \brief A bulk KV transfer between pools (point-to-point sends issued together), or the
 * completion marker of a layer-wise one whose sends are KvSend items of step programs.
 */
struct TransferRecord
{
    int64_t id = 0;         //!< transfer id
    uint64_t request = 0;   //!< request it carries
    StepDependencies deps;  //!< when the sends start (bulk)
    bool layerwise = false; //!< sends are inside step programs
    uint32_t parts = 0;     //!< layer-wise: number of KvSend items
    /// Bulk sends: {src, dst, bytes}.
    std::vector<std::array<uint64_t, 3>> sends;

    /// One JSON-lines record ({"type": "transfer", ...}).
    nlohmann::json ToJson() const;
    /// Parse a record; InputError naming the field on malformed input.
    static TransferRecord FromJson(const JsonObject& j);
};

} // namespace fabricsim

#endif
