/*
 * `fabricsim validate-serving RUN_DIR... --out DIR`: replays measured vLLM serving runs
 * (LLMServingSim's bench layout) with the serving loop and reports fabricsim's error per metric
 * beside the other simulator's: the first measured error of the main job. Given benchmark
 * result files or folders instead (with --model and --hardware), it replays those
 * (validate-benchmarks.h).
 */
#ifndef FABRICSIM_VALIDATE_SERVING_COMMAND_H
#define FABRICSIM_VALIDATE_SERVING_COMMAND_H

#include "ns3/benchmark-validation.h"

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace fabricsim
{

/// The shipped compute calibration a replay on \p hardwarePreset prices compute with: the RTX
/// PRO 6000's own (its GEMMs, attention and elementwise kernels measured on the Server Edition) for
/// either RTX PRO 6000, H200's own for H200, else the H100 fit carried by datasheet peaks
/// (scenarios/compute/h{100,200}-sxm-vllm-0.24.0.json).
std::string DefaultComputeCalibrationPath(const std::string& hardwarePreset);

/// Parsed command line of `fabricsim validate-serving`.
struct ValidateServingOptions
{
    std::vector<std::string> runs; ///< run directories
    std::string outDir = "out";
    /// The flow-level model by default: a packet-level replay of a TP2 run's 300 k all-reduces
    /// takes tens of minutes, and two GPUs on one switch hold no congestion to resolve.
    std::string backend = "analytical";
    /// --compute-calibration: the kernel calibration the replay prices compute with; empty for
    /// the plain roofline (--compute-calibration none).
    std::string computeCalibration;
    /// No --compute-calibration: each run's GPU's DefaultComputeCalibrationPath.
    bool calibrationPerGpu = true;
    std::vector<std::string> sets; ///< --set overrides applied to every run's scenario
    // Benchmark result files (validate-benchmarks.h) only:
    /// --model, --hardware, --gpus, --parallel, --vllm-version, --warmups
    BenchmarkDeploymentArgs deployment;
    uint32_t fitConcurrency = 0; ///< --fit-frontend conc=C (0: no fit)
    /// --fitted-on conc=C[,C...]: the --set costs were fitted on the points at these C
    /// (scripts/fit-benchmark-overheads); reported as fit, left out of the held-out medians
    std::vector<uint32_t> fittedOn;
    std::vector<std::string> ns3Args; ///< --ns3::Type::Attr=value
};

/// Parses the arguments after "validate-serving". \throws fabricsim::InputError naming the option
ValidateServingOptions ParseValidateServingArgs(const std::vector<std::string>& args);

/**
 * Runs the command: per run, DIR/<run>.scenario.json and DIR/<run>.requests.jsonl (the replay,
 * runnable with `fabricsim run`), then DIR/summary.json (every metric, measured, simulated,
 * error, the other simulator's) and DIR/validation.md (the tables), printed too.
 * \return 0, or 3 when a run could not finish every request
 */
int RunValidateServingCommand(const ValidateServingOptions& opt,
                              std::ostream& out,
                              std::ostream& err);

} // namespace fabricsim

#endif
