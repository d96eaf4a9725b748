#include "in-process-cli.h"

#include "cli-commands.h"
#include "input-error.h"

#include <sstream>

namespace fabricsim
{

CliResult
RunCli(const std::vector<std::string>& args)
{
    CliResult r;
    std::ostringstream out;
    std::ostringstream err;
    try
    {
        r.code = Dispatch(args, out, err);
    }
    catch (const fabricsim::InputError& e)
    {
        err << "fabricsim: error: " << e.what() << "\n";
        r.code = 2;
    }
    r.out = out.str();
    r.err = err.str();
    return r;
}

} // namespace fabricsim
