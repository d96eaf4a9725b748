// Forwarding loops through route overrides, on the routes the switches really use.
#include "forwarding-loops.h"
#include "topology.h"

#include <gtest/gtest.h>

namespace
{

using fabricsim::FindForwardingLoop;
using fabricsim::RouteOverrides;
using fabricsim::Routing;

/// 2 leaves x 2 spines, hosts 0-1 on leaf0 and 2-3 on leaf1. Ports: a leaf's port 0-1 are its
/// hosts, 2 spine0, 3 spine1; a spine's port 0 is leaf0, 1 leaf1. Link 7 is leaf1 - spine1.
fabricsim::Topology
LeafSpine()
{
    return fabricsim::BuildTopology(
        {{"type", "leaf-spine"}, {"leaves", 2}, {"spines", 2}, {"hosts_per_leaf", 2}}, "t.json");
}

TEST(ForwardingLoops, ShortestPathsAndDetoursDoNotLoop)
{
    const auto topo = LeafSpine();
    const Routing r(topo);
    EXPECT_FALSE(FindForwardingLoop(topo, r, {}));
    const uint32_t leaf0 = topo.FindNode("leaf0");
    // leaf0 sends host 2's packets to spine1 only: a narrower path, no loop.
    EXPECT_FALSE(FindForwardingLoop(topo, r, RouteOverrides{{{leaf0, 2}, {3}}}));
}

TEST(ForwardingLoops, AnOverrideBackTowardsTheSenderLoops)
{
    const auto topo = LeafSpine();
    const Routing r(topo);
    const uint32_t spine0 = topo.FindNode("spine0");
    auto loop = FindForwardingLoop(topo, r, RouteOverrides{{{spine0, 2}, {0}}});
    ASSERT_TRUE(loop);
    EXPECT_EQ(loop->dstHost, 2u);
    EXPECT_EQ(loop->nodes.front(), loop->nodes.back());
    EXPECT_EQ(loop->route, std::make_pair(spine0, 2u));
    EXPECT_EQ(loop->Describe(topo), "spine0 -> leaf0 -> spine0");
}

TEST(ForwardingLoops, AFailureCanTurnAnOverrideIntoALoop)
{
    const auto topo = LeafSpine();
    const uint32_t leaf0 = topo.FindNode("leaf0");
    const RouteOverrides o{{{leaf0, 2}, {3}}};
    std::vector<bool> down(topo.links.size(), false);
    down[7] = true; // leaf1 - spine1: spine1 now reaches host 2 only back through leaf0
    const Routing failed(topo, down);
    auto loop = FindForwardingLoop(topo, failed, o, down);
    ASSERT_TRUE(loop);
    EXPECT_EQ(loop->Describe(topo), "leaf0 -> spine1 -> leaf0");
}

} // namespace
