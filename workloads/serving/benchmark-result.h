/*
 * A serving benchmark's result file as public serving tables publish it, read into one form:
 * vLLM `bench serve --save-result` (milliseconds, `*_ms` keys, means beside medians and
 * percentiles) and InferenceX's (seconds, medians and p99 only; input and output lengths,
 * concurrency and parallel layout in the file name). What a replay needs from either: the
 * request mix, the client's loop, and the measured figures by vLLM's names.
 */
#ifndef FABRICSIM_SERVING_BENCHMARK_RESULT_H
#define FABRICSIM_SERVING_BENCHMARK_RESULT_H

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fabricsim
{

/// A parallel layout as serving tables tag it: tp<N> (tensor parallel), tep<N> (tensor parallel
/// with the experts sharded over it: vLLM --enable-expert-parallel at DP 1), dep<N> (data
/// parallel attention with expert parallel MoE), dp<N>.
struct ParallelTag
{
    uint32_t tp = 1;
    uint32_t dp = 1;
    bool expertParallel = false;

    uint32_t Gpus() const
    {
        return tp * dp;
    }
};

/// Parses "tp8", "tep8", "dep8", "dp2" (case-insensitive); nullopt for anything else.
std::optional<ParallelTag> ParseParallelTag(const std::string& tag);

/// One benchmark result file.
struct BenchmarkResult
{
    std::string path;                 //!< the file
    std::string label;                //!< its name without ".json"
    std::string format;               //!< "vllm" (bench serve --save-result) or "inferencex"
    std::string model;                //!< model_id as recorded ("" when absent)
    uint64_t numPrompts = 0;          //!< num_prompts (the measured requests)
    uint64_t completed = 0;           //!< completed
    uint32_t concurrency = 0;         //!< max_concurrency (0: no limit)
    double requestRate = 0;           //!< request_rate per second (0: "inf", all sent at once)
    double burstiness = 1;            //!< burstiness (1: Poisson arrivals)
    uint64_t inputTokens = 0;         //!< input length per request (the file name's, else the mean)
    uint64_t outputTokens = 0;        //!< output length per request
    std::vector<uint64_t> inputLens;  //!< per request, where the file lists them
    std::vector<uint64_t> outputLens; //!< per request, where the file lists them
    std::string parallelTag;          //!< from an InferenceX file name ("" otherwise)
    double durationS = 0;             //!< duration (s)
    /// The measured figures by vLLM bench serve's names, latencies in milliseconds
    /// ("median_ttft_ms", "p99_tpot_ms", "mean_e2el_ms", "output_throughput", ...).
    std::map<std::string, double> measured;
    /// What the file does not say and was derived ("input length: total_input_tokens /
    /// completed").
    std::vector<std::string> derived;
};

/// Reads one result file; the format is told by its keys (median_ttft_ms: vLLM; median_ttft:
/// InferenceX, whose file name must then carry the lengths and concurrency). InputError
/// naming the file and key for anything missing, of the wrong type or inconsistent (lengths
/// that do not add up to the totals).
BenchmarkResult ReadBenchmarkResult(const std::string& path);

/// The *.json files of \p dir, sorted by concurrency-aware natural order of their names.
/// InputError when the folder cannot be read or holds none.
std::vector<std::string> BenchmarkResultFiles(const std::string& dir);

/// vLLM's serving-engine defaults (`vllm serve`, the OpenAI API server) for a GPU with
/// \p memoryBytes named \p gpuName at vLLM \p version ("0.8.5", "0.24.0"; "" or "nightly":
/// the newest): from 0.9 on, 8192 batched tokens and 1024 sequences on GPUs of 70 GiB or more
/// other than A100, else 2048 and 256; before 0.9, 2048 and 256.
struct VllmEngineDefaults
{
    uint32_t maxNumBatchedTokens = 2048;
    uint32_t maxNumSeqs = 256;
};
/// Whether \p version is one VllmServeDefaults reads ("0.9.2", "v0.24.0rc1", "nightly", "").
bool IsVllmVersion(const std::string& version);
VllmEngineDefaults VllmServeDefaults(const std::string& version,
                                     double memoryBytes,
                                     const std::string& gpuName);

} // namespace fabricsim

#endif
