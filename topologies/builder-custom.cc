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

/// Resolve a link end given as a node name or a node index.
uint32_t
ResolveEnd(const nlohmann::json& v,
           const std::unordered_map<std::string, uint32_t>& byName,
           uint32_t numNodes,
           const std::string& file,
           const std::string& field)
{
    const std::string expected = "a node name or node index";
    if (v.is_string())
    {
        const auto it = byName.find(v.get<std::string>());
        if (it == byName.end())
        {
            throw fabricsim::InputError(file, field, expected, "unknown node " + DescribeJson(v));
        }
        return it->second;
    }
    if (v.is_number_integer() && v.get<int64_t>() >= 0 && v.get<int64_t>() < numNodes)
    {
        return v.get<uint32_t>();
    }
    throw fabricsim::InputError(
        file, field, expected + " (0.." + std::to_string(numNodes - 1) + ")", DescribeJson(v));
}

} // namespace

Topology
BuildCustom(const nlohmann::json& spec, const std::string& file)
{
    CheckKeys(spec, file, "topology", CommonKeys({"nodes", "links"}));
    const CommonLinks links = ParseCommonLinks(spec, file);
    for (const char* key : {"nodes", "links"})
    {
        if (!spec.contains(key) || !spec.at(key).is_array())
        {
            throw fabricsim::InputError(file,
                                        std::string("topology.") + key,
                                        "an array",
                                        spec.contains(key) ? DescribeJson(spec.at(key))
                                                           : "nothing (the key is required)");
        }
    }
    Topology t;
    std::unordered_map<std::string, uint32_t> byName;
    const auto& nodes = spec.at("nodes");
    for (size_t i = 0; i < nodes.size(); ++i)
    {
        const std::string f = "topology.nodes[" + std::to_string(i) + "]";
        const auto& n = nodes[i];
        RequireObject(n, file, f);
        CheckKeys(n, file, f, {"name", "kind", "group", "local_index", "tier", "scale_up"});
        if (!n.contains("name") || !n.at("name").is_string()
            || n.at("name").get<std::string>().empty())
        {
            throw fabricsim::InputError(file,
                                        f + ".name",
                                        "a non-empty string",
                                        n.contains("name") ? DescribeJson(n.at("name"))
                                                           : "nothing");
        }
        const std::string name = n.at("name").get<std::string>();
        if (byName.count(name))
        {
            throw fabricsim::InputError(
                file, f + ".name", "a unique node name", "\"" + name + "\" again");
        }
        const std::string kind
            = n.contains("kind") && n.at("kind").is_string() ? n.at("kind").get<std::string>() : "";
        if (kind == "host")
        {
            const uint32_t group = GetUint(n, file, f, "group", 0, UINT32_MAX - 1, t.NumHosts());
            const uint32_t local = GetUint(n, file, f, "local_index", 0, 65535, 0);
            if (n.contains("tier") || n.contains("scale_up"))
            {
                throw fabricsim::InputError(
                    file, f, "no \"tier\" or \"scale_up\" on a host", "one");
            }
            byName[name] = t.AddHost(name, group, local);
        }
        else if (kind == "switch")
        {
            const uint32_t tier = GetUint(n, file, f, "tier", 0, 16, 0);
            bool scaleUp = false;
            if (n.contains("scale_up"))
            {
                if (!n.at("scale_up").is_boolean())
                {
                    throw fabricsim::InputError(
                        file, f + ".scale_up", "true or false", DescribeJson(n.at("scale_up")));
                }
                scaleUp = n.at("scale_up").get<bool>();
            }
            if (n.contains("group") || n.contains("local_index"))
            {
                throw fabricsim::InputError(
                    file, f, "no \"group\" or \"local_index\" on a switch", "one");
            }
            byName[name] = t.AddSwitch(name, tier, scaleUp);
        }
        else
        {
            throw fabricsim::InputError(file,
                                        f + ".kind",
                                        "\"host\" or \"switch\"",
                                        n.contains("kind") ? DescribeJson(n.at("kind"))
                                                           : "nothing");
        }
    }
    const auto& ls = spec.at("links");
    const uint32_t numNodes = static_cast<uint32_t>(t.nodes.size());
    for (size_t i = 0; i < ls.size(); ++i)
    {
        const std::string f = "topology.links[" + std::to_string(i) + "]";
        const auto& l = ls[i];
        RequireObject(l, file, f);
        CheckKeys(l, file, f, {"a", "b", "rate", "delay", "loss_rate"});
        if (!l.contains("a") || !l.contains("b"))
        {
            throw fabricsim::InputError(file, f, "both ends \"a\" and \"b\"", DescribeJson(l));
        }
        const uint32_t a = ResolveEnd(l.at("a"), byName, numNodes, file, f + ".a");
        const uint32_t b = ResolveEnd(l.at("b"), byName, numNodes, file, f + ".b");
        if (a == b)
        {
            throw fabricsim::InputError(
                file, f + ".b", "a node other than \"a\"", DescribeJson(l.at("b")));
        }
        // A link touching a host is a host link; switch-to-switch is a fabric link.
        const bool hostLink
            = t.nodes[a].kind == NodeKind::Host || t.nodes[b].kind == NodeKind::Host;
        nlohmann::json linkKeys = nlohmann::json::object();
        for (const char* k : {"rate", "delay", "loss_rate"})
        {
            if (l.contains(k))
            {
                linkKeys[k] = l.at(k);
            }
        }
        t.AddLink(a, b, ParseLinkSpec(linkKeys, file, f, hostLink ? links.host : links.fabric));
    }
    return t;
}

} // namespace fabricsim
