/*
 * Scale: a ~10,000-host fat-tree (k = 34, 9826 hosts) builds with routes in seconds.
 */
#include "test-util.h"

#include <gtest/gtest.h>

#include <chrono>
#include <iostream>

namespace fabricsim
{
namespace
{

TEST(TopologyScale, FatTreeK34BuildsInSeconds)
{
    using Clock = std::chrono::steady_clock;
    const auto t0 = Clock::now();
    const Topology t = Build(R"({"type": "fat-tree", "k": 34})");
    const auto t1 = Clock::now();
    Routing r(t);
    const auto t2 = Clock::now();
    const double buildS = std::chrono::duration<double>(t1 - t0).count();
    const double routeS = std::chrono::duration<double>(t2 - t1).count();
    // Printed, not asserted: the machine is shared.
    std::cout << "[ timing   ] fat-tree k=34: " << t.NumHosts() << " hosts, " << t.nodes.size()
              << " nodes, " << t.links.size() << " links; build " << buildS << " s, routing "
              << routeS << " s (" << r.NumDestinationGroups() << " BFS)" << std::endl;
    RecordProperty("build_s", std::to_string(buildS));
    RecordProperty("routing_s", std::to_string(routeS));

    EXPECT_EQ(t.NumHosts(), 9826u);
    EXPECT_EQ(r.NumDestinationGroups(), 34u * 17u);
    EXPECT_TRUE(r.AllReachable());
    const uint32_t last = t.NumHosts() - 1;
    EXPECT_EQ(r.HopCount(0, last), 6u);
    EXPECT_EQ(r.HopCount(0, 16), 2u); // same edge switch
    EXPECT_EQ(r.HopCount(0, 17), 4u); // same pod
    EXPECT_EQ(r.NextHops(t.FindNode("pod0-edge0"), last).size(), 17u);
    EXPECT_EQ(r.NextHops(t.FindNode("pod0-agg3"), last).size(), 17u);
    EXPECT_EQ(r.NextHops(t.FindNode("core100"), last).size(), 1u);
    EXPECT_EQ(r.Path(5000, 123).size(), 6u);
}

} // namespace
} // namespace fabricsim
