/*
 * The "custom" builder: nodes and links listed explicitly.
 */
#include "input-error.h"
#include "topology-json.h"

#include <unordered_map>

namespace fabricsim
{

namespace
{

/// Resolve the link end \p key of \p link, given as a node name or a node index.
uint32_t
ResolveEnd(const JsonObject& link,
           const std::string& key,
           const std::unordered_map<std::string, uint32_t>& byName,
           uint32_t numNodes)
{
    const std::string expected = "a node name or node index";
    const nlohmann::json& v = link.Require(key, expected);
    if (v.is_string())
    {
        const auto it = byName.find(v.get<std::string>());
        if (it == byName.end())
        {
            link.Fail(key, expected, "unknown node " + DescribeJson(v));
        }
        return it->second;
    }
    if (const std::optional<uint64_t> i = JsonObject::AsUint(v); i && *i < numNodes)
    {
        return uint32_t(*i);
    }
    link.Fail(key, expected + " (0.." + std::to_string(numNodes - 1) + ")", DescribeJson(v));
}

/// The array at \p key (required).
const nlohmann::json&
RequireArray(const JsonObject& spec, const std::string& key)
{
    const nlohmann::json& v = spec.Require(key, "an array");
    if (!v.is_array())
    {
        spec.Fail(key, "an array", DescribeJson(v));
    }
    return v;
}

} // namespace

Topology
BuildCustom(const JsonObject& spec)
{
    spec.CheckKeys(CommonKeys({"nodes", "links"}));
    const CommonLinks links = ParseCommonLinks(spec);
    const nlohmann::json& nodes = RequireArray(spec, "nodes");
    const nlohmann::json& ls = RequireArray(spec, "links");
    Topology t;
    std::unordered_map<std::string, uint32_t> byName;
    for (size_t i = 0; i < nodes.size(); ++i)
    {
        const JsonObject n(nodes[i], spec.File(), JsonIndex(spec.Field("nodes"), i));
        n.CheckKeys({"name", "kind", "group", "local_index", "tier", "scale_up"});
        const std::string name = n.String("name");
        if (name.empty())
        {
            n.Fail("name", "a non-empty string", "\"\"");
        }
        if (byName.count(name))
        {
            n.Fail("name", "a unique node name", "\"" + name + "\" again");
        }
        const std::string kind
            = n.Require("kind", "\"host\" or \"switch\"").is_string() ? n.String("kind") : "";
        if (kind == "host")
        {
            const uint32_t group
                = uint32_t(n.OptionalUint("group", t.NumHosts(), 0, UINT32_MAX - 1));
            const uint32_t local = uint32_t(n.OptionalUint("local_index", 0, 0, 65535));
            if (n.Has("tier") || n.Has("scale_up"))
            {
                throw fabricsim::InputError(
                    n.File(), n.Path(), "no \"tier\" or \"scale_up\" on a host", "one");
            }
            byName[name] = t.AddHost(name, group, local);
        }
        else if (kind == "switch")
        {
            const uint32_t tier = uint32_t(n.OptionalUint("tier", 0, 0, 16));
            const bool scaleUp = n.OptionalBool("scale_up", false);
            if (n.Has("group") || n.Has("local_index"))
            {
                throw fabricsim::InputError(
                    n.File(), n.Path(), "no \"group\" or \"local_index\" on a switch", "one");
            }
            byName[name] = t.AddSwitch(name, tier, scaleUp);
        }
        else
        {
            n.Fail("kind", "\"host\" or \"switch\"", DescribeJson(*n.Find("kind")));
        }
    }
    const uint32_t numNodes = static_cast<uint32_t>(t.nodes.size());
    for (size_t i = 0; i < ls.size(); ++i)
    {
        const JsonObject l(ls[i], spec.File(), JsonIndex(spec.Field("links"), i));
        l.CheckKeys({"a", "b", "rate", "delay", "loss_rate"});
        if (!l.Has("a") || !l.Has("b"))
        {
            throw fabricsim::InputError(
                l.File(), l.Path(), "both ends \"a\" and \"b\"", DescribeJson(l.Json()));
        }
        const uint32_t a = ResolveEnd(l, "a", byName, numNodes);
        const uint32_t b = ResolveEnd(l, "b", byName, numNodes);
        if (a == b)
        {
            l.Fail("b", "a node other than \"a\"", DescribeJson(*l.Find("b")));
        }
        // A link touching a host is a host link; switch-to-switch is a fabric link.
        const bool hostLink
            = t.nodes[a].kind == NodeKind::Host || t.nodes[b].kind == NodeKind::Host;
        nlohmann::json linkKeys = nlohmann::json::object();
        for (const char* k : {"rate", "delay", "loss_rate"})
        {
            if (const nlohmann::json* v = l.Find(k))
            {
                linkKeys[k] = *v;
            }
        }
        t.AddLink(a,
                  b,
                  ParseLinkSpec(JsonObject(linkKeys, l.File(), l.Path()),
                                hostLink ? links.host : links.fabric));
    }
    return t;
}

} // namespace fabricsim
