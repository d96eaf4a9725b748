#include "cli-options.h"

#include "input-error.h"

#include <cmath>
#include <cstdio>
#include <ostream>
#include <stdexcept>

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

int
IntOption(const std::string& v, const std::string& opt, int min)
{
    size_t used = 0;
    long x = 0;
    try
    {
        x = std::stol(v, &used);
    }
    catch (const std::exception&)
    {
        used = 0;
    }
    if (used != v.size() || v.empty() || x < min || x > 1000000)
    {
        throw InputError(
            kCommandLineSource, opt, "an integer >= " + std::to_string(min), "\"" + v + "\"");
    }
    return int(x);
}

uint64_t
CountOption(const std::string& v, const std::string& opt, uint64_t lo, uint64_t hi)
{
    size_t used = 0;
    unsigned long long x = 0;
    try
    {
        x = std::stoull(v, &used);
    }
    catch (const std::exception&)
    {
        used = 0;
    }
    if (used != v.size() || v.empty() || v[0] == '-' || x < lo || x > hi)
    {
        throw InputError(kCommandLineSource,
                         opt,
                         "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]",
                         "\"" + v + "\"");
    }
    return x;
}

std::string
SignedPercent(double pct)
{
    if (!std::isfinite(pct))
    {
        return pct > 0 ? "+inf" : "-inf";
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, "%+.1f%%", pct);
    return buf;
}

void
ParseMemoOption(const std::string& v, bool& memo, uint32_t& verify)
{
    memo = v == "on";
    verify = 0;
    const char* expected = "on, off, verify or verify=N (N >= 1)";
    if (v.rfind("verify", 0) == 0)
    {
        const std::string n = v == "verify" ? "10" : v.substr(v.find('=') + 1);
        const bool ok = (v == "verify" || v.rfind("verify=", 0) == 0) && !n.empty() && n.size() <= 9
                        && n.find_first_not_of("0123456789") == std::string::npos
                        && std::stoul(n) > 0;
        if (!ok)
        {
            throw fabricsim::InputError(kCommandLineSource, "--memo", expected, v);
        }
        verify = uint32_t(std::stoul(n));
    }
    else if (v != "on" && v != "off")
    {
        throw fabricsim::InputError(kCommandLineSource, "--memo", expected, v);
    }
}

bool
MemoDisagreed(const nlohmann::json& memo, std::ostream& err)
{
    if (memo.is_null() || !memo.contains("verify") || memo["verify"]["mismatches"] == 0)
    {
        return false;
    }
    err << "fabricsim: the collective memo disagreed with simulation in "
        << memo["verify"]["mismatches"] << " of " << memo["verify"]["checked"]
        << " checks; first: " << memo["verify"]["first_mismatch"].get<std::string>() << "\n";
    return true;
}

} // namespace fabricsim
