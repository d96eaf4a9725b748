/*
 * Forwarding loops that route overrides create. Shortest-path routes never loop, so a loop runs
 * through an override: a switch sending a destination's packets to a neighbour whose routes (its
 * own override, or its shortest paths) lead back. Checked on the routes the switches really use
 * (Routing, with the links that are down left out), at setup and after every link event.
 */
#ifndef FABRICSIM_TOPOLOGIES_FORWARDING_LOOPS_H
#define FABRICSIM_TOPOLOGIES_FORWARDING_LOOPS_H

#include "topology.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace fabricsim
{

/// (switch node id, destination host) -> the ports it forwards on instead of its shortest paths.
using RouteOverrides = std::map<std::pair<uint32_t, uint32_t>, std::vector<uint16_t>>;

/// A loop toward one host: the switches in order, the first repeated at the end.
struct ForwardingLoop
{
    uint32_t dstHost = 0;
    std::vector<uint32_t> nodes;
    /// The first override on the loop (the switch and host of an entry of RouteOverrides).
    std::pair<uint32_t, uint32_t> route;

    /// "leaf1 -> spine1 -> leaf1".
    std::string Describe(const Topology& topo) const;
};

/**
 * \brief The first forwarding loop among the destinations \p overrides name, or nothing.
 * \p linkDown marks the links that are down (an override's port on one forwards nothing).
 */
std::optional<ForwardingLoop> FindForwardingLoop(const Topology& topo,
                                                 const Routing& routing,
                                                 const RouteOverrides& overrides,
                                                 const std::vector<bool>& linkDown = {});

} // namespace fabricsim

#endif
