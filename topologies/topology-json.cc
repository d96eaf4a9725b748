/*
 * The link objects every topology builder reads.
 */
#include "topology-json.h"

#include "input-error.h"
#include "units.h"

#include <cctype>
#include <cmath>
#include <cstdlib>

namespace fabricsim
{

LinkSpec
ParseLinkSpec(const JsonObject& link, const LinkSpec& deflt)
{
    LinkSpec out = deflt;
    link.CheckKeys({"rate", "delay", "loss_rate"});
    if (const nlohmann::json* v = link.Find("rate"))
    {
        out.rateBps = ParseRate(*v, link.File(), link.Field("rate"));
    }
    if (const nlohmann::json* v = link.Find("delay"))
    {
        out.delayPs = ParseDelay(*v, link.File(), link.Field("delay"));
    }
    if (const nlohmann::json* v = link.Find("loss_rate"))
    {
        if (!v->is_number() || !(v->get<double>() >= 0 && v->get<double>() <= 1))
        {
            link.Fail("loss_rate", "a probability in [0, 1]", DescribeJson(*v));
        }
        out.lossRate = v->get<double>();
    }
    return out;
}

CommonLinks
ParseCommonLinks(const JsonObject& spec)
{
    CommonLinks links;
    if (spec.Has("host_link"))
    {
        links.host = ParseLinkSpec(spec.Object("host_link"), LinkSpec{});
    }
    links.fabric = links.host;
    if (spec.Has("fabric_link"))
    {
        links.fabric = ParseLinkSpec(spec.Object("fabric_link"), links.host);
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
