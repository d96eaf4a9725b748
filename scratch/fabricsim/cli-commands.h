/*
 * Sub-command dispatch of the fabricsim CLI (kept out of main.cc so tests can call it).
 */
#ifndef FABRICSIM_CLI_COMMANDS_H
#define FABRICSIM_CLI_COMMANDS_H

#include <iosfwd>
#include <string>
#include <vector>

namespace fabricsim
{

/// Run one CLI invocation (arguments after the program name). Returns the exit code;
/// throws fabricsim::InputError for bad input (exit code 2 in main).
int Dispatch(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

/// Path of the scenario `fabricsim run` uses without an argument.
std::string DefaultScenarioPath();

} // namespace fabricsim

#endif
