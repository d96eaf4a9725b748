/*
 * Typed JSON access for the topology builders.
 */
#include "topology-json.h"

#include "input-error.h"
#include "units.h"

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
