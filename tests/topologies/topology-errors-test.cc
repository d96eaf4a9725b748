/*
 * Bad topology descriptions: every error names the file and the field and says what was
 * expected and what was found.
 */
#include "input-error.h"
#include "test-util.h"

#include <gtest/gtest.h>

namespace fabricsim
{
namespace
{

/// The InputError raised by building `json`; fails the test when none is.
fabricsim::InputError
BuildError(const std::string& json)
{
    try
    {
        Build(json);
    }
    catch (const fabricsim::InputError& e)
    {
        EXPECT_EQ(e.File(), "test.json");
        return e;
    }
    ADD_FAILURE() << "no error for " << json;
    return fabricsim::InputError("", "", "", "");
}

bool
Contains(const std::string& s, const std::string& part)
{
    return s.find(part) != std::string::npos;
}

TEST(TopologyErrors, UnknownTypeListsValidTypes)
{
    const auto e = BuildError(R"({"type": "hypercube"})");
    EXPECT_EQ(e.Field(), "topology.type");
    EXPECT_TRUE(Contains(e.Found(), "hypercube"));
    for (const auto& t : TopologyTypes())
    {
        EXPECT_TRUE(Contains(e.Expected(), t)) << t;
    }
    EXPECT_EQ(BuildError(R"({"hosts": 4})").Field(), "topology.type");
    EXPECT_EQ(BuildError(R"([1, 2])").Field(), "topology");
}

TEST(TopologyErrors, UnknownKeyNamesKeyAndListsValidKeys)
{
    const auto e
        = BuildError(R"({"type": "leaf-spine", "leaves": 2, "spines": 2, "hosts_per_leafs": 4})");
    EXPECT_EQ(e.Field(), "topology.hosts_per_leafs");
    EXPECT_TRUE(Contains(e.Expected(), "hosts_per_leaf"));
    EXPECT_TRUE(Contains(e.Expected(), "oversubscription"));
    EXPECT_EQ(BuildError(R"({"type": "single-switch", "hosts": 2,
                             "host_link": {"rate": "1G", "latency": "1us"}})")
                  .Field(),
              "topology.host_link.latency");
}

TEST(TopologyErrors, BadRateAndDelay)
{
    auto e = BuildError(R"({"type": "single-switch", "hosts": 2,
                            "host_link": {"rate": "100Gbs"}})");
    EXPECT_EQ(e.Field(), "topology.host_link.rate");
    EXPECT_EQ(e.Expected(), "a rate like \"100Gbps\"");
    EXPECT_EQ(e.Found(), "\"100Gbs\"");
    EXPECT_EQ(BuildError(R"({"type": "single-switch", "hosts": 2,
                             "fabric_link": {"rate": "100"}})")
                  .Field(),
              "topology.fabric_link.rate");
    EXPECT_EQ(BuildError(R"({"type": "single-switch", "hosts": 2,
                             "host_link": {"rate": -5}})")
                  .Field(),
              "topology.host_link.rate");
    // Rates the models cannot hold as whole bits per second are refused, not truncated.
    for (const char* rate : {"0.5", "\"0.5bps\"", "\"1001Tbps\"", "1e30"})
    {
        auto r = BuildError(
            std::string(R"({"type": "single-switch", "hosts": 2, "host_link": {"rate": )") + rate
            + "}}");
        EXPECT_EQ(r.Field(), "topology.host_link.rate") << rate;
        EXPECT_EQ(r.Expected(), "a rate from 1bps to 1000Tbps") << rate;
    }
    EXPECT_EQ(BuildError(R"({"type": "single-switch", "hosts": 2,
                             "host_link": {"delay": "1 fortnight"}})")
                  .Field(),
              "topology.host_link.delay");
    EXPECT_EQ(BuildError(R"({"type": "single-switch", "hosts": 2,
                             "host_link": {"loss_rate": 1.5}})")
                  .Field(),
              "topology.host_link.loss_rate");
}

TEST(TopologyErrors, WrongJsonTypesAndRanges)
{
    auto e = BuildError(R"({"type": "single-switch", "hosts": "4"})");
    EXPECT_EQ(e.Field(), "topology.hosts");
    EXPECT_EQ(e.Found(), "\"4\"");
    EXPECT_EQ(BuildError(R"({"type": "single-switch"})").Field(), "topology.hosts");
    EXPECT_EQ(BuildError(R"({"type": "single-switch", "hosts": 2, "host_link": "fast"})").Field(),
              "topology.host_link");
    EXPECT_EQ(BuildError(R"({"type": "ring", "switches": 2})").Field(), "topology.switches");
    EXPECT_EQ(BuildError(R"({"type": "fat-tree", "k": 5})").Field(), "topology.k");
    EXPECT_EQ(BuildError(R"({"type": "fat-tree", "k": 4, "variant": "hpcc-paper"})").Field(),
              "topology.k");
    EXPECT_EQ(BuildError(R"({"type": "fat-tree", "variant": "jellyfish"})").Field(),
              "topology.variant");
    EXPECT_EQ(BuildError(R"({"type": "torus", "dims": [4, 1]})").Field(), "topology.dims");
    EXPECT_EQ(BuildError(R"({"type": "torus", "dims": 4})").Field(), "topology.dims");
    EXPECT_EQ(BuildError(R"({"type": "dragonfly", "groups": 9, "routers_per_group": 2,
                             "hosts_per_router": 1, "global_links_per_router": 2})")
                  .Field(),
              "topology.global_links_per_router");
    EXPECT_EQ(BuildError(R"({"type": "leaf-spine", "leaves": 2, "spines": 2, "hosts_per_leaf": 2,
                             "oversubscription": 2, "fabric_link": {"rate": "400G"}})")
                  .Field(),
              "topology.fabric_link.rate");
    EXPECT_EQ(BuildError(R"({"type": "leaf-spine", "leaves": 2, "spines": 2, "hosts_per_leaf": 2,
                             "oversubscription": 0})")
                  .Field(),
              "topology.oversubscription");
}

TEST(TopologyErrors, CustomNodesAndLinks)
{
    EXPECT_EQ(BuildError(R"({"type": "custom", "nodes": [{"name": "a", "kind": "router"}],
                             "links": []})")
                  .Field(),
              "topology.nodes[0].kind");
    EXPECT_EQ(BuildError(R"({"type": "custom",
                             "nodes": [{"name": "a", "kind": "host"}, {"name": "a", "kind": "switch"}],
                             "links": []})")
                  .Field(),
              "topology.nodes[1].name");
    const auto e = BuildError(R"({"type": "custom",
        "nodes": [{"name": "a", "kind": "host"}, {"name": "s", "kind": "switch"}],
        "links": [{"a": "a", "b": "t"}]})");
    EXPECT_EQ(e.Field(), "topology.links[0].b");
    EXPECT_TRUE(Contains(e.Found(), "\"t\""));
    EXPECT_EQ(BuildError(R"({"type": "custom", "nodes": [{"name": "a", "kind": "host"},
                             {"name": "s", "kind": "switch"}], "links": [{"a": 0, "b": 5}]})")
                  .Field(),
              "topology.links[0].b");
    EXPECT_EQ(BuildError(R"({"type": "custom", "nodes": [{"name": "s", "kind": "switch"}],
                             "links": [{"a": "s", "b": "s"}]})")
                  .Field(),
              "topology.links[0].b");
    EXPECT_EQ(BuildError(R"({"type": "custom", "nodes": [{"name": "a", "kind": "host"},
                             {"name": "s", "kind": "switch"}],
                             "links": [{"a": "a", "b": "s", "rate": "fast"}]})")
                  .Field(),
              "topology.links[0].rate");
}

TEST(TopologyErrors, DisconnectedCustomTopology)
{
    const auto e = BuildError(R"({"type": "custom",
        "nodes": [{"name": "a", "kind": "host"}, {"name": "s1", "kind": "switch"},
                  {"name": "b", "kind": "host"}, {"name": "s2", "kind": "switch"}],
        "links": [{"a": "a", "b": "s1"}, {"a": "b", "b": "s2"}]})");
    EXPECT_EQ(e.Field(), "topology");
    EXPECT_EQ(e.Expected(), "a connected topology");
    EXPECT_EQ(e.Found(), "disconnected topology: host 0 (a) cannot reach host 1 (b)");
}

TEST(TopologyErrors, RailsWithoutSpinesNeedOneRail)
{
    // Cross-rail traffic would have to be relayed by an accelerator, which never forwards.
    const auto e = BuildError(R"({"type": "rail-optimized", "servers": 2, "accels_per_server": 2,
                                  "spines": 0, "scale_up": {}})");
    EXPECT_TRUE(Contains(e.Found(), "disconnected topology"));
}

} // namespace
} // namespace fabricsim
