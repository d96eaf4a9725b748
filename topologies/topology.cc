/*
 * Topology graph helpers, the connectivity check and BuildTopology's dispatch on "type".
 */
#include "topology.h"

#include "file-reader.h"
#include "input-error.h"
#include "topology-json.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <sstream>
#include <utility>

namespace fabricsim
{

uint32_t
Topology::AddHost(const std::string& name, uint32_t group, uint32_t localIndex)
{
    TopoNode n;
    n.kind = NodeKind::Host;
    n.name = name;
    n.hostIndex = NumHosts();
    n.group = group;
    n.localIndex = localIndex;
    nodes.push_back(n);
    hosts.push_back(static_cast<uint32_t>(nodes.size() - 1));
    return hosts.back();
}

uint32_t
Topology::AddSwitch(const std::string& name, uint32_t tier, bool scaleUp)
{
    TopoNode n;
    n.kind = NodeKind::Switch;
    n.name = name;
    n.tier = tier;
    n.scaleUp = scaleUp;
    nodes.push_back(n);
    return static_cast<uint32_t>(nodes.size() - 1);
}

uint32_t
Topology::AddLink(uint32_t a, uint32_t b, const LinkSpec& spec)
{
    links.push_back(TopoLink{a, b, spec});
    return static_cast<uint32_t>(links.size() - 1);
}

uint32_t
Topology::FindNode(const std::string& name) const
{
    for (uint32_t i = 0; i < nodes.size(); ++i)
    {
        if (nodes[i].name == name)
        {
            return i;
        }
    }
    return std::numeric_limits<uint32_t>::max();
}

std::vector<std::string>
TopologyTypes()
{
    return {"single-switch",
            "ring",
            "leaf-spine",
            "fat-tree",
            "rail-optimized",
            "torus",
            "dragonfly",
            "custom",
            "hpcc-file"};
}

void
CheckConnected(const Topology& topo, const std::string& file)
{
    const uint32_t n = static_cast<uint32_t>(topo.nodes.size());
    // Union-find over switches only: hosts never forward, so they must not join components.
    std::vector<uint32_t> parent(n);
    std::iota(parent.begin(), parent.end(), 0);
    auto find = [&](uint32_t x)
    {
        while (parent[x] != x)
        {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        return x;
    };
    auto isHost = [&](uint32_t id)
    {
        return topo.nodes[id].kind == NodeKind::Host;
    };
    for (const auto& l : topo.links)
    {
        if (!isHost(l.a) && !isHost(l.b))
        {
            parent[find(l.a)] = find(l.b);
        }
    }
    const uint32_t h = topo.NumHosts();
    // Per host: switch components it touches and hosts it links to directly.
    std::vector<std::vector<uint32_t>> comps(h);
    std::vector<std::vector<uint32_t>> direct(h);
    for (const auto& l : topo.links)
    {
        for (int side = 0; side < 2; ++side)
        {
            const uint32_t self = side ? l.b : l.a;
            const uint32_t other = side ? l.a : l.b;
            if (isHost(self))
            {
                auto& list = isHost(other) ? direct[topo.nodes[self].hostIndex]
                                           : comps[topo.nodes[self].hostIndex];
                list.push_back(isHost(other) ? topo.nodes[other].hostIndex : find(other));
            }
        }
    }
    std::vector<uint32_t> touching(n, 0);
    for (auto& c : comps)
    {
        std::sort(c.begin(), c.end());
        c.erase(std::unique(c.begin(), c.end()), c.end());
        for (uint32_t x : c)
        {
            ++touching[x];
        }
    }
    // Fast path: one switch component reaches every host (every real data-centre fabric).
    if (h <= 1 || std::any_of(touching.begin(), touching.end(), [h](uint32_t t) { return t == h; }))
    {
        return;
    }
    for (uint32_t a = 0; a < h; ++a)
    {
        for (uint32_t b = a + 1; b < h; ++b)
        {
            std::vector<uint32_t> shared;
            std::set_intersection(comps[a].begin(),
                                  comps[a].end(),
                                  comps[b].begin(),
                                  comps[b].end(),
                                  std::back_inserter(shared));
            if (shared.empty()
                && std::find(direct[a].begin(), direct[a].end(), b) == direct[a].end())
            {
                const auto& na = topo.nodes[topo.hosts[a]].name;
                const auto& nb = topo.nodes[topo.hosts[b]].name;
                throw fabricsim::InputError(file,
                                            "topology",
                                            "a connected topology",
                                            "disconnected topology: host " + std::to_string(a)
                                                + " (" + na + ") cannot reach host "
                                                + std::to_string(b) + " (" + nb + ")");
            }
        }
    }
}

namespace
{

std::string
DirName(const std::string& path)
{
    const auto slash = path.find_last_of('/');
    return slash == std::string::npos ? std::string(".") : path.substr(0, slash + 1);
}

Topology
BuildHpccFile(const JsonObject& spec, const std::string& baseDir)
{
    spec.CheckKeys({"type", "path"});
    const nlohmann::json& p = spec.Require("path", "the path of an HPCC topology file");
    if (!p.is_string())
    {
        spec.Fail("path", "the path of an HPCC topology file", DescribeJson(p));
    }
    std::string path = p.get<std::string>();
    if (!path.empty() && path[0] != '/')
    {
        path = (baseDir.empty() ? std::string(".") : baseDir) + "/" + path;
    }
    std::istringstream in(ReadFileBounded(
        path, "HPCC topology file", kConfigFileLimits, {spec.File(), spec.Field("path")}));
    Topology topo = ParseHpccTopology(in, path);
    topo.type = "hpcc-file";
    return topo;
}

} // namespace

Topology
BuildTopology(const nlohmann::json& spec, const std::string& file)
{
    return BuildTopology(spec, file, DirName(file));
}

Topology
BuildTopology(const nlohmann::json& spec, const std::string& file, const std::string& baseDir)
{
    const JsonObject top(spec, file, "topology");
    std::string list;
    for (const auto& t : TopologyTypes())
    {
        list += (list.empty() ? "" : ", ") + t;
    }
    const std::string expected = "a topology type (one of: " + list + ")";
    const nlohmann::json& typeValue = top.Require("type", expected);
    if (!typeValue.is_string())
    {
        top.Fail("type", expected, DescribeJson(typeValue));
    }
    const std::string type = typeValue.get<std::string>();
    using Builder = Topology (*)(const JsonObject&);
    const std::vector<std::pair<std::string, Builder>> builders{
        {"single-switch", &BuildSingleSwitch},
        {"ring", &BuildRing},
        {"leaf-spine", &BuildLeafSpine},
        {"fat-tree", &BuildFatTree},
        {"rail-optimized", &BuildRailOptimized},
        {"rail-optimised", &BuildRailOptimized},
        {"torus", &BuildTorus},
        {"dragonfly", &BuildDragonfly},
        {"custom", &BuildCustom},
    };
    Topology topo;
    bool found = false;
    for (const auto& [name, build] : builders)
    {
        if (name == type)
        {
            topo = build(top);
            found = true;
        }
    }
    if (type == "hpcc-file")
    {
        topo = BuildHpccFile(top, baseDir);
        found = true;
    }
    if (!found)
    {
        top.Fail("type", expected, DescribeJson(typeValue));
    }
    if (topo.type.empty())
    {
        topo.type = type == "rail-optimised" ? "rail-optimized" : type;
    }
    if (topo.NumHosts() == 0)
    {
        throw fabricsim::InputError(file, "topology", "at least one host", "none");
    }
    CheckConnected(topo, file);
    return topo;
}

} // namespace fabricsim
