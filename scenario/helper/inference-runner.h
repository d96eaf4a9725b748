/*
 * An inference scenario run on its fabric: the scenario read (the serving part by
 * InferenceScenario, the fabric part by the fabric reader), the backend built, the serving
 * loop run through ns3::FabricCollectiveHelper and ns3::FabricInferenceHelper (with the
 * collective memo on request), and the result kept, nothing written: the CLI's `run` writes
 * and prints it (scratch/fabricsim/inference-run.h).
 */
#ifndef FABRICSIM_INFERENCE_RUNNER_H
#define FABRICSIM_INFERENCE_RUNNER_H

#include "fabric-runner.h"
#include "inference-scenario.h"
#include "serving-metrics.h"

#include <nlohmann/json.hpp>

#include <iosfwd>
#include <string>
#include <vector>

namespace fabricsim
{

struct InferenceRunOptions
{
    RunOptions run;
    std::string backend = "packet"; ///< "packet" or "analytical"
    bool timeline = false;          ///< --trace: DIR/timeline.json (Chrome trace / Perfetto)
    bool record = false;            ///< --record: DIR/programs.jsonl (replayable)
    bool memo = false;              ///< --memo on: repeated collectives simulated once
    uint32_t memoVerify = 0;        ///< --memo verify[=N]: every Nth hit simulated and compared
};

/// True when the scenario document is an inference scenario.
bool IsInferenceScenario(const nlohmann::json& doc);

/// A finished inference run, before anything is written.
struct InferenceRunResult
{
    InferenceScenario scenario;     ///< as parsed (with the options' recording switches)
    ServingResult serving;          ///< what the serving loop produced
    nlohmann::json summary;         ///< summary.json: serving metrics, fabric totals, stuck
    std::vector<std::string> stuck; ///< why requests did not finish (empty when all did)
    double wallS = 0;               ///< wall-clock seconds of the run
    uint64_t events = 0;            ///< simulator events (packet backend)
    nlohmann::json memo;            ///< the collective memo's figures (null when off)
};

/**
 * Parse, build and run an inference scenario; write nothing but, when recording programs, the
 * program records to \p programs as the run goes (kept in the result when it is null). Throws
 * InputError on bad input before the run starts. The backend (and ns-3's simulator) is torn
 * down on return.
 */
InferenceRunResult ExecuteInferenceScenario(const nlohmann::json& doc,
                                            const std::string& file,
                                            const InferenceRunOptions& opt,
                                            std::ostream& err,
                                            std::ostream* programs = nullptr);

} // namespace fabricsim

#endif
