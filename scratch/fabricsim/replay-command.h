/*
 * `fabricsim replay TRACE... --scenario S.json`: imports PyTorch profiler (Kineto) or Chakra
 * traces, replays them on the scenario's fabric (measured compute as recorded or scaled to
 * another accelerator, communication re-simulated) and reports the replayed step time against
 * the recorded one, with the change attributed to compute and to each collective.
 */
#ifndef FABRICSIM_REPLAY_COMMAND_H
#define FABRICSIM_REPLAY_COMMAND_H

#include <iosfwd>
#include <string>
#include <vector>

namespace fabricsim
{

/// Parsed command line of `fabricsim replay`.
struct ReplayCommandOptions
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

/// Parses the arguments after "replay". \throws fabricsim::InputError naming the option
ReplayCommandOptions ParseReplayArgs(const std::vector<std::string>& args);

/// Runs the command. \return 0 when the replay completed, 1 when ops got stuck
int RunReplayCommand(const ReplayCommandOptions& opt, std::ostream& out, std::ostream& err);

} // namespace fabricsim

#endif
