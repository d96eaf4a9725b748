/*
 * The CLI's help: each command's synopsis and what it does, as `fabricsim help [COMMAND]` and
 * `fabricsim COMMAND --help` print it.
 */
#ifndef FABRICSIM_COMMAND_USAGE_H
#define FABRICSIM_COMMAND_USAGE_H

#include <string>

namespace fabricsim
{

/// The usage of every command, then the options every command takes.
std::string Usage();

/// The usage of \p command, or nullptr when there is no such command.
const char* CommandUsageText(const std::string& command);

/// What Dispatch takes for every command, printed after each command's usage.
const char* CommonOptionsText();

} // namespace fabricsim

#endif
