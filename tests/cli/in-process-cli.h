/*
 * The CLI run in process, as main() runs it (an InputError exits 2), for the tests of its
 * commands.
 */
#ifndef FABRICSIM_TESTS_IN_PROCESS_CLI_H
#define FABRICSIM_TESTS_IN_PROCESS_CLI_H

#include <string>
#include <vector>

namespace fabricsim
{

/// Output of one in-process CLI call.
struct CliResult
{
    int code = 0;
    std::string out;
    std::string err;
};

/// Run the CLI like main() does (InputError -> 2).
CliResult RunCli(const std::vector<std::string>& args);

} // namespace fabricsim

#endif
