/*
 * Import of HPCC topology files: a small inline file, errors with line numbers, and the
 * "hpcc-file" type resolving its path against the scenario's directory.
 */
#include "../unique-temp-path.h"
#include "input-error.h"
#include "test-util.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fabricsim
{
namespace
{

const char* kSmall = "5 2 4\n"
                     "3 4\n"
                     "0 3 100Gbps 0.001ms 0\n"
                     "1 3 100Gbps 0.001ms 0\n"
                     "\n"
                     "2 4 25Gbps 500ns 0.01\n"
                     "3 4 400Gbps 0.002ms 0\n";

Topology
Parse(const std::string& text)
{
    std::istringstream in(text);
    return ParseHpccTopology(in, "topology.txt");
}

/// The InputError raised by parsing `text`; fails the test when none is.
fabricsim::InputError
ParseError(const std::string& text)
{
    try
    {
        Parse(text);
    }
    catch (const fabricsim::InputError& e)
    {
        return e;
    }
    ADD_FAILURE() << "no error for:\n" << text;
    return fabricsim::InputError("", "", "", "");
}

TEST(HpccTopology, ParsesSmallFile)
{
    const Topology t = Parse(kSmall);
    EXPECT_EQ(t.type, "hpcc-file");
    ASSERT_EQ(t.nodes.size(), 5u);
    ASSERT_EQ(t.NumHosts(), 3u);
    EXPECT_EQ(t.hosts[2], 2u);
    EXPECT_EQ(t.nodes[3].kind, NodeKind::Switch);
    EXPECT_EQ(t.nodes[3].name, "sw3");
    EXPECT_EQ(t.nodes[1].name, "host1");
    ASSERT_EQ(t.links.size(), 4u);
    EXPECT_EQ(t.links[2].a, 2u);
    EXPECT_EQ(t.links[2].b, 4u);
    EXPECT_DOUBLE_EQ(t.links[2].spec.rateBps, 25e9);
    EXPECT_EQ(t.links[2].spec.delayPs, 500000u);
    EXPECT_DOUBLE_EQ(t.links[2].spec.lossRate, 0.01);
    EXPECT_EQ(t.links[3].spec.delayPs, 2000000u);

    Routing r(t);
    EXPECT_TRUE(r.AllReachable());
    EXPECT_EQ(r.HopCount(0, 1), 2u);
    EXPECT_EQ(r.HopCount(0, 2), 3u);
}

TEST(HpccTopology, HostsNumberedInNodeIdOrder)
{
    // Switch 0 first: hosts are nodes 1..3 in ascending id, host index 0..2.
    const Topology t = Parse("4 1 3\n0\n3 0 100Gbps 1us 0\n1 0 100Gbps 1us 0\n2 0 100Gbps 1us 0\n");
    ASSERT_EQ(t.NumHosts(), 3u);
    EXPECT_EQ(t.hosts[0], 1u);
    EXPECT_EQ(t.hosts[2], 3u);
    EXPECT_EQ(t.nodes[3].hostIndex, 2u);
}

TEST(HpccTopology, ErrorsNameTheLine)
{
    EXPECT_EQ(ParseError("").Field(), "line 1");
    EXPECT_EQ(ParseError("5 2\n3 4\n").Field(), "line 1");
    EXPECT_EQ(ParseError("5 2 4\n3\n0 3 100Gbps 1us 0\n").Field(), "line 2");
    EXPECT_EQ(ParseError("5 2 4\n3 3\n0 3 100Gbps 1us 0\n").Field(), "line 2");
    // Wrong field count on line 7 (the blank line still counts).
    std::string bad = kSmall;
    bad.replace(bad.find("3 4 400Gbps 0.002ms 0"), 21, "3 4 400Gbps 0.002ms");
    const auto e = ParseError(bad);
    EXPECT_EQ(e.Field(), "line 7");
    EXPECT_NE(std::string(e.what()).find("src dst rate delay error_rate"), std::string::npos);
    EXPECT_EQ(ParseError("5 2 4\n3 4\n0 3 100Gbs 1us 0\n").Field(), "line 3");
    EXPECT_EQ(ParseError("5 2 4\n3 4\n0 3 100Gbps 1 0\n").Field(), "line 3");
    EXPECT_EQ(ParseError("5 2 4\n3 4\n0 9 100Gbps 1us 0\n").Field(), "line 3");
    EXPECT_EQ(ParseError("5 2 4\n3 4\n0 3 100Gbps 1us 2\n").Field(), "line 3");
    EXPECT_EQ(ParseError("5 2 5\n3 4\n0 3 100Gbps 1us 0\n").Expected(), "5 link lines");
    const std::string four
        = "0 3 100Gbps 1us 0\n1 3 100Gbps 1us 0\n2 4 100Gbps 1us 0\n3 4 100Gbps 1us 0\n";
    EXPECT_EQ(ParseError("5 2 4\n3 4\n" + four + "1 4 100Gbps 1us 0\n").Field(), "line 7");
    // n nodes need n - 1 links: a declared node count is backed by the file's lines before
    // anything is built (2414214 nodes over 4 links was a fuzzer's 12-second input).
    const auto few = ParseError("2414214 0 4\n\n3{\"");
    EXPECT_EQ(few.Field(), "line 1");
    EXPECT_EQ(few.Expected(), "at least nodes - 1 = 2414213 links (a connected fabric)");
    EXPECT_EQ(few.Found(), "4 links");
    EXPECT_EQ(Parse("5 2 4\n3 4\n" + four).NumHosts(), 3u);
}

TEST(HpccTopology, BuildTopologyResolvesPathAgainstScenarioDir)
{
    const std::string dir = test::UniqueTempPath("dir");
    std::filesystem::create_directories(dir);
    {
        std::ofstream out(dir + "/small-topology.txt");
        out << kSmall;
    }
    const nlohmann::json spec = {{"type", "hpcc-file"}, {"path", "small-topology.txt"}};
    const Topology t = BuildTopology(spec, dir + "/scenario.json");
    EXPECT_EQ(t.type, "hpcc-file");
    EXPECT_EQ(t.NumHosts(), 3u);
    try
    {
        BuildTopology({{"type", "hpcc-file"}, {"path", "missing.txt"}}, dir + "/scenario.json");
        FAIL() << "missing file accepted";
    }
    catch (const fabricsim::InputError& e)
    {
        EXPECT_EQ(e.Field(), "topology.path");
    }
    std::remove((dir + "/small-topology.txt").c_str());
}

} // namespace
} // namespace fabricsim
