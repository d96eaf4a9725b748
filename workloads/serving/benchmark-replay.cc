#include "benchmark-replay.h"

#include "hardware-spec.h"
#include "input-error.h"

#include <cmath>

namespace fabricsim
{

using nlohmann::json;

namespace
{

constexpr const char* kCommandLine = "<command line>";

} // namespace

BenchmarkReplay
BenchmarkReplayScenario(const BenchmarkResult& result, const BenchmarkDeployment& dep)
{
    BenchmarkReplay r;
    ParallelTag layout;
    if (dep.parallel)
    {
        layout = *dep.parallel;
    }
    else if (!result.parallelTag.empty())
    {
        const std::optional<ParallelTag> tag = ParseParallelTag(result.parallelTag);
        if (!tag)
        {
            throw InputError(result.path,
                             "file name",
                             "a parallel layout tp<N>, tep<N>, dep<N> or dp<N> (or --parallel)",
                             "\"" + result.parallelTag + "\"");
        }
        layout = *tag;
    }
    else
    {
        layout.tp = dep.gpus > 0 ? dep.gpus : 1;
        r.assumed.push_back("parallel layout: tp" + std::to_string(layout.tp)
                            + " (the file names none; --parallel sets it)");
    }
    if (dep.gpus > 0 && layout.Gpus() != dep.gpus)
    {
        throw InputError(
            kCommandLine,
            "--gpus",
            "the GPUs of the layout "
                + (result.parallelTag.empty() ? std::string("given") : result.parallelTag) + " ("
                + std::to_string(layout.Gpus()) + ")",
            std::to_string(dep.gpus));
    }
    if (result.requestRate > 0 && std::fabs(result.burstiness - 1.0) > 1e-12)
    {
        throw InputError(result.path,
                         "burstiness",
                         "1 (Poisson arrivals; gamma-distributed gaps are not modelled)",
                         std::to_string(result.burstiness));
    }

    const HardwareSpec hw = HardwareSpec::Preset(dep.hardwarePreset);
    const VllmEngineDefaults defaults
        = VllmServeDefaults(dep.vllmVersion, hw.hbmCapacityBytes, dep.hardwarePreset);
    r.assumed.push_back(
        "vLLM " + (dep.vllmVersion.empty() ? std::string("newest") : dep.vllmVersion)
        + " serve defaults: max_num_batched_tokens " + std::to_string(defaults.maxNumBatchedTokens)
        + ", max_num_seqs " + std::to_string(defaults.maxNumSeqs)
        + ", block_size 16, gpu_memory_utilization 0.9");
    for (const std::string& d : result.derived)
    {
        r.assumed.push_back(d);
    }

    MeasuredRunConfig& e = r.engine;
    e.dir = result.path;
    e.label = result.label;
    e.metaPath = result.path;
    e.model = dep.modelName;
    e.vllmVersion = dep.vllmVersion;
    e.device = dep.hardwarePreset;
    e.deviceSource = "--hardware";
    e.tp = layout.tp;
    e.dp = layout.dp;
    e.expertParallel = layout.expertParallel;
    e.maxNumBatchedTokens = defaults.maxNumBatchedTokens;
    e.maxNumSeqs = defaults.maxNumSeqs;

    if (dep.warmups)
    {
        r.warmups = *dep.warmups;
    }
    else if (result.format == "inferencex")
    {
        // InferenceX's client script runs 2 x C warm-up requests before each measured run.
        r.warmups = 2ULL * result.concurrency;
        r.assumed.push_back("warm-up: 2 x C = " + std::to_string(r.warmups)
                            + " requests (InferenceX's client; --warmups sets it)");
    }

    json requests = {{"count", result.numPrompts},
                     {"prompt_tokens", result.inputTokens},
                     {"output_tokens", result.outputTokens},
                     {"rate_per_s", result.requestRate}};
    if (result.concurrency > 0)
    {
        requests["concurrency"] = result.concurrency;
    }
    if (r.warmups > 0)
    {
        requests["warmup"] = r.warmups;
    }
    r.scenario = ServingReplayScenario(e, dep.hardwarePreset, dep.model, dep.modelField, requests);
    r.scenario["name"] = "benchmark " + result.label + ": " + dep.modelName + " on "
                         + std::to_string(e.Gpus()) + " x " + dep.hardwarePreset;
    return r;
}

} // namespace fabricsim
