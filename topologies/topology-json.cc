/*
 * Typed JSON access for the topology builders, plus rate and delay parsing.
 */
#include "topology-json.h"

#include "input-error.h"

#include <cctype>
#include <cmath>
#include <cstdlib>

namespace fabricsim
{

void
RequireObject(const nlohmann::json& spec, const std::string& file, const std::string& field)
{
    if (!spec.is_object())
    {
        throw fabricsim::InputError(file, field, "a JSON object", DescribeJson(spec));
    }
}

void
CheckKeys(const nlohmann::json& spec,
          const std::string& file,
          const std::string& prefix,
          const std::vector<std::string>& valid)
{
    for (auto it = spec.begin(); it != spec.end(); ++it)
    {
        bool known = false;
        for (const auto& k : valid)
        {
            known = known || (k == it.key());
        }
        if (!known)
        {
            std::string list;
            for (const auto& k : valid)
            {
                list += (list.empty() ? "" : ", ") + k;
            }
            throw fabricsim::InputError(file,
                                        prefix + "." + it.key(),
                                        "a known key (one of: " + list + ")",
                                        "unknown key \"" + it.key() + "\"");
        }
    }
}

uint32_t
GetUint(const nlohmann::json& spec,
        const std::string& file,
        const std::string& prefix,
        const std::string& key,
        uint32_t minValue,
        uint32_t maxValue,
        int64_t deflt)
{
    const std::string field = prefix + "." + key;
    const std::string expected
        = "an integer in [" + std::to_string(minValue) + ", " + std::to_string(maxValue) + "]";
    if (!spec.contains(key))
    {
        if (deflt < 0)
        {
            throw fabricsim::InputError(file, field, expected, "nothing (the key is required)");
        }
        return static_cast<uint32_t>(deflt);
    }
    const auto& v = spec.at(key);
    if (!v.is_number_integer())
    {
        throw fabricsim::InputError(file, field, expected, DescribeJson(v));
    }
    const int64_t n = v.get<int64_t>();
    if (n < static_cast<int64_t>(minValue) || n > static_cast<int64_t>(maxValue))
    {
        throw fabricsim::InputError(file, field, expected, DescribeJson(v));
    }
    return static_cast<uint32_t>(n);
}

namespace
{

/// Split "  12.5Gbps " into number and unit; false when no number leads the text.
bool
SplitNumberUnit(const std::string& text, double& number, std::string& unit)
{
    const char* begin = text.c_str();
    while (std::isspace(static_cast<unsigned char>(*begin)))
    {
        ++begin;
    }
    char* end = nullptr;
    number = std::strtod(begin, &end);
    if (end == begin || !std::isfinite(number))
    {
        return false;
    }
    unit = end;
    while (!unit.empty() && std::isspace(static_cast<unsigned char>(unit.back())))
    {
        unit.pop_back();
    }
    while (!unit.empty() && std::isspace(static_cast<unsigned char>(unit.front())))
    {
        unit.erase(0, 1);
    }
    return true;
}

/// Bits per second of one rate unit ("Gbps", "G", "GBps", "gb/s"); 0 when unknown.
double
RateUnit(std::string unit)
{
    double scale = 1;
    if (!unit.empty())
    {
        switch (unit[0])
        {
        case 'k':
        case 'K':
            scale = 1e3;
            break;
        case 'm':
        case 'M':
            scale = 1e6;
            break;
        case 'g':
        case 'G':
            scale = 1e9;
            break;
        case 't':
        case 'T':
            scale = 1e12;
            break;
        default:
            scale = 0;
        }
        if (scale != 0)
        {
            unit.erase(0, 1);
        }
        else
        {
            scale = 1;
        }
    }
    // Case matters only here: capital B means bytes, as in ns-3's DataRate.
    if (unit.empty() || unit == "bps" || unit == "b/s" || unit == "bit/s")
    {
        return scale;
    }
    if (unit == "Bps" || unit == "B/s")
    {
        return scale * 8;
    }
    return 0;
}

} // namespace

namespace
{

/// Rates a link may have: whole bits per second as the models hold them (uint64), and far
/// below where bytes x 8e12 / rate loses meaning.
double
CheckRateRange(double bps,
               const nlohmann::json& value,
               const std::string& file,
               const std::string& field)
{
    if (!(bps >= 1 && bps <= 1e15))
    {
        throw fabricsim::InputError(
            file, field, "a rate from 1bps to 1000Tbps", DescribeJson(value));
    }
    return bps;
}

} // namespace

double
ParseRate(const nlohmann::json& value, const std::string& file, const std::string& field)
{
    const std::string expected = "a rate like \"100Gbps\"";
    if (value.is_number())
    {
        const double bps = value.get<double>();
        if (!(bps > 0) || !std::isfinite(bps))
        {
            throw fabricsim::InputError(file, field, expected, DescribeJson(value));
        }
        return CheckRateRange(bps, value, file, field);
    }
    if (!value.is_string())
    {
        throw fabricsim::InputError(file, field, expected, DescribeJson(value));
    }
    const std::string text = value.get<std::string>();
    double number = 0;
    std::string unit;
    // A bare number in a string is refused: "100" is far more likely a mistake than 100 b/s.
    if (!SplitNumberUnit(text, number, unit) || unit.empty() || !(number > 0))
    {
        throw fabricsim::InputError(file, field, expected, DescribeJson(value));
    }
    const double scale = RateUnit(unit);
    if (scale == 0)
    {
        throw fabricsim::InputError(file, field, expected, DescribeJson(value));
    }
    return CheckRateRange(number * scale, value, file, field);
}

uint64_t
ParseDelay(const nlohmann::json& value, const std::string& file, const std::string& field)
{
    const std::string expected = "a delay like \"1us\" (units ps, ns, us, ms, s)";
    double ps = 0;
    if (value.is_number())
    {
        ps = value.get<double>() * 1e3;
    }
    else if (value.is_string())
    {
        double number = 0;
        std::string unit;
        if (!SplitNumberUnit(value.get<std::string>(), number, unit))
        {
            throw fabricsim::InputError(file, field, expected, DescribeJson(value));
        }
        double scale = 0;
        if (unit == "ps")
        {
            scale = 1;
        }
        else if (unit == "ns")
        {
            scale = 1e3;
        }
        else if (unit == "us")
        {
            scale = 1e6;
        }
        else if (unit == "ms")
        {
            scale = 1e9;
        }
        else if (unit == "s")
        {
            scale = 1e12;
        }
        if (scale == 0)
        {
            throw fabricsim::InputError(file, field, expected, DescribeJson(value));
        }
        ps = number * scale;
    }
    else
    {
        throw fabricsim::InputError(file, field, expected, DescribeJson(value));
    }
    if (!(ps >= 0) || ps > 1e18)
    {
        throw fabricsim::InputError(file, field, expected, DescribeJson(value));
    }
    return static_cast<uint64_t>(std::llround(ps));
}

LinkSpec
ParseLinkSpec(const nlohmann::json& spec,
              const std::string& file,
              const std::string& field,
              const LinkSpec& deflt)
{
    LinkSpec out = deflt;
    RequireObject(spec, file, field);
    CheckKeys(spec, file, field, {"rate", "delay", "loss_rate"});
    if (spec.contains("rate"))
    {
        out.rateBps = ParseRate(spec.at("rate"), file, field + ".rate");
    }
    if (spec.contains("delay"))
    {
        out.delayPs = ParseDelay(spec.at("delay"), file, field + ".delay");
    }
    if (spec.contains("loss_rate"))
    {
        const auto& v = spec.at("loss_rate");
        if (!v.is_number() || !(v.get<double>() >= 0 && v.get<double>() <= 1))
        {
            throw fabricsim::InputError(
                file, field + ".loss_rate", "a probability in [0, 1]", DescribeJson(v));
        }
        out.lossRate = v.get<double>();
    }
    return out;
}

CommonLinks
ParseCommonLinks(const nlohmann::json& spec, const std::string& file)
{
    CommonLinks links;
    if (spec.contains("host_link"))
    {
        links.host = ParseLinkSpec(spec.at("host_link"), file, "topology.host_link", LinkSpec{});
    }
    links.fabric = links.host;
    if (spec.contains("fabric_link"))
    {
        links.fabric
            = ParseLinkSpec(spec.at("fabric_link"), file, "topology.fabric_link", links.host);
    }
    return links;
}

std::vector<std::string>
CommonKeys(std::vector<std::string> extra)
{
    std::vector<std::string> keys{"type", "host_link", "fabric_link"};
    keys.insert(keys.end(), extra.begin(), extra.end());
    return keys;
}

} // namespace fabricsim
