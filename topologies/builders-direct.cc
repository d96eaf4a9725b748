/*
 * Direct-network builders: ring, torus and dragonfly. Every switch carries its own hosts;
 * hosts are created first, so a host's node id equals its host index.
 */
#include "input-error.h"
#include "topology-json.h"

namespace fabricsim
{

Topology
BuildRing(const JsonObject& spec)
{
    spec.CheckKeys(CommonKeys({"switches", "hosts_per_switch"}));
    const CommonLinks links = ParseCommonLinks(spec);
    const uint32_t n = uint32_t(spec.Uint("switches", 3, 65535));
    const uint32_t m = uint32_t(spec.OptionalUint("hosts_per_switch", 1, 1, 65535));
    Topology t;
    for (uint32_t i = 0; i < n * m; ++i)
    {
        t.AddHost("host" + std::to_string(i), i);
    }
    std::vector<uint32_t> sw(n);
    for (uint32_t i = 0; i < n; ++i)
    {
        sw[i] = t.AddSwitch("sw" + std::to_string(i), 0);
    }
    for (uint32_t i = 0; i < n * m; ++i)
    {
        t.AddLink(t.hosts[i], sw[i / m], links.host);
    }
    for (uint32_t i = 0; i < n; ++i)
    {
        t.AddLink(sw[i], sw[(i + 1) % n], links.fabric);
    }
    return t;
}

Topology
BuildTorus(const JsonObject& spec)
{
    spec.CheckKeys(CommonKeys({"dims", "hosts_per_switch"}));
    const CommonLinks links = ParseCommonLinks(spec);
    const std::string expected = "an array of 1 to 3 sizes, each an integer in [2, 1024]";
    const nlohmann::json& d = spec.Require("dims", expected);
    if (!d.is_array() || d.empty() || d.size() > 3)
    {
        throw fabricsim::InputError(spec.File(), spec.Field("dims"), expected, DescribeJson(d));
    }
    std::vector<uint32_t> dims;
    for (const auto& v : d)
    {
        const uint64_t x = JsonObject::AsUint(v).value_or(0);
        if (x < 2 || x > 1024)
        {
            throw fabricsim::InputError(spec.File(), spec.Field("dims"), expected, DescribeJson(d));
        }
        dims.push_back(uint32_t(x));
    }
    uint64_t total = 1;
    for (uint32_t x : dims)
    {
        total *= x;
    }
    if (total > 65536)
    {
        throw fabricsim::InputError(
            spec.File(), spec.Field("dims"), "at most 65536 switches", DescribeJson(d));
    }
    const uint32_t n = static_cast<uint32_t>(total);
    const uint32_t m = uint32_t(spec.OptionalUint("hosts_per_switch", 1, 1, 1024));
    Topology t;
    for (uint32_t i = 0; i < n * m; ++i)
    {
        t.AddHost("host" + std::to_string(i), i);
    }
    // Switch id = x + X * (y + Y * z); the name spells the coordinates.
    std::vector<uint32_t> sw(n);
    for (uint32_t i = 0; i < n; ++i)
    {
        std::string name = "sw";
        uint32_t rest = i;
        for (size_t k = 0; k < dims.size(); ++k)
        {
            name += (k ? "-" : "") + std::to_string(rest % dims[k]);
            rest /= dims[k];
        }
        sw[i] = t.AddSwitch(name, 0);
    }
    for (uint32_t i = 0; i < n * m; ++i)
    {
        t.AddLink(t.hosts[i], sw[i / m], links.host);
    }
    uint32_t stride = 1;
    for (size_t k = 0; k < dims.size(); ++k)
    {
        for (uint32_t i = 0; i < n; ++i)
        {
            const uint32_t c = (i / stride) % dims[k];
            // A size-2 dimension has one link between its two switches, not two parallel ones.
            if (dims[k] == 2 && c == 1)
            {
                continue;
            }
            const uint32_t next = i - c * stride + ((c + 1) % dims[k]) * stride;
            t.AddLink(sw[i], sw[next], links.fabric);
        }
        stride *= dims[k];
    }
    return t;
}

Topology
BuildDragonfly(const JsonObject& spec)
{
    spec.CheckKeys(CommonKeys({"groups",
                               "routers_per_group",
                               "hosts_per_router",
                               "global_links_per_router",
                               "global_link"}));
    const CommonLinks links = ParseCommonLinks(spec);
    LinkSpec global = links.fabric;
    if (spec.Has("global_link"))
    {
        global = ParseLinkSpec(spec.Object("global_link"), global);
    }
    const uint32_t g = uint32_t(spec.Uint("groups", 1, 4096));
    const uint32_t a = uint32_t(spec.Uint("routers_per_group", 1, 1024));
    const uint32_t p = uint32_t(spec.Uint("hosts_per_router", 1, 1024));
    const uint32_t h = uint32_t(g > 1 ? spec.Uint("global_links_per_router", 0, 1024)
                                      : spec.OptionalUint("global_links_per_router", 0, 0, 1024));
    if (g > 1 && a * h < g - 1)
    {
        throw fabricsim::InputError(spec.File(),
                                    spec.Field("global_links_per_router"),
                                    "routers_per_group x global_links_per_router >= groups - 1 ("
                                        + std::to_string(g - 1)
                                        + "), so every pair of groups is linked",
                                    std::to_string(h));
    }
    if (static_cast<uint64_t>(g) * a * p > 1000000)
    {
        throw fabricsim::InputError(spec.File(), "topology", "at most 1,000,000 hosts", "more");
    }
    Topology t;
    for (uint32_t i = 0; i < g * a * p; ++i)
    {
        t.AddHost("host" + std::to_string(i), i);
    }
    std::vector<uint32_t> router(g * a);
    for (uint32_t i = 0; i < g * a; ++i)
    {
        router[i] = t.AddSwitch("g" + std::to_string(i / a) + "-r" + std::to_string(i % a), 0);
    }
    for (uint32_t i = 0; i < g * a * p; ++i)
    {
        t.AddLink(t.hosts[i], router[i / p], links.host);
    }
    for (uint32_t grp = 0; grp < g; ++grp)
    {
        for (uint32_t x = 0; x < a; ++x)
        {
            for (uint32_t y = x + 1; y < a; ++y)
            {
                t.AddLink(router[grp * a + x], router[grp * a + y], links.fabric);
            }
        }
    }
    if (g == 1)
    {
        return t;
    }
    // Consecutive (circulant) arrangement: global port j of a group (router j / h) points at
    // offset d = 1 + j mod (g-1), i.e. group (G + d) mod g. Ports of offset d in G pair in order
    // with ports of offset g-d in G+d; unmatched ports (when a*h is not a multiple of g-1) stay
    // unused, so every pair of groups gets floor or ceil of a*h/(g-1) links.
    const uint32_t ports = a * h;
    auto count = [&](uint32_t d)
    {
        return d - 1 < ports ? (ports - d) / (g - 1) + 1 : 0;
    };
    auto routerOf = [&](uint32_t grp, uint32_t d, uint32_t k)
    {
        return router[grp * a + ((d - 1) + k * (g - 1)) / h];
    };
    for (uint32_t grp = 0; grp < g; ++grp)
    {
        for (uint32_t d = 1; d < g; ++d)
        {
            const uint32_t e = g - d;
            const uint32_t peer = (grp + d) % g;
            if (d > e || (d == e && peer < grp))
            {
                continue; // added from the other side
            }
            const uint32_t n = std::min(count(d), count(e));
            for (uint32_t k = 0; k < n; ++k)
            {
                t.AddLink(routerOf(grp, d, k), routerOf(peer, e, k), global);
            }
        }
    }
    return t;
}

} // namespace fabricsim
