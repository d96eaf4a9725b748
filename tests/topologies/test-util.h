/*
 * Small helpers shared by the topology tests.
 */
#ifndef FABRICSIM_TOPOLOGY_TEST_UTIL_H
#define FABRICSIM_TOPOLOGY_TEST_UTIL_H

#include "topology.h"

#include <cstdint>
#include <string>

namespace fabricsim
{

inline Topology
Build(const std::string& json)
{
    return BuildTopology(nlohmann::json::parse(json), "test.json");
}

/// Number of switches with the given tier.
inline uint32_t
CountSwitches(const Topology& t, uint32_t tier)
{
    uint32_t n = 0;
    for (const auto& node : t.nodes)
    {
        n += node.kind == NodeKind::Switch && node.tier == tier;
    }
    return n;
}

/// Number of links touching a node.
inline uint32_t
Degree(const Topology& t, uint32_t node)
{
    uint32_t n = 0;
    for (const auto& l : t.links)
    {
        n += (l.a == node) + (l.b == node);
    }
    return n;
}

/// Number of links between two nodes.
inline uint32_t
LinksBetween(const Topology& t, uint32_t a, uint32_t b)
{
    uint32_t n = 0;
    for (const auto& l : t.links)
    {
        n += (l.a == a && l.b == b) || (l.a == b && l.b == a);
    }
    return n;
}

} // namespace fabricsim

#endif
