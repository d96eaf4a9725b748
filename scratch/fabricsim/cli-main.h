/*
 * The fabricsim command line as a function: fabricsim and fabricsim-mpi share it.
 */
#ifndef FABRICSIM_CLI_MAIN_H
#define FABRICSIM_CLI_MAIN_H

#include <string>
#include <vector>

namespace fabricsim
{

/// Runs one command line (the arguments after the program name) and returns its exit code:
/// 2 for bad input (the message on stderr), 1 for an internal error. The caller has set the
/// time resolution.
int RunCli(std::vector<std::string> args);

} // namespace fabricsim

#endif
