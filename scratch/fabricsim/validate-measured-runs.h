/*
 * `fabricsim validate-serving RUN_DIR...`: measured vLLM serving runs (RUN/vllm/meta.json,
 * requests.jsonl, validation/summary.txt where present) replayed with their own arrivals; each
 * run's TTFT, TPOT, E2E and throughput held to the measured ones and to the other simulator's.
 */
#ifndef FABRICSIM_VALIDATE_MEASURED_RUNS_H
#define FABRICSIM_VALIDATE_MEASURED_RUNS_H

#include <iosfwd>

namespace fabricsim
{

struct ValidateServingOptions;

/// Runs the measured-run replays of \p opt (its `runs` are run directories): per run,
/// DIR/<run>.scenario.json, .requests.jsonl, .command and .per-request.csv, then
/// DIR/summary.json and DIR/validation.md, printed too. Returns 0, or 3 when a run could not
/// finish every request.
int RunValidateMeasuredRuns(const ValidateServingOptions& opt,
                            std::ostream& out,
                            std::ostream& err);

} // namespace fabricsim

#endif
