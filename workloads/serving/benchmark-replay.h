/*
 * The scenario that replays one benchmark result (benchmark-result.h): the model and GPU the
 * user names, the parallel layout the file's name tags (or the user gives), vLLM's engine
 * defaults for the version stated, and the benchmark's client: a closed loop of C requests
 * with its warm-up, or an open loop at its rate.
 */
#ifndef FABRICSIM_SERVING_BENCHMARK_REPLAY_H
#define FABRICSIM_SERVING_BENCHMARK_REPLAY_H

#include "benchmark-result.h"
#include "measured-run-config.h"
#include "model-spec.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace fabricsim
{

/// What the user states about the deployment behind a folder of results.
struct BenchmarkDeployment
{
    ModelSpec model;
    nlohmann::json modelField;  //!< the scenario's "model": a preset name or {"config": path}
    std::string modelName;      //!< for labels (the preset, or the config's path)
    std::string hardwarePreset; //!< HardwareSpec preset
    uint32_t gpus = 0;          //!< --gpus (0: the layout's)
    std::optional<ParallelTag> parallel; //!< --parallel (else the file name's, else tp = gpus)
    std::string vllmVersion;             //!< for the engine defaults ("": the newest)
    std::optional<uint64_t> warmups;     //!< --warmups (else 2 x C for InferenceX, 0 for vLLM)
};

/// One result's replay: the scenario and what was assumed to build it.
struct BenchmarkReplay
{
    nlohmann::json scenario;
    MeasuredRunConfig engine;         //!< the engine the scenario stands for
    uint64_t warmups = 0;             //!< warm-up requests before the measured ones
    std::vector<std::string> assumed; //!< what neither the file nor the user said
};

/// Builds the replay of \p result on \p dep. InputError naming the file (or the command line's
/// option) for a layout that does not fit the GPUs, or a client the serving loop cannot run
/// (bursty arrivals).
BenchmarkReplay BenchmarkReplayScenario(const BenchmarkResult& result,
                                        const BenchmarkDeployment& dep);

} // namespace fabricsim

#endif
