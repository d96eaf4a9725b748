/*
 * `fabricsim validate-serving RESULTS... --model M --hardware GPU`: replays serving benchmark
 * result files (vLLM bench serve's, InferenceX's) point by point and holds each simulated
 * figure to the measured one; optionally fits the frontend's per-request and per-prompt-token
 * costs on declared points first and scores the rest.
 */
#ifndef FABRICSIM_VALIDATE_BENCHMARKS_H
#define FABRICSIM_VALIDATE_BENCHMARKS_H

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace fabricsim
{

struct ValidateServingOptions;

/// Whether \p arg names benchmark results (a *.json file, or a folder without vllm/meta.json)
/// rather than a measured run directory.
bool IsBenchmarkInput(const std::string& arg);

/// Runs the benchmark replays of \p opt (its `runs` are benchmark inputs). Returns 0, or 3 when
/// a point could not finish every request.
int RunValidateBenchmarks(const ValidateServingOptions& opt, std::ostream& out, std::ostream& err);

} // namespace fabricsim

#endif
