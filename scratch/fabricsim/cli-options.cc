#include "cli-options.h"

#include "input-error.h"
#include "provenance.h"

#include <cstdio>

namespace fabricsim
{

std::string
Fixed(double v, int digits)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
}

bool
TakeOption(const std::vector<std::string>& args,
           size_t& i,
           const std::string& opt,
           std::string& value)
{
    if (args[i] == opt)
    {
        if (i + 1 >= args.size())
        {
            throw fabricsim::InputError(kCommandLineSource, opt, "a value after " + opt, "nothing");
        }
        value = args[++i];
        return true;
    }
    if (args[i].rfind(opt + "=", 0) == 0)
    {
        value = args[i].substr(opt.size() + 1);
        return true;
    }
    return false;
}

std::string
ProvenanceText(const nlohmann::json& scenario, const std::vector<std::string>& ns3Args)
{
    return ProvenanceJson(scenario, ns3Args, FABRICSIM_SOURCE_DIR).dump(2) + "\n";
}

} // namespace fabricsim
