/*
 * Replay of recorded step programs (the JSON lines a serving run records): every step and KV
 * transfer runs again over a Collective API, each starting when what it waited for in the
 * original run has finished. With nothing changed the step times come out the same; on another
 * fabric or backend the same work shows the new times.
 */
#ifndef FABRICSIM_SERVING_PROGRAM_REPLAY_H
#define FABRICSIM_SERVING_PROGRAM_REPLAY_H

#include "step-executor.h"
#include "step-program.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace fabricsim
{

class CollectiveApi;

/**
 * \brief Timing of a replayed run.
 */
struct ReplayResult
{
    std::map<uint64_t, StepStats> steps;      //!< per step id
    std::map<int64_t, int64_t> transferEndPs; //!< per transfer id
    std::vector<std::string> incomplete;      //!< steps or transfers that never ran or ended
};

/**
 * \brief Replays a program trace (see the file comment).
 */
class ProgramReplay
{
  public:
    /**
     * \brief Parse the records (JSON objects with "type" "step" or "transfer").
     * fabricsim::InputError naming \p file and "line N" on a malformed record or a dependency on an
     * id that is not in the trace.
     */
    ProgramReplay(const std::vector<nlohmann::json>& records, const std::string& file = "");

    /// Read a JSON-lines trace file.
    static ProgramReplay Load(const std::string& path);

    /// Schedule the work that waits for nothing over \p api (then run the event loop).
    void Start(CollectiveApi& api);

    /// Collect the timing once the event loop has run dry.
    ReplayResult Finish();

    /// Steps in the trace.
    size_t NumSteps() const
    {
        return m_steps.size();
    }

  private:
    /// A step or a transfer waiting for its dependencies.
    struct Node
    {
        bool isStep = true;
        uint64_t id = 0;
        size_t pending = 0; //!< dependencies not finished
        bool launched = false;
    };

    void Finished(bool isStep, uint64_t id);
    void MaybeLaunch(Node& n);
    void LaunchStep(uint64_t id);
    void LaunchTransfer(int64_t id);
    void TransferPartDone(int64_t id);

    std::map<uint64_t, std::shared_ptr<StepProgram>> m_steps;
    std::map<int64_t, TransferRecord> m_transfers;
    std::map<int64_t, uint32_t> m_partsLeft; //!< transfer parts (layer-wise) or sends (bulk) left
    std::map<std::pair<bool, uint64_t>, Node> m_nodes;
    std::map<std::pair<bool, uint64_t>, std::vector<std::pair<bool, uint64_t>>> m_dependents;
    CollectiveApi* m_api = nullptr;
    std::unique_ptr<StepExecutor> m_exec;
    ReplayResult m_result;
};

/// Load, Start, run \p runEventLoop, Finish.
ReplayResult ReplayPrograms(const std::vector<nlohmann::json>& records,
                            CollectiveApi& api,
                            const std::function<void()>& runEventLoop);

} // namespace fabricsim

#endif
