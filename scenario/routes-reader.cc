// The "routes" block: docs/scenario.md's row routes[] (forced next hops, refused when they
// loop).
#include "forwarding-loops.h"
#include "input-error.h"
#include "json-describe.h"
#include "json-reader.h"
#include "scenario-fields.h"
#include "scenario-readers.h"

#include <map>

namespace fabricsim
{

using nlohmann::json;

namespace
{

uint32_t
RouteSwitch(const json& r, const Topology& topo, const std::string& file, const std::string& p)
{
    std::string example;
    for (const auto& n : topo.nodes)
    {
        if (n.kind == NodeKind::Switch)
        {
            example = n.name;
            break;
        }
    }
    uint32_t id = r.contains("switch") && r["switch"].is_string()
                      ? topo.FindNode(r["switch"].get<std::string>())
                      : UINT32_MAX;
    if (id == UINT32_MAX || topo.nodes[id].kind != NodeKind::Switch)
    {
        throw InputError(file,
                         p + ".switch",
                         "the name of a switch (e.g. \"" + example + "\")",
                         r.contains("switch") ? DescribeJson(r["switch"]) : "nothing");
    }
    return id;
}

/// Routes that loop are refused here, naming the route (FindForwardingLoop: the routes the
/// switches will really use, at setup; link events are checked as they happen, in the run).
void
CheckRoutesLoopFree(const std::vector<RouteOverride>& routes,
                    const Topology& topo,
                    const std::string& file)
{
    RouteOverrides overrides;
    std::map<std::pair<uint32_t, uint32_t>, size_t> index; // as applied: a later route wins
    for (size_t i = 0; i < routes.size(); ++i)
    {
        for (uint32_t d : routes[i].dstHosts)
        {
            overrides[{routes[i].node, d}] = routes[i].ports;
            index[{routes[i].node, d}] = i;
        }
    }
    if (auto loop = FindForwardingLoop(topo, Routing(topo), overrides))
    {
        throw InputError(file,
                         "routes[" + std::to_string(index.at(loop->route)) + "]",
                         "routes that reach host " + std::to_string(loop->dstHost)
                             + " without a loop",
                         "a forwarding loop " + loop->Describe(topo));
    }
}

} // namespace

std::vector<RouteOverride>
ReadRoutes(const json& routes, const Topology& topo, const std::string& file)
{
    if (!routes.is_array())
    {
        throw InputError(
            file, "routes", "an array of {switch, dst, next | port}", DescribeJson(routes));
    }
    // Port k of a node is the k-th link touching it (the installer's numbering).
    std::vector<std::vector<uint32_t>> peers(topo.nodes.size());
    for (const auto& l : topo.links)
    {
        peers[l.a].push_back(l.b);
        peers[l.b].push_back(l.a);
    }
    std::vector<RouteOverride> out;
    for (size_t i = 0; i < routes.size(); ++i)
    {
        std::string p = "routes[" + std::to_string(i) + "]";
        const json& r = routes[i];
        const JsonObject rObj(r, file, p);
        rObj.CheckKeys({"switch", "dst", "next", "port"});
        RouteOverride ro;
        ro.node = RouteSwitch(r, topo, file, p);
        const auto& nb = peers[ro.node];
        if (!r.contains("dst"))
        {
            throw InputError(file, p + ".dst", "a host index or an array of them", "nothing");
        }
        if (r["dst"].is_array())
        {
            ro.dstHosts = GetHostList(rObj, topo, "dst");
        }
        else
        {
            ro.dstHosts.push_back(GetHost(r["dst"], topo, file, p + ".dst"));
        }
        if (r.contains("next") == r.contains("port"))
        {
            throw InputError(file,
                             p,
                             "exactly one of \"next\" (a neighbour's name) and \"port\"",
                             r.contains("next") ? "both" : "neither");
        }
        if (r.contains("port"))
        {
            uint64_t port = rObj.OptionalUint("port", 0);
            if (port >= nb.size())
            {
                throw InputError(file,
                                 p + ".port",
                                 "a port of " + topo.nodes[ro.node].name + " in [0, "
                                     + std::to_string(nb.size() - 1) + "]",
                                 DescribeJson(r["port"]));
            }
            ro.ports.push_back(uint16_t(port));
        }
        else
        {
            uint32_t next
                = r["next"].is_string() ? topo.FindNode(r["next"].get<std::string>()) : UINT32_MAX;
            for (uint16_t k = 0; k < nb.size(); ++k)
            {
                if (nb[k] == next)
                {
                    ro.ports.push_back(k); // every parallel link to it
                }
            }
            if (ro.ports.empty())
            {
                throw InputError(file,
                                 p + ".next",
                                 "the name of a neighbour of " + topo.nodes[ro.node].name,
                                 DescribeJson(r["next"]));
            }
        }
        out.push_back(ro);
    }
    CheckRoutesLoopFree(out, topo, file);
    return out;
}

} // namespace fabricsim
