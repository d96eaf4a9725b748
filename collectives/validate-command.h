/*
 * The `validate` command of the fabricsim CLI: load a schedule file (MSCCL XML or JSON IR),
 * validate it, print the verdict and every problem.
 */
#ifndef FABRICSIM_VALIDATE_COMMAND_H
#define FABRICSIM_VALIDATE_COMMAND_H

#include <ostream>
#include <string>

namespace fabricsim
{

/**
 * Validates every schedule in \p file.
 *
 * \param coll expected collective ("" = take it from the file)
 * \param ranks expected rank count (0 = take it from the file)
 * \param out verdicts, problems and notes
 * \param err warnings and input errors
 * \return 0 when every schedule is valid, 1 when one is invalid (every problem printed),
 *         2 when the file is unreadable or malformed or the arguments are wrong (the message
 *         names the file or argument and what is wrong)
 */
int RunValidateCommand(const std::string& file,
                       const std::string& coll,
                       int ranks,
                       std::ostream& out,
                       std::ostream& err);

} // namespace fabricsim

#endif
