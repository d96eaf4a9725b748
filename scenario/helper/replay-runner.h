/*
 * Traces replayed on a scenario's fabric (`fabricsim replay`): PyTorch profiler (Kineto),
 * Chakra or recorded program traces imported, then replayed three times: A, the recorded
 * timeline (recorded compute and communication: checks the dependencies the importer
 * inferred); B, compute scaled (--compute-scale, --hw-to); C, communication re-simulated on the
 * chosen backend (with the collective memo on request). The change from A to C is attributed
 * to compute (B - A) and to each collective (C - B). Writing and printing are the CLI's.
 */
#ifndef FABRICSIM_REPLAY_RUNNER_H
#define FABRICSIM_REPLAY_RUNNER_H

#include "fabric-scenario.h"
#include "trace-replay.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace fabricsim
{

/// What a replay is asked for (fabricsim replay's command line).
struct ReplayRunOptions
{
    std::vector<std::string> traces;
    std::string scenario;
    std::string format = "auto"; ///< "auto", "kineto", "chakra" or "program" (fabricsim --record)
    int64_t step = -1;           ///< Kineto: one ProfilerStep#N; -1 = all
    std::string backend = "analytical";
    std::string algorithm = "auto";
    double computeScale = 1.0;
    std::string hwFrom;     ///< accelerator the trace ran on ("" = from the trace)
    std::string hwTo;       ///< accelerator to scale compute to (roofline ratios per op class)
    uint32_t worldSize = 0; ///< ranks of the job when the traces do not say (--ranks)
    bool chakraCpuOps = false;
    bool exportChakra = false; ///< also write DIR/trace.<rank>.et
    bool memo = false;         ///< --memo on: repeated collectives simulated once (packet backend)
    uint32_t memoVerify = 0;   ///< --memo verify[=N]: every Nth hit simulated and compared
    std::string outDir = "out";
    std::vector<std::string> sets;
    std::vector<std::string> ns3Args;
};

/// The scenario and the imported trace, checked before anything runs.
struct ReplayInputs
{
    nlohmann::json document; ///< the scenario as read (after --set), for provenance.json
    FabricScenario sc;
    ImportedTrace trace;
    ReplayOptions scaled; ///< B's and C's compute scaling and the collectives' algorithm
    std::string hwFrom;   ///< the accelerator compute is scaled from (with --hw-to)
};

/// The three replays and what the report says of them.
struct ReplayResult
{
    ReplayRun recorded;      ///< A
    ReplayRun computeScaled; ///< B
    ReplayRun replayed;      ///< C
    nlohmann::json memo;     ///< the collective memo's figures (null without one)
    nlohmann::json report;   ///< replay.json
    std::string communicationCsv;
    uint32_t steps = 1;      ///< steps the trace holds (the most of any rank)
    int64_t recordedPs = -1; ///< the recorded span (-1: the trace does not say)
};

/// Reads the scenario (applying its simulator settings) and imports the traces: InputError
/// on anything wrong with them.
ReplayInputs ReadReplayInputs(const ReplayRunOptions& opt);

/// Replays \p in three times (A, B, C above) and builds the report.
ReplayResult ExecuteReplay(const ReplayRunOptions& opt, const ReplayInputs& in);

} // namespace fabricsim

#endif
