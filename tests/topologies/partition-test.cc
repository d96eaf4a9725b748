// Cutting a topology into MPI ranks: pods, leaves and servers stay whole, the load is even,
// the lookahead is the smallest cut delay, and a partition file is checked node by node.
#include "input-error.h"
#include "partition.h"
#include "topology.h"

#include <gtest/gtest.h>

#include <set>

using fabricsim::AutoPartition;
using fabricsim::BuildTopology;
using fabricsim::InputError;
using fabricsim::NodeKind;
using fabricsim::Partition;
using fabricsim::Topology;
using nlohmann::json;

namespace
{

/// Every link between a host and a non-top switch, and inside a unit, stays on one rank:
/// the only links cut touch a switch of tier >= \p minCutTier.
void
ExpectCutsOnlyAtTier(const Topology& t, const Partition& p, uint32_t minCutTier)
{
    for (const auto& l : t.links)
    {
        if (p.rankOf[l.a] == p.rankOf[l.b])
        {
            continue;
        }
        uint32_t tier = 0;
        for (uint32_t v : {l.a, l.b})
        {
            if (t.nodes[v].kind == NodeKind::Switch)
            {
                tier = std::max(tier, t.nodes[v].tier);
            }
        }
        EXPECT_GE(tier, minCutTier) << t.nodes[l.a].name << " - " << t.nodes[l.b].name;
    }
}

double
Imbalance(const Partition& p)
{
    double lo = p.load[0], hi = p.load[0];
    for (double l : p.load)
    {
        lo = std::min(lo, l);
        hi = std::max(hi, l);
    }
    return hi / lo;
}

} // namespace

TEST(Partition, AFatTreeSplitsAlongItsCoreLinksPodsWhole)
{
    Topology t = BuildTopology(
        {{"type", "fat-tree"}, {"k", 4}, {"fabric_link", {{"delay", "1us"}}}}, "test");
    for (uint32_t ranks : {2u, 4u})
    {
        Partition p = AutoPartition(t, ranks, "test");
        ASSERT_EQ(p.rankOf.size(), t.nodes.size());
        ExpectCutsOnlyAtTier(t, p, 2); // only aggregation-core links
        EXPECT_EQ(p.lookaheadPs, 1000000u);
        EXPECT_LE(Imbalance(p), 1.01) << ranks;
        // 4 pods x 2 aggregation switches x 2 uplinks: each core reaches all pods, so a core
        // on one rank has (ranks - 1) / ranks of its links cut.
        EXPECT_EQ(p.cutLinks, 16u * (ranks - 1) / ranks);
    }
}

TEST(Partition, MoreRanksThanPodsSplitsPodsAtTheirAggregationTier)
{
    Topology t = BuildTopology({{"type", "fat-tree"}, {"k", 4}}, "test");
    Partition p = AutoPartition(t, 8, "test");
    ExpectCutsOnlyAtTier(t, p, 1); // edge switches keep their hosts
    std::set<uint32_t> used(p.rankOf.begin(), p.rankOf.end());
    EXPECT_EQ(used.size(), 8u);
    EXPECT_LE(Imbalance(p), 1.5);
}

TEST(Partition, ALeafSpineKeepsEachLeafWithItsHosts)
{
    Topology t = BuildTopology(
        {{"type", "leaf-spine"}, {"leaves", 4}, {"spines", 2}, {"hosts_per_leaf", 8}}, "test");
    Partition p = AutoPartition(t, 2, "test");
    ExpectCutsOnlyAtTier(t, p, 1);
    for (uint32_t h : t.hosts)
    {
        const std::string leaf = "leaf" + std::to_string(t.nodes[h].hostIndex / 8);
        EXPECT_EQ(p.rankOf[h], p.rankOf[t.FindNode(leaf)]) << t.nodes[h].name;
    }
    EXPECT_DOUBLE_EQ(p.load[0], p.load[1]);
}

TEST(Partition, LinksOfTheLargestDelayAreCutFirst)
{
    // Two leaf-spine sites joined by 50 us links: the cut is the long links alone.
    Topology t = BuildTopology({{"type", "custom"},
                                {"nodes",
                                 {{{"name", "a0"}, {"kind", "host"}},
                                  {{"name", "a1"}, {"kind", "host"}},
                                  {{"name", "swa"}, {"kind", "switch"}},
                                  {{"name", "b0"}, {"kind", "host"}},
                                  {{"name", "b1"}, {"kind", "host"}},
                                  {{"name", "swb"}, {"kind", "switch"}}}},
                                {"links",
                                 {{{"a", "a0"}, {"b", "swa"}},
                                  {{"a", "a1"}, {"b", "swa"}},
                                  {{"a", "b0"}, {"b", "swb"}},
                                  {{"a", "b1"}, {"b", "swb"}},
                                  {{"a", "swa"}, {"b", "swb"}, {"delay", "50us"}}}}},
                               "test");
    Partition p = AutoPartition(t, 2, "test");
    EXPECT_EQ(p.cutLinks, 1u);
    EXPECT_EQ(p.lookaheadPs, 50000000u);
    EXPECT_NE(p.rankOf[t.FindNode("a0")], p.rankOf[t.FindNode("b0")]);
}

TEST(Partition, MoreRanksThanHostsIsRefused)
{
    Topology t = BuildTopology({{"type", "single-switch"}, {"hosts", 2}}, "test");
    try
    {
        AutoPartition(t, 3, "<command line>");
        FAIL() << "three ranks for two hosts";
    }
    catch (const InputError& e)
    {
        EXPECT_NE(std::string(e.what()).find("--partition"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("at most 2 ranks"), std::string::npos) << e.what();
    }
}

TEST(Partition, AFileNamesEveryNodeWithARankBelowTheRankCount)
{
    Topology t = BuildTopology({{"type", "single-switch"}, {"hosts", 2}}, "test");
    Partition p = fabricsim::PartitionFromJson(
        json{{"host0", 0}, {"host1", 1}, {"sw0", 1}}, t, 2, "p.json");
    EXPECT_EQ(p.rankOf[t.FindNode("host0")], 0u);
    EXPECT_EQ(p.cutLinks, 1u);
    auto fails = [&t](const json& doc, const std::string& what)
    {
        try
        {
            fabricsim::PartitionFromJson(doc, t, 2, "p.json");
            ADD_FAILURE() << doc.dump();
        }
        catch (const InputError& e)
        {
            EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
        }
    };
    fails(json{{"host0", 0}, {"host1", 1}}, "no rank for sw0");
    fails(json{{"host0", 0}, {"host1", 2}, {"sw0", 0}}, "a rank from 0 to 1");
    fails(json{{"host0", 0}, {"host1", 1}, {"sw0", 0}, {"spine", 0}}, "a node of the topology");
}

TEST(Partition, ALargeFatTreeIntoSixteenRanksStaysBalanced)
{
    // k = 48: 27,648 hosts, 2,880 switches, 82,944 links.
    Topology t = BuildTopology({{"type", "fat-tree"}, {"k", 48}}, "test");
    Partition p = AutoPartition(t, 16, "test");
    ExpectCutsOnlyAtTier(t, p, 2); // 48 pods: whole pods, 3 to a rank
    EXPECT_LE(Imbalance(p), 1.01);
    // k^3 / 4 = 27,648 aggregation-core links; each core on one rank: 15/16 of them cut.
    EXPECT_EQ(p.cutLinks, 48u * 24 * 24 * 15 / 16);
    EXPECT_EQ(p.lookaheadPs, 1000000u);
}
