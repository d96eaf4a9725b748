/*
 * Serving benchmark results replayed point by point (`fabricsim validate-serving RESULTS...`):
 * each result file read with the replay scenario of the deployment the user states, the
 * frontend's per-request and per-prompt-token costs fitted on declared points run without them
 * (TTFT residual = request cost + per-token cost x input length), and each point run as an
 * inference scenario. Comparing, writing and printing the figures are the CLI's.
 */
#ifndef FABRICSIM_BENCHMARK_VALIDATION_H
#define FABRICSIM_BENCHMARK_VALIDATION_H

#include "benchmark-comparison.h"
#include "benchmark-replay.h"
#include "benchmark-result.h"
#include "output-writer.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace fabricsim
{

/// The deployment behind the results, as the user states it (validate-serving's --model,
/// --hardware, --gpus, --parallel, --vllm-version, --warmups).
struct BenchmarkDeploymentArgs
{
    std::string model;       ///< a model preset or a config.json path
    std::string hardware;    ///< a hardware preset
    uint32_t gpus = 0;       ///< 0: the layout's
    std::string parallel;    ///< tp8|tep8|dep8 ("": each file name's)
    std::string vllmVersion; ///< engine defaults ("": the newest)
    int64_t warmups = -1;    ///< -1: the format's client default
};

/// \p args checked (InputError naming the option) and resolved: the model read, the presets
/// known, the parallel tag parsed.
BenchmarkDeployment StatedDeployment(const BenchmarkDeploymentArgs& args);

/// How the points run (validate-serving's options).
struct BenchmarkRunOptions
{
    std::vector<std::string> sets;  ///< --set overrides applied to every point's scenario
    uint32_t fitConcurrency = 0;    ///< --fit-frontend conc=C (0: no fit)
    std::vector<uint32_t> fittedOn; ///< --fitted-on: the --set costs were fitted at these C
    std::string calibration;        ///< the compute calibration's absolute path ("": roofline)
    std::string backend = "analytical";
    std::string outDir;
    std::vector<std::string> ns3Args;
};

/// One result and its replay, read and built before anything runs.
struct BenchmarkPoint
{
    BenchmarkResult result;
    BenchmarkReplay replay;
    bool fit = false;       ///< one of the points the frontend costs are (or were) fitted on
    nlohmann::json summary; ///< the simulated run's summary.json
    bool complete = true;
};

/// The points of \p inputs (result files, or folders of them) replayed on \p dep; InputError
/// for two results of one name, --fit-frontend beside --set frontend costs, or a declared
/// concurrency no result was measured at.
std::vector<BenchmarkPoint> ReadBenchmarkPoints(const std::vector<std::string>& inputs,
                                                const BenchmarkDeployment& dep,
                                                const BenchmarkRunOptions& opt);

/// \p scenario's serving.execution frontend costs set to \p f (seconds, 9 digits).
void SetFrontendCosts(nlohmann::json& scenario, const FrontendFit& f);

/// Runs \p p's scenario (\p overheads: request and per-token seconds, or none) with the model
/// config and calibration by absolute path, staged in \p dir; returns its summary.
nlohmann::json RunBenchmarkPoint(BenchmarkPoint& p,
                                 const BenchmarkRunOptions& opt,
                                 const OutputDir& dir,
                                 const FrontendFit* overheads,
                                 std::ostream& err);

/// With --fit-frontend, the frontend costs fitted on the fit points run without them (nullopt
/// otherwise); \p fitJson receives summary.json's "frontend_fit" (null without a fit).
std::optional<FrontendFit> FitFrontendCosts(std::vector<BenchmarkPoint>& points,
                                            const BenchmarkRunOptions& opt,
                                            const OutputDir& dir,
                                            std::ostream& err,
                                            nlohmann::json& fitJson);

} // namespace fabricsim

#endif
