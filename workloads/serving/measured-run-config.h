/*
 * The engine and the machine behind a measured vLLM serving run (LLMServingSim's bench layout:
 * RUN/vllm/meta.json, RUN/vllm/requests.jsonl, RUN/config.json, RUN/validation/summary.txt), and
 * the fabricsim scenario that replays it: same model, GPU, parallel layout, batching limits, KV
 * cache and arrival schedule.
 */
#ifndef FABRICSIM_SERVING_MEASURED_RUN_CONFIG_H
#define FABRICSIM_SERVING_MEASURED_RUN_CONFIG_H

#include "measured-run.h"
#include "model-spec.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fabricsim
{

/**
 * \brief What a run's meta.json (engine_kwargs, kv_cache, hardware) and config.json say. Keys a
 * run leaves out take vLLM's defaults; `assumed` lists them.
 */
struct MeasuredRunConfig
{
    std::string dir;             //!< the run directory
    std::string label;           //!< its last path component
    std::string metaPath;        //!< RUN/vllm/meta.json
    std::string model;           //!< model id ("meta-llama/Llama-3.1-8B")
    std::string vllmVersion;     //!< vllm_version ("" when absent)
    std::string device;          //!< the GPU as the run names it
    std::string deviceSource;    //!< where that name came from ("meta.json hardware.device_name")
    uint32_t tp = 1;             //!< tensor_parallel_size
    uint32_t pp = 1;             //!< pipeline_parallel_size
    uint32_t dp = 1;             //!< data_parallel_size
    bool expertParallel = false; //!< enable_expert_parallel
    uint32_t maxNumSeqs = 256;   //!< max_num_seqs
    uint32_t maxNumBatchedTokens = 8192; //!< max_num_batched_tokens
    bool chunkedPrefill = true;          //!< enable_chunked_prefill (on in vLLM V1)
    std::string dtype = "bfloat16";      //!< dtype ("auto": the checkpoint's, bf16 here)
    std::string kvCacheDtype = "auto";   //!< kv_cache_dtype
    std::string quantization;            //!< quantization ("" none)
    uint32_t blockSize = 16;             //!< KV block size (tokens)
    double gpuMemoryUtilization = 0.9;   //!< share of GPU memory the engine may use
    uint64_t numGpuBlocks = 0;           //!< KV blocks the engine allocated (0: not recorded)
    bool prefixCaching = true;           //!< enable_prefix_caching (vLLM's default: on)
    /// The EP token exchange: resolved_config.parallel_config.all2all_backend where recorded,
    /// else vLLM's default, allgather_reducescatter.
    std::string all2allBackend = "allgather_reducescatter";
    uint64_t seed = 0;                //!< engine seed
    std::vector<std::string> assumed; //!< keys absent from the run, taken at vLLM defaults

    /// Accelerators the run used: tp x pp x dp.
    uint32_t Gpus() const
    {
        return tp * pp * dp;
    }
};

/**
 * \brief Read RUN/vllm/meta.json (and RUN/config.json for the GPU when meta.json has no
 * hardware block). InputError naming the file and key for a missing file, a wrong type or a
 * setting fabricsim cannot replay (quantisation other than fp8, an unknown dtype, expert
 * parallelism off with dp > 1 on a MoE model is left to MeasuredRunScenario).
 */
MeasuredRunConfig ReadMeasuredRunConfig(const std::string& runDir);

/**
 * \brief The hardware preset for a GPU name as runs give it ("NVIDIA RTX PRO 6000 Blackwell
 * Server Edition", LLMServingSim's "RTXPRO6000", "NVIDIA H100 80GB HBM3"); nullopt when none
 * matches. Names are compared on their letters and digits, case ignored, without a leading
 * "NVIDIA" / "GeForce" / "AMD Instinct"; the longest preset name the GPU's name starts with
 * wins. A name that says a variant (server, PCIe, NVL, Max-Q) matches only a preset named with
 * it, and a memory size it states ("40GB") must be the preset's: another part of the same
 * number is not priced as the preset's. LLMServingSim's bare "RTXPRO6000" is the Server Edition
 * (its config gives that SKU's 1597 GB/s, and the same lab's later runs name the Server Edition).
 */
std::optional<std::string> HardwarePresetForDevice(const std::string& device);

/**
 * \brief The scenario that replays \p run: the model preset, the GPU's preset, the parallel
 * layout (expert parallelism over dp x tp with data-parallel attention, as vLLM's
 * enable_expert_parallel), batching, KV cache (block size, memory share, the block count the
 * engine allocated where recorded), the engine seed, requests from \p tracePath, and the GPUs
 * on one switch at the bus bandwidth the preset's collectives reach (collective_bw), else its
 * scale-up bandwidth (PCIe x16 for workstation cards; 1 us one way, ASSUMED), lossless. InputError
 * naming meta.json for an unknown GPU or model.
 */
nlohmann::json MeasuredRunScenario(const MeasuredRunConfig& run, const std::string& tracePath);

/**
 * \brief MeasuredRunScenario's scenario for a GPU preset and a model already resolved: \p
 * modelField is what the scenario's "model" says (a preset name, or an object of a preset or
 * config.json with overrides) and \p requests its serving.requests.
 */
nlohmann::json ServingReplayScenario(const MeasuredRunConfig& run,
                                     const std::string& hwPreset,
                                     const ModelSpec& model,
                                     const nlohmann::json& modelField,
                                     const nlohmann::json& requests);

/**
 * \brief The arrival schedule of \p reqs as a fabricsim request trace (JSON lines: arrival_s,
 * prompt_tokens, output_tokens): each request's queued_ts minus the first one's, so the
 * simulated requests arrive when the engine took the measured ones.
 */
std::string ArrivalTrace(const std::vector<MeasuredRequest>& reqs);

} // namespace fabricsim

#endif
