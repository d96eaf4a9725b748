// A link taken down mid-run: frames on it are counted as link_down drops, routes are recomputed
// and every flow still completes through retransmission.
#include "scenario-runner.h"
#include "topology.h"

#include <gtest/gtest.h>

using nlohmann::json;

namespace
{

/// Eight 2 MB flows between two leaves; leaf0-spine0 goes down at 50 us.
json
LinkDownScenario()
{
    json topo = {{"type", "leaf-spine"}, {"leaves", 2}, {"spines", 2}, {"hosts_per_leaf", 4}};
    fabricsim::Topology t = fabricsim::BuildTopology(topo, "test");
    uint32_t leaf0 = t.FindNode("leaf0"), spine0 = t.FindNode("spine0");
    int link = -1;
    for (size_t l = 0; l < t.links.size(); ++l)
    {
        if ((t.links[l].a == leaf0 && t.links[l].b == spine0)
            || (t.links[l].a == spine0 && t.links[l].b == leaf0))
        {
            link = int(l);
        }
    }
    EXPECT_GE(link, 0);
    json flows = json::array();
    for (int i = 0; i < 4; ++i)
    {
        for (int j = 0; j < 2; ++j)
        {
            flows.push_back({{"src", i}, {"dst", 4 + (i + j) % 4}, {"size_bytes", 2000000}});
        }
    }
    json sc = {{"seed", 5},
               {"stop_ns", 100000000},
               {"topology", topo},
               {"transport", {{"cc", "dcqcn"}, {"rto_ns", 100000}}},
               {"monitor", {{"interval_ns", 0}}},
               {"link_events", {{{"link", link}, {"at_ns", 50000}, {"state", "down"}}}},
               {"traffic", {{"flows", flows}}}};
    return sc;
}

} // namespace

TEST(LinkDown, ReroutesAndEveryFlowCompletes)
{
    auto dir = fabricsim::test::TempDir("linkdown");
    json s = fabricsim::test::RunScenario(LinkDownScenario(), dir);
    EXPECT_EQ(s["flows_completed"].get<int>(), 8);
    EXPECT_GT(s["drops"]["by_reason"]["link_down"].get<uint64_t>(), 0u);
    EXPECT_GT(s["nic"]["retransmitted_packets"].get<uint64_t>(), 0u);
    EXPECT_TRUE(s["conservation"]["ok"].get<bool>());
}

TEST(LinkDown, SwitchRouteViewsOffGiveTheSameRun)
{
    // The switches' own route views (on by default, off past the helper's memory budget) are
    // a cache of the route table: with them off every frame asks the table, and the run,
    // reroute included, is the same to the byte.
    json off = LinkDownScenario();
    off["attributes"] = {{"ns3::FabricSwitch::RouteView", "false"}};
    json a = fabricsim::test::RunScenario(LinkDownScenario(), fabricsim::test::TempDir("view-on"));
    json b = fabricsim::test::RunScenario(off, fabricsim::test::TempDir("view-off"));
    EXPECT_EQ(a["flows_completed"].get<int>(), 8);
    a.erase("scenario");
    b.erase("scenario");
    EXPECT_EQ(a.dump(), b.dump());
}
