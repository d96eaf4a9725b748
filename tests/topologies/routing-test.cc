/*
 * Routing tests: ECMP next-hop counts, hop counts, paths, multi-port hosts and link failures.
 */
#include "test-util.h"

#include <gtest/gtest.h>

#include <limits>

namespace fabricsim
{
namespace
{

constexpr uint32_t kUnreachable = std::numeric_limits<uint32_t>::max();

/// Checks that a path is a chain of links from src's node to dst's node.
void
ExpectChain(const Topology& t, const std::vector<uint32_t>& path, uint32_t src, uint32_t dst)
{
    uint32_t node = t.hosts[src];
    for (uint32_t id : path)
    {
        const auto& l = t.links[id];
        ASSERT_TRUE(l.a == node || l.b == node);
        node = l.a == node ? l.b : l.a;
    }
    EXPECT_EQ(node, t.hosts[dst]);
}

TEST(Routing, FatTreeK4EcmpAndHopCounts)
{
    const Topology t = Build(R"({"type": "fat-tree", "k": 4})");
    Routing r(t);
    EXPECT_TRUE(r.AllReachable());
    // Host 0: pod 0, edge 0. Host 1: same edge. Host 2: pod 0, edge 1. Host 4: pod 1.
    EXPECT_EQ(r.HopCount(0, 1), 2u);
    EXPECT_EQ(r.HopCount(0, 2), 4u);
    EXPECT_EQ(r.HopCount(0, 4), 6u);
    EXPECT_EQ(r.HopCount(0, 15), 6u);
    EXPECT_EQ(r.HopCount(3, 3), 0u);

    const uint32_t edge = t.FindNode("pod0-edge0");
    const uint32_t agg = t.FindNode("pod0-agg1");
    EXPECT_EQ(r.NextHops(edge, 4).size(), 2u); // k/2 aggs toward a remote pod
    EXPECT_EQ(r.NextHops(agg, 4).size(), 2u);  // k/2 cores toward a remote pod
    EXPECT_EQ(r.NextHops(edge, 2).size(), 2u); // both aggs toward another edge of the pod
    EXPECT_EQ(r.NextHops(agg, 2).size(), 1u);  // straight down to edge 1
    ASSERT_EQ(r.NextHops(edge, 1).size(), 1u); // the host's own port
    EXPECT_EQ(r.PortPeer(edge, r.NextHops(edge, 1)[0]), t.hosts[1]);
    EXPECT_EQ(r.NextHops(t.FindNode("core0"), 4).size(), 1u);
    EXPECT_EQ(r.NextHops(t.hosts[0], 4).size(), 1u);
    EXPECT_TRUE(r.NextHops(t.hosts[4], 4).empty());
    // A toward-remote-pod set leads up: every next hop of the edge is an agg of pod 0.
    for (uint16_t p : r.NextHops(edge, 4))
    {
        EXPECT_EQ(t.nodes[r.PortPeer(edge, p)].tier, 1u);
    }
    // Hosts of one edge switch share a destination group.
    EXPECT_EQ(r.NumDestinationGroups(), 8u);

    const auto path = r.Path(0, 13);
    EXPECT_EQ(path.size(), 6u);
    ExpectChain(t, path, 0, 13);
    EXPECT_EQ(r.NumPorts(edge), 4u);
    EXPECT_EQ(r.PortLink(t.hosts[0], 0), 0u);
}

TEST(Routing, FatTreeK6HasThreeWayEcmp)
{
    const Topology t = Build(R"({"type": "fat-tree", "k": 6})");
    Routing r(t);
    const uint32_t remote = 9 * 3; // first host of pod 3
    EXPECT_EQ(r.NextHops(t.FindNode("pod0-edge2"), remote).size(), 3u);
    EXPECT_EQ(r.NextHops(t.FindNode("pod0-agg0"), remote).size(), 3u);
    EXPECT_EQ(r.HopCount(0, remote), 6u);
}

TEST(Routing, HpccPaperFatTreeBaseRtt)
{
    const Topology t = Build(R"({"type": "fat-tree", "variant": "hpcc-paper"})");
    Routing r(t);
    EXPECT_TRUE(r.AllReachable());
    uint32_t maxHops = 0;
    for (uint32_t dst = 1; dst < t.NumHosts(); ++dst)
    {
        maxHops = std::max(maxHops, r.HopCount(0, dst));
    }
    EXPECT_EQ(maxHops, 6u);
    EXPECT_EQ(r.NextHops(t.FindNode("pod0-tor0"), 319).size(), 4u);
    EXPECT_EQ(r.NextHops(t.FindNode("pod0-agg0"), 319).size(), 4u);

    // Base RTT of a 1000 B payload (+48 B RoCE headers) with 60 B ACKs over the longest path.
    const auto path = r.Path(0, 319);
    ASSERT_EQ(path.size(), 6u);
    ExpectChain(t, path, 0, 319);
    double rtt = 0;
    const std::vector<double> rates{100e9, 400e9, 400e9, 400e9, 400e9, 100e9};
    for (size_t i = 0; i < path.size(); ++i)
    {
        const LinkSpec& s = t.links[path[i]].spec;
        EXPECT_DOUBLE_EQ(s.rateBps, rates[i]);
        EXPECT_EQ(s.delayPs, 1000000u);
        rtt += 2 * s.delayPs * 1e-12 + 1048 * 8 / s.rateBps + 60 * 8 / s.rateBps;
    }
    EXPECT_NEAR(rtt, 12.24e-6, 0.05e-6);
}

TEST(Routing, RailOptimizedSameServerUsesScaleUp)
{
    const Topology t = Build(R"({"type": "rail-optimized", "servers": 4, "accels_per_server": 4,
                                 "spines": 2, "scale_up": {"rate": "450GBps"}})");
    Routing r(t);
    EXPECT_TRUE(r.AllReachable());
    // srv0-acc0 -> srv0-acc3: over nvsw0, 2 hops, leaving by the scale-up port (port 1).
    EXPECT_EQ(r.HopCount(0, 3), 2u);
    ASSERT_EQ(r.NextHops(t.hosts[0], 3).size(), 1u);
    EXPECT_EQ(r.NextHops(t.hosts[0], 3)[0], 1u);
    EXPECT_TRUE(t.nodes[r.PortPeer(t.hosts[0], 1)].scaleUp);
    // Same rail, other server: over rail0, 2 hops, by the NIC (port 0).
    EXPECT_EQ(r.HopCount(0, 4), 2u);
    EXPECT_EQ(r.NextHops(t.hosts[0], 4)[0], 0u);
    // Other rail, other server: rail -> spine -> rail; accelerators never forward.
    EXPECT_EQ(r.HopCount(0, 5), 4u);
    EXPECT_EQ(r.NextHops(t.FindNode("rail0"), 5).size(), 2u);

    const Topology noScaleUp = Build(R"({"type": "rail-optimized", "servers": 4,
                                         "accels_per_server": 4, "spines": 2})");
    Routing r2(noScaleUp);
    EXPECT_EQ(r2.HopCount(0, 3), 4u);
}

TEST(Routing, TorusAndRingHopCounts)
{
    const Topology torus = Build(R"({"type": "torus", "dims": [4, 4]})");
    Routing r(torus);
    EXPECT_TRUE(r.AllReachable());
    // host0 on sw0-0, host10 on sw2-2: 2 + 2 switch hops plus the two host links.
    EXPECT_EQ(r.HopCount(0, 10), 6u);
    EXPECT_EQ(r.HopCount(0, 3), 3u); // sw3-0 is a wrap-around neighbour
    // From sw0-0 toward sw2-2 each direction of both dimensions is on a shortest path.
    EXPECT_EQ(r.NextHops(torus.FindNode("sw0-0"), 10).size(), 4u);

    const Topology ring = Build(R"({"type": "ring", "switches": 6})");
    Routing rr(ring);
    EXPECT_EQ(rr.HopCount(0, 3), 5u);
    EXPECT_EQ(rr.NextHops(ring.FindNode("sw0"), 3).size(), 2u);
    EXPECT_EQ(rr.NextHops(ring.FindNode("sw0"), 2).size(), 1u);
}

TEST(Routing, DragonflyAllReachableWithinFiveHops)
{
    const Topology t = Build(R"({"type": "dragonfly", "groups": 9, "routers_per_group": 4,
                                 "hosts_per_router": 2, "global_links_per_router": 2})");
    Routing r(t);
    EXPECT_TRUE(r.AllReachable());
    uint32_t maxHops = 0;
    for (uint32_t s = 0; s < t.NumHosts(); s += 7)
    {
        for (uint32_t d = 0; d < t.NumHosts(); ++d)
        {
            maxHops = std::max(maxHops, r.HopCount(s, d));
        }
    }
    // host - router (- local) - global (- local) - router - host
    EXPECT_EQ(maxHops, 5u);
}

/// Link id between two named nodes.
uint32_t
LinkId(const Topology& t, const std::string& a, const std::string& b)
{
    const uint32_t na = t.FindNode(a);
    const uint32_t nb = t.FindNode(b);
    for (uint32_t i = 0; i < t.links.size(); ++i)
    {
        if ((t.links[i].a == na && t.links[i].b == nb)
            || (t.links[i].a == nb && t.links[i].b == na))
        {
            return i;
        }
    }
    return kUnreachable;
}

TEST(Routing, LinkDownReroutesThenReportsUnreachable)
{
    const Topology t = Build(R"({"type": "leaf-spine", "leaves": 2, "spines": 2,
                                 "hosts_per_leaf": 2})");
    const uint32_t leaf0 = t.FindNode("leaf0");
    std::vector<bool> down(t.links.size(), false);
    {
        Routing r(t, down);
        EXPECT_EQ(r.NextHops(leaf0, 2).size(), 2u);
    }
    down[LinkId(t, "leaf0", "spine0")] = true;
    {
        Routing r(t, down);
        EXPECT_TRUE(r.AllReachable());
        ASSERT_EQ(r.NextHops(leaf0, 2).size(), 1u);
        EXPECT_EQ(r.PortPeer(leaf0, r.NextHops(leaf0, 2)[0]), t.FindNode("spine1"));
        // spine0 still reaches leaf0's hosts the long way round (via leaf1 and spine1).
        EXPECT_EQ(r.NextHops(t.FindNode("spine0"), 0).size(), 1u);
        EXPECT_EQ(r.HopCount(2, 0), 4u);
        EXPECT_EQ(r.Path(0, 2).size(), 4u);
        EXPECT_EQ(r.NumPorts(leaf0), 4u); // down links keep their port numbers
    }
    down[LinkId(t, "leaf0", "spine1")] = true;
    {
        Routing r(t, down);
        EXPECT_FALSE(r.AllReachable());
        EXPECT_TRUE(r.NextHops(leaf0, 2).empty());
        EXPECT_EQ(r.HopCount(0, 2), kUnreachable);
        EXPECT_TRUE(r.Path(0, 2).empty());
        EXPECT_EQ(r.HopCount(0, 1), 2u); // same leaf still fine
    }
    // A host whose only link is down is unreachable too.
    std::vector<bool> hostDown(t.links.size(), false);
    hostDown[0] = true;
    Routing r(t, hostDown);
    EXPECT_FALSE(r.AllReachable());
    EXPECT_EQ(r.HopCount(1, 0), kUnreachable);
    EXPECT_EQ(r.HopCount(1, 3), 4u);
}

TEST(Routing, ParallelLinksAreSeparatePorts)
{
    const Topology t = Build(R"({"type": "leaf-spine", "leaves": 2, "spines": 1,
                                 "hosts_per_leaf": 1, "links_per_spine": 3})");
    Routing r(t);
    EXPECT_EQ(r.NextHops(t.FindNode("leaf0"), 1).size(), 3u);
    EXPECT_EQ(r.NextHops(t.FindNode("spine0"), 1).size(), 3u);
}

TEST(Routing, HostsDoNotForward)
{
    // h0 - s0 - h1 - s1 - h2: h1 sits between two switches but must not relay.
    const nlohmann::json spec = nlohmann::json::parse(R"({"type": "custom",
        "nodes": [{"name": "h0", "kind": "host"}, {"name": "h1", "kind": "host"},
                  {"name": "h2", "kind": "host"}, {"name": "s0", "kind": "switch"},
                  {"name": "s1", "kind": "switch"}],
        "links": [{"a": "h0", "b": "s0"}, {"a": "s0", "b": "h1"}, {"a": "h1", "b": "s1"},
                  {"a": "s1", "b": "h2"}]})");
    Topology t;
    t.AddHost("h0", 0);
    t.AddHost("h1", 1);
    t.AddHost("h2", 2);
    t.AddSwitch("s0", 0);
    t.AddSwitch("s1", 0);
    t.AddLink(0, 3, LinkSpec{});
    t.AddLink(3, 1, LinkSpec{});
    t.AddLink(1, 4, LinkSpec{});
    t.AddLink(4, 2, LinkSpec{});
    Routing r(t);
    EXPECT_FALSE(r.AllReachable());
    EXPECT_EQ(r.HopCount(0, 1), 2u);
    EXPECT_EQ(r.HopCount(1, 2), 2u);
    EXPECT_EQ(r.HopCount(0, 2), kUnreachable);
    EXPECT_THROW(BuildTopology(spec, "t.json"), std::exception);
}

} // namespace
} // namespace fabricsim
