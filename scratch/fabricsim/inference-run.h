/*
 * `fabricsim run` on an inference scenario (one with a "serving" block): the serving loop of
 * workloads/serving drives collectives (ScheduleCollectives) over the packet-level fabric or the
 * analytical flow model; the output is summary.json with the serving metrics and the per-step
 * breakdown plus the fabric's totals, a readable table on stdout, and on request the Perfetto
 * timeline and the replayable per-rank program trace. The run goes through
 * ns3::FabricCollectiveHelper and ns3::FabricInferenceHelper, as scenario programs do.
 */
#ifndef FABRICSIM_INFERENCE_RUN_H
#define FABRICSIM_INFERENCE_RUN_H

#include "ns3/inference-runner.h"

#include <nlohmann/json.hpp>

#include <iosfwd>
#include <string>

namespace fabricsim
{

/**
 * Run an inference scenario. Returns the exit code: 0 when every request finished, 3 when the
 * run could not finish (the stuck ranks and what they wait for are printed and written).
 * Throws InputError on bad input before anything is written.
 */
int RunInferenceScenario(const nlohmann::json& doc,
                         const std::string& file,
                         const InferenceRunOptions& opt,
                         std::ostream& out,
                         std::ostream& err);

} // namespace fabricsim

#endif
