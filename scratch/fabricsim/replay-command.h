/*
 * `fabricsim replay TRACE... --scenario S.json`: imports PyTorch profiler (Kineto) or Chakra
 * traces, replays them on the scenario's fabric (measured compute as recorded or scaled to
 * another accelerator, communication re-simulated) and reports the replayed step time against
 * the recorded one, with the change attributed to compute and to each collective.
 */
#ifndef FABRICSIM_REPLAY_COMMAND_H
#define FABRICSIM_REPLAY_COMMAND_H

#include "ns3/replay-runner.h"

#include <iosfwd>
#include <string>
#include <vector>

namespace fabricsim
{

/// Parsed command line of `fabricsim replay`.
using ReplayCommandOptions = ReplayRunOptions;

/// Parses the arguments after "replay". \throws fabricsim::InputError naming the option
ReplayCommandOptions ParseReplayArgs(const std::vector<std::string>& args);

/// Runs the command. \return 0 when the replay completed, 1 when ops got stuck
int RunReplayCommand(const ReplayCommandOptions& opt, std::ostream& out, std::ostream& err);

} // namespace fabricsim

#endif
