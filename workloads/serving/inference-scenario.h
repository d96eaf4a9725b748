/*
 * An inference-serving scenario: model, accelerator, parallel layout and the "serving" block
 * (requests, batching, KV cache, prefill/decode disaggregation, SLOs, execution and placement
 * options). The fabric part of a scenario (topology, transport, switch) is parsed elsewhere.
 */
#ifndef FABRICSIM_SERVING_INFERENCE_SCENARIO_H
#define FABRICSIM_SERVING_INFERENCE_SCENARIO_H

#include "hardware-spec.h"
#include "model-spec.h"
#include "parallelism-spec.h"
#include "request-source.h"
#include "routing-model.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fabricsim
{

/**
 * \brief Continuous-batching limits (vLLM names).
 */
struct BatchingSpec
{
    uint32_t maxNumBatchedTokens = 8192; //!< token budget per step
    uint32_t maxNumSeqs = 256;           //!< sequences per step
    bool chunkedPrefill = true;          //!< split prompts over steps to fit the budget
};

/// Where the KV cache lives.
enum class KvPlacement
{
    Hbm,   //!< accelerator memory
    Host,  //!< host memory, read over PCIe each step
    Remote //!< a memory pool on other fabric hosts, read over the fabric each step
};

/// Lower-case name ("hbm", "host", "remote").
std::string KvPlacementName(KvPlacement p);

/**
 * \brief Paged KV cache. In HBM its capacity is what is left of
 * hbm_capacity x gpu_memory_utilization after weights and peak activations (KvCacheBudget);
 * in an offload tier it is the tier's capacity per rank, and each step's attention reads the KV
 * through the tier's link (one layer ahead, overlapping the previous layer).
 */
struct KvCacheSpec
{
    KvPlacement placement = KvPlacement::Hbm; //!< tier
    uint32_t blockSize = 16;                  //!< tokens per block
    double gpuMemoryUtilization = 0.9;        //!< share of HBM the engine may use (vLLM)
    uint64_t numBlocksOverride = 0;           //!< fixed block count per rank (0: computed)
    double tierCapacityBytes = 256e9;         //!< host / remote tier capacity per rank
    double tierBwBytesPerSec = 64e9;          //!< host tier: PCIe bandwidth per rank
    std::vector<uint32_t> poolHosts;          //!< remote tier: hosts that serve the KV pool
    bool prefixCaching = false; //!< blocks keep their identity: shared prefixes are not recomputed
};

/**
 * \brief A set of ranks running one engine kind: its parallel layout, hosts and batching.
 */
struct PoolSpec
{
    ParallelismSpec par;         //!< layout (dp = replicas, or attention groups with dp_attention)
    std::vector<uint32_t> hosts; //!< explicit host of each pool rank (empty: placement rule)
    uint32_t firstHost = 0;      //!< first host when placed by rule
    BatchingSpec batching;       //!< batching limits of this pool
};

/// How the KV cache moves from the prefill to the decode pool.
enum class KvTransferMode
{
    Bulk,     //!< whole prompt after prefill finishes
    Layerwise //!< each layer as soon as it is computed, overlapping prefill
};

/**
 * \brief How a request picks its engine (serving.router). least_loaded: the scheduler with the
 * fewest outstanding sequences (vLLM's data-parallel load balancing). cache_aware (prefix
 * caching only): SGLang's model gateway's policy, routing on each engine's actual cache: when
 * the loads are imbalanced (max - min > balance_abs_threshold and max > balance_rel_threshold x
 * min) the least loaded; else the engine holding the longest cached prefix if it covers at
 * least cache_threshold of the prompt; else the least loaded.
 */
struct RouterSpec
{
    bool cacheAware = false;     //!< cache_aware rather than least_loaded
    double cacheThreshold = 0.3; //!< match ratio to follow the cache (SMG default)
    uint64_t balanceAbs = 64;    //!< imbalance: absolute load gap (SMG default)
    double balanceRel = 1.5;     //!< imbalance: load ratio (SMG default)
};

/**
 * \brief Prefill/decode disaggregation.
 */
struct DisaggregationSpec
{
    bool enabled = false;                           //!< separate pools
    PoolSpec prefill;                               //!< prefill pool
    PoolSpec decode;                                //!< decode pool
    KvTransferMode transfer = KvTransferMode::Bulk; //!< transfer mode
};

/**
 * \brief Latency targets for goodput.
 */
struct SloSpec
{
    bool enabled = false;    //!< SLOs given
    double ttftMs = 0;       //!< time-to-first-token target
    double tpotMs = 0;       //!< time-per-output-token target
    double attainment = 0.9; //!< share of requests that must meet both (goodput search)
};

/// Communication/compute overlap of expert-parallel steps.
enum class EpOverlap
{
    None,    //!< collectives block the compute stream (vLLM default path)
    TwoBatch //!< two micro-batches, one's communication under the other's compute (DeepEP/SGLang)
};

/**
 * \brief How step programs execute.
 */
struct ExecutionSpec
{
    EpOverlap epOverlap = EpOverlap::None; //!< EP overlap mode
    bool cudaGraphs = true;                //!< decode-only steps replay a captured graph
    uint32_t cudaGraphMaxBatch = 512;      //!< largest decode batch with a graph (vLLM 512)
    bool cudaGraphPadding = true;          //!< a graph runs at its captured size (vLLM's sizes)
    /// The attention groups of one EP group replay graphs of one size: each runs the largest
    /// group's batch, its padding slots dummy tokens (vLLM's DP padding, dp_utils.py)
    bool dpPadding = true;
    double graphKernelOverheadSec = 1e-6; //!< per-kernel gap inside a graph (replaces launch)
    /// The engine's host time per step (scheduler, input preparation, sampling, output
    /// processing) during which the GPU waits: fixed part, and per sequence in the step.
    /// Defaults fitted on the measured vLLM 0.19 Llama-3.1-8B run with compute measured on its
    /// GPU (docs/validation.md).
    double stepOverheadSec = 2e-3;
    double sequenceOverheadSec = 0; //!< per sequence scheduled in the step
    /// Engine time a step with prompt work spends beyond its priced kernels, in which the GPU
    /// does not decode: fixed per such step, and per prompt token it computes. 0 by default;
    /// validate-serving can fit them on declared points of a benchmark (docs/validation.md).
    double prefillOverheadSec = 0;
    double prefillTokenOverheadSec = 0;
    /// What a request spends between the client's send and the engine's queue (HTTP, the API
    /// server, tokenisation, the frontend's hand-off): a fixed part and one per prompt token.
    /// Counted in its TTFT and E2E, not in the engine's steps; 0 for in-process engines.
    double requestOverheadSec = 0;
    double promptTokenOverheadSec = 0;
    /// Requests the frontend handles at once (vLLM's API server processes count): a request
    /// waits for a free one, first come first served. 0: no limit, the frontend time a delay.
    uint32_t frontendServers = 0;
    /// The scheduler runs one step ahead of the GPU (vLLM's default since 0.12): a step that
    /// follows another was decided when that one launched, so a request the engine takes while
    /// a step runs joins the step after next (at once when the GPU would otherwise idle).
    bool asyncScheduling = true;
};

/// Where the TP ranks of a group sit.
enum class TpPlacement
{
    ScaleUp,      //!< consecutive hosts: inside one server's scale-up domain
    AcrossServers //!< one TP rank per server: TP traffic crosses the scale-out NICs
};

/**
 * \brief Placement of ranks on topology hosts. Pool rank i = (group x pp + stage) x tp + tpRank
 * goes to host first + i (scale_up), or first + tpRank x accels_per_server + i / tp
 * (across_servers), unless the pool lists its hosts.
 */
struct PlacementSpec
{
    TpPlacement tp = TpPlacement::ScaleUp; //!< TP placement rule
    uint32_t accelsPerServer = 8;          //!< accelerators per server (rail-optimised hosts)
    /// Hosts are servers' accelerators, server-major (the topology has servers, or the placement
    /// says accels_per_server): host / accelsPerServer is its server.
    bool servers = false;
    /// Hosts of the topology (0: unchecked). Read from a rail-optimised topology object; a
    /// caller that builds the topology sets it to Topology::NumHosts() before running.
    uint32_t numHosts = 0;
};

/**
 * \brief What to record for replay and for people.
 */
struct RecordSpec
{
    bool programs = false; //!< executed per-rank programs (JSON lines, replayable)
    bool timeline = false; //!< Chrome-trace timeline
    uint64_t maxSteps = 0; //!< timeline: record only the first n steps (0: all)
};

/**
 * \brief A whole inference-serving scenario.
 *
 * JSON: {"model": ..., "hardware": ..., "parallelism": {...}, "seed": n, "serving": {
 *   "requests": {...}, "batching": {...}, "kv_cache": {...}, "disaggregation": {...},
 *   "slo": {...}, "execution": {...}, "placement": {...}, "expert_routing": {...},
 *   "record": {...}}, "topology": ..., "transport": ..., "switch": ...}. See docs/inference.md.
 */
struct InferenceScenario
{
    std::string file;          //!< scenario file ("" inline)
    ModelSpec model;           //!< the model
    HardwareSpec hw;           //!< the accelerator
    RoutingModel routing;      //!< MoE routing distribution
    PoolSpec pool;             //!< the single pool (disaggregation off)
    RequestSpec requests;      //!< request source
    KvCacheSpec kv;            //!< KV cache
    DisaggregationSpec disagg; //!< prefill/decode pools
    SloSpec slo;               //!< SLOs
    ExecutionSpec exec;        //!< execution options
    PlacementSpec placement;   //!< rank placement
    RecordSpec record;         //!< recording
    RouterSpec router;         //!< request routing across engines
    uint64_t seed = 1;         //!< scenario seed

    /**
     * \brief Parse a scenario object; every error is an fabricsim::InputError naming \p file and
     * the field. Keys outside model, hardware, parallelism, seed and serving are left to the fabric
     * parser (the topology object is read for accels_per_server and the host count only).
     */
    static InferenceScenario FromJson(const nlohmann::json& j, const std::string& file = "");

    /// Read and parse a scenario file.
    static InferenceScenario Load(const std::string& path);

    /// True when \p j has a "serving" block (an inference scenario rather than a fabric one).
    static bool IsInference(const nlohmann::json& j);

    /// The pools that run: {pool} or {prefill, decode}.
    std::vector<const PoolSpec*> Pools() const;

    /// Accelerators used by all pools.
    uint32_t NumAccelerators() const;

    /// The smallest max_num_seqs of the pools (a step holds at most that many sequences).
    double MaxNumSeqs() const;

    /**
     * Bytes the timeline holds (0 without record.timeline): its steps are record.max_steps, or
     * as many as the run may take (each pool steps at least once per token of its longest
     * request, and once per max_num_seqs tokens), of the largest engine, a slice per layer.
     */
    double TimelineBytes(double outputTokens, double maxOutputTokens) const;

    /// CheckServingFitsMemory for generated requests (a trace is checked as it is read) with
    /// the timeline; InputError naming serving.requests.count.
    void CheckFitsMemory() const;
};

} // namespace fabricsim

#endif
