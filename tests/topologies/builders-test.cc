/*
 * Builder tests: node, link and capacity counts for every topology type.
 */
#include "test-util.h"
#include "units.h"

#include <gtest/gtest.h>

#include <set>

namespace fabricsim
{
namespace
{

TEST(Builders, SingleSwitch)
{
    const Topology t = Build(R"({"type": "single-switch", "hosts": 8,
                                 "host_link": {"rate": "400Gbps", "delay": "500ns"}})");
    EXPECT_EQ(t.type, "single-switch");
    EXPECT_EQ(t.NumHosts(), 8u);
    EXPECT_EQ(t.nodes.size(), 9u);
    ASSERT_EQ(t.links.size(), 8u);
    EXPECT_DOUBLE_EQ(t.links[0].spec.rateBps, 400e9);
    EXPECT_EQ(t.links[0].spec.delayPs, 500000u);
    EXPECT_EQ(t.nodes[t.hosts[3]].name, "host3");
    EXPECT_EQ(t.nodes[t.hosts[3]].hostIndex, 3u);
    EXPECT_EQ(Degree(t, t.FindNode("sw0")), 8u);
}

TEST(Builders, Ring)
{
    const Topology t = Build(R"({"type": "ring", "switches": 5, "hosts_per_switch": 2,
                                 "fabric_link": {"rate": "200Gbps"}})");
    EXPECT_EQ(t.NumHosts(), 10u);
    EXPECT_EQ(t.nodes.size(), 15u);
    EXPECT_EQ(t.links.size(), 10u + 5u);
    for (uint32_t i = 0; i < 5; ++i)
    {
        const uint32_t sw = t.FindNode("sw" + std::to_string(i));
        const uint32_t next = t.FindNode("sw" + std::to_string((i + 1) % 5));
        EXPECT_EQ(Degree(t, sw), 4u);
        EXPECT_EQ(LinksBetween(t, sw, next), 1u);
    }
    EXPECT_DOUBLE_EQ(t.links.back().spec.rateBps, 200e9);
    EXPECT_DOUBLE_EQ(t.links.front().spec.rateBps, 100e9);
}

TEST(Builders, LeafSpineCounts)
{
    const Topology t = Build(R"({"type": "leaf-spine", "leaves": 4, "spines": 2,
                                 "hosts_per_leaf": 8, "links_per_spine": 2})");
    EXPECT_EQ(t.NumHosts(), 32u);
    EXPECT_EQ(CountSwitches(t, 0), 4u);
    EXPECT_EQ(CountSwitches(t, 1), 2u);
    EXPECT_EQ(t.links.size(), 32u + 4u * 2u * 2u);
    EXPECT_EQ(LinksBetween(t, t.FindNode("leaf3"), t.FindNode("spine1")), 2u);
    // Without oversubscription the fabric link defaults to the host link.
    EXPECT_DOUBLE_EQ(t.links.back().spec.rateBps, 100e9);
}

TEST(Builders, LeafSpineOversubscriptionScalesUplinkRate)
{
    const Topology t = Build(R"({"type": "leaf-spine", "leaves": 2, "spines": 4,
                                 "hosts_per_leaf": 16, "oversubscription": 2,
                                 "host_link": {"rate": "100Gbps"},
                                 "fabric_link": {"delay": "2us"}})");
    const uint32_t leaf = t.FindNode("leaf0");
    double down = 0;
    double up = 0;
    for (const auto& l : t.links)
    {
        if (l.a == leaf || l.b == leaf)
        {
            const uint32_t other = l.a == leaf ? l.b : l.a;
            (t.nodes[other].kind == NodeKind::Host ? down : up) += l.spec.rateBps;
            if (t.nodes[other].kind == NodeKind::Switch)
            {
                EXPECT_EQ(l.spec.delayPs, 2000000u);
            }
        }
    }
    EXPECT_DOUBLE_EQ(down, 1600e9);
    EXPECT_DOUBLE_EQ(up, 800e9);
    EXPECT_DOUBLE_EQ(t.links.back().spec.rateBps, 200e9); // 4 uplinks of 200G
}

TEST(Builders, FatTreeK4AndK6)
{
    for (uint32_t k : {4u, 6u})
    {
        const Topology t = Build(R"({"type": "fat-tree", "k": )" + std::to_string(k) + "}");
        EXPECT_EQ(t.NumHosts(), k * k * k / 4);
        EXPECT_EQ(CountSwitches(t, 0), k * k / 2);
        EXPECT_EQ(CountSwitches(t, 1), k * k / 2);
        EXPECT_EQ(CountSwitches(t, 2), k * k / 4);
        EXPECT_EQ(t.links.size(), 3 * k * k * k / 4);
        for (const auto& n : t.nodes)
        {
            // Every switch of a k-ary fat-tree has exactly k ports.
            if (n.kind == NodeKind::Switch)
            {
                EXPECT_EQ(Degree(t, t.FindNode(n.name)), k) << n.name;
            }
        }
        // Each core links exactly one agg per pod.
        const uint32_t core = t.FindNode("core0");
        for (uint32_t p = 0; p < k; ++p)
        {
            uint32_t perPod = 0;
            for (uint32_t a = 0; a < k / 2; ++a)
            {
                perPod += LinksBetween(
                    t, core, t.FindNode("pod" + std::to_string(p) + "-agg" + std::to_string(a)));
            }
            EXPECT_EQ(perPod, 1u);
        }
    }
}

TEST(Builders, FatTreeHpccPaper)
{
    const Topology t = Build(R"({"type": "fat-tree", "variant": "hpcc-paper"})");
    EXPECT_EQ(t.NumHosts(), 320u);
    EXPECT_EQ(CountSwitches(t, 0), 20u);
    EXPECT_EQ(CountSwitches(t, 1), 20u);
    EXPECT_EQ(CountSwitches(t, 2), 16u);
    EXPECT_EQ(t.nodes.size(), 376u);
    EXPECT_EQ(t.links.size(), 320u + 80u + 80u);
    // HPCC numbering: hosts 0..319, then ToRs from 320.
    EXPECT_EQ(t.hosts[319], 319u);
    EXPECT_EQ(t.nodes[320].name, "pod0-tor0");
    EXPECT_EQ(Degree(t, t.FindNode("pod4-tor3")), 16u + 4u);
    EXPECT_EQ(Degree(t, t.FindNode("pod2-agg1")), 8u);
    EXPECT_EQ(Degree(t, t.FindNode("core15")), 5u);
    // Agg j of every pod links cores 4j..4j+3.
    EXPECT_EQ(LinksBetween(t, t.FindNode("pod3-agg2"), t.FindNode("core9")), 1u);
    EXPECT_EQ(LinksBetween(t, t.FindNode("pod3-agg2"), t.FindNode("core4")), 0u);
    for (const auto& l : t.links)
    {
        const bool host
            = t.nodes[l.a].kind == NodeKind::Host || t.nodes[l.b].kind == NodeKind::Host;
        EXPECT_DOUBLE_EQ(l.spec.rateBps, host ? 100e9 : 400e9);
        EXPECT_EQ(l.spec.delayPs, 1000000u);
    }
}

TEST(Builders, RailOptimizedWithScaleUp)
{
    const Topology t = Build(R"({"type": "rail-optimised", "servers": 4, "accels_per_server": 8,
                                 "spines": 2, "host_link": {"rate": "400Gbps"},
                                 "scale_up": {"rate": "450GBps", "delay": "250ns"}})");
    EXPECT_EQ(t.type, "rail-optimized");
    EXPECT_EQ(t.NumHosts(), 32u);
    EXPECT_EQ(t.nodes.size(), 32u + 8u + 2u + 4u);
    EXPECT_EQ(t.links.size(), 32u + 8u * 2u + 32u);
    const TopoNode& acc = t.nodes[t.hosts[2 * 8 + 5]];
    EXPECT_EQ(acc.name, "srv2-acc5");
    EXPECT_EQ(acc.group, 2u);
    EXPECT_EQ(acc.localIndex, 5u);
    const uint32_t rail5 = t.FindNode("rail5");
    EXPECT_EQ(Degree(t, rail5), 4u + 2u);
    EXPECT_EQ(LinksBetween(t, rail5, t.hosts[2 * 8 + 5]), 1u);
    const uint32_t nvsw = t.FindNode("nvsw2");
    EXPECT_TRUE(t.nodes[nvsw].scaleUp);
    EXPECT_EQ(Degree(t, nvsw), 8u);
    for (const auto& l : t.links)
    {
        if (l.a == nvsw || l.b == nvsw)
        {
            EXPECT_DOUBLE_EQ(l.spec.rateBps, 3.6e12);
            EXPECT_EQ(l.spec.delayPs, 250000u);
        }
    }
}

TEST(Builders, RailOptimizedSingleRailNeedsNoSpine)
{
    const Topology t = Build(R"({"type": "rail-optimized", "servers": 8, "accels_per_server": 1,
                                 "spines": 0})");
    EXPECT_EQ(t.NumHosts(), 8u);
    EXPECT_EQ(t.nodes.size(), 9u);
}

TEST(Builders, TorusNeighbourCounts)
{
    auto switchNeighbours = [](const Topology& t, uint32_t node)
    {
        std::set<uint32_t> peers;
        for (const auto& l : t.links)
        {
            const uint32_t other = l.a == node ? l.b : (l.b == node ? l.a : node);
            if (other != node && t.nodes[other].kind == NodeKind::Switch)
            {
                peers.insert(other);
            }
        }
        return peers.size();
    };
    const Topology t2 = Build(R"({"type": "torus", "dims": [4, 4]})");
    EXPECT_EQ(t2.NumHosts(), 16u);
    EXPECT_EQ(t2.links.size(), 16u + 32u);
    const Topology t3 = Build(R"({"type": "torus", "dims": [3, 3, 3], "hosts_per_switch": 2})");
    EXPECT_EQ(t3.NumHosts(), 54u);
    EXPECT_EQ(t3.links.size(), 54u + 81u);
    const Topology tSmall = Build(R"({"type": "torus", "dims": [2, 3]})");
    EXPECT_EQ(tSmall.links.size(), 6u + 3u + 6u); // size-2 dim: one link per switch pair
    for (const auto& n : t2.nodes)
    {
        if (n.kind == NodeKind::Switch)
        {
            EXPECT_EQ(switchNeighbours(t2, t2.FindNode(n.name)), 4u);
        }
    }
    for (const auto& n : t3.nodes)
    {
        if (n.kind == NodeKind::Switch)
        {
            EXPECT_EQ(switchNeighbours(t3, t3.FindNode(n.name)), 6u);
        }
    }
    for (const auto& n : tSmall.nodes)
    {
        if (n.kind == NodeKind::Switch)
        {
            const uint32_t id = tSmall.FindNode(n.name);
            EXPECT_EQ(switchNeighbours(tSmall, id), 3u);
            EXPECT_EQ(Degree(tSmall, id), 1u + 3u);
        }
    }
    EXPECT_EQ(LinksBetween(t2, t2.FindNode("sw0-0"), t2.FindNode("sw3-0")), 1u); // wrap-around
}

/// Global links between each pair of dragonfly groups, and per router.
void
CheckDragonfly(uint32_t g, uint32_t a, uint32_t p, uint32_t h, uint32_t minPerPair)
{
    const Topology t
        = Build(R"({"type": "dragonfly", "groups": )" + std::to_string(g)
                + R"(, "routers_per_group": )" + std::to_string(a) + R"(, "hosts_per_router": )"
                + std::to_string(p) + R"(, "global_links_per_router": )" + std::to_string(h) + "}");
    EXPECT_EQ(t.NumHosts(), g * a * p);
    std::vector<std::vector<uint32_t>> pair(g, std::vector<uint32_t>(g, 0));
    std::vector<uint32_t> global(t.nodes.size(), 0);
    auto groupOf = [&](uint32_t node)
    {
        return (node - g * a * p) / a;
    };
    uint32_t local = 0;
    for (const auto& l : t.links)
    {
        if (t.nodes[l.a].kind == NodeKind::Host || t.nodes[l.b].kind == NodeKind::Host)
        {
            continue;
        }
        if (groupOf(l.a) == groupOf(l.b))
        {
            ++local;
            continue;
        }
        ++pair[groupOf(l.a)][groupOf(l.b)];
        ++pair[groupOf(l.b)][groupOf(l.a)];
        ++global[l.a];
        ++global[l.b];
    }
    EXPECT_EQ(local, g * a * (a - 1) / 2);
    for (uint32_t x = 0; x < g; ++x)
    {
        for (uint32_t y = 0; y < g; ++y)
        {
            if (x != y)
            {
                EXPECT_GE(pair[x][y], minPerPair) << "groups " << x << " " << y;
                EXPECT_LE(pair[x][y], minPerPair + 1) << "groups " << x << " " << y;
            }
        }
    }
    for (uint32_t n : global)
    {
        EXPECT_LE(n, h);
    }
}

TEST(Builders, DragonflyGroupConnectivity)
{
    CheckDragonfly(9, 4, 2, 2, 1); // balanced: a*h = g-1, one link per pair
    CheckDragonfly(5, 4, 1, 2, 2); // two links per pair
    CheckDragonfly(6, 2, 1, 3, 1); // g even, a*h not a multiple of g-1
    CheckDragonfly(1, 3, 2, 0, 0);
}

TEST(Builders, Custom)
{
    const Topology t = Build(R"({"type": "custom",
        "host_link": {"rate": "25Gbps"}, "fabric_link": {"rate": "100Gbps"},
        "nodes": [{"name": "a", "kind": "host", "group": 7, "local_index": 1},
                  {"name": "s1", "kind": "switch"},
                  {"name": "s2", "kind": "switch", "tier": 1},
                  {"name": "b", "kind": "host"}],
        "links": [{"a": "a", "b": "s1"}, {"a": 1, "b": 2, "delay": "3us"},
                  {"a": "s2", "b": "b", "rate": 50e9}]})");
    EXPECT_EQ(t.NumHosts(), 2u);
    EXPECT_EQ(t.hosts[1], 3u);
    EXPECT_EQ(t.nodes[0].group, 7u);
    EXPECT_EQ(t.nodes[0].localIndex, 1u);
    EXPECT_EQ(t.nodes[3].group, 1u); // default group: host index
    EXPECT_EQ(t.nodes[2].tier, 1u);
    ASSERT_EQ(t.links.size(), 3u);
    EXPECT_DOUBLE_EQ(t.links[0].spec.rateBps, 25e9);
    EXPECT_DOUBLE_EQ(t.links[1].spec.rateBps, 100e9);
    EXPECT_EQ(t.links[1].spec.delayPs, 3000000u);
    EXPECT_DOUBLE_EQ(t.links[2].spec.rateBps, 50e9);
}

TEST(Builders, RateAndDelayParsing)
{
    const std::string f = "x.json";
    using nlohmann::json;
    EXPECT_DOUBLE_EQ(ParseRate(json("100Gbps"), f, "r"), 100e9);
    EXPECT_DOUBLE_EQ(ParseRate(json("400G"), f, "r"), 400e9);
    EXPECT_DOUBLE_EQ(ParseRate(json("25Gbps"), f, "r"), 25e9);
    EXPECT_DOUBLE_EQ(ParseRate(json("3.6Tbps"), f, "r"), 3.6e12);
    EXPECT_DOUBLE_EQ(ParseRate(json("450GBps"), f, "r"), 3.6e12);
    EXPECT_DOUBLE_EQ(ParseRate(json("10 Mbps"), f, "r"), 10e6);
    EXPECT_DOUBLE_EQ(ParseRate(json(1e9), f, "r"), 1e9);
    EXPECT_EQ(ParseDelay(json("1us"), f, "d"), 1000000u);
    EXPECT_EQ(ParseDelay(json("500ns"), f, "d"), 500000u);
    EXPECT_EQ(ParseDelay(json("0.001ms"), f, "d"), 1000000u);
    EXPECT_EQ(ParseDelay(json("250ps"), f, "d"), 250u);
    EXPECT_EQ(ParseDelay(json(1000), f, "d"), 1000000u);
    EXPECT_EQ(ParseDelay(json(0), f, "d"), 0u);
}

} // namespace
} // namespace fabricsim
