// HPCC simulator inputs: topology.txt and flow.txt run as they are; a bad line is named.
#include "input-error.h"
#include "scenario-runner.h"

#include <gtest/gtest.h>

#include <fstream>

using nlohmann::json;

namespace
{

json
Scenario(const std::string& dir)
{
    // 4 hosts (0-3) on switch 4, 100G, 1 us; 3 flows, one of them at priority 3 starting later.
    std::ofstream(dir + "/topology.txt")
        << "5 1 4\n4\n0 4 100Gbps 0.001ms 0\n1 4 100Gbps 0.001ms 0\n"
           "2 4 100Gbps 0.001ms 0\n3 4 100Gbps 0.001ms 0\n";
    std::ofstream(dir + "/flow.txt")
        << "3\n0 1 3 100 200000 0.000001\n2 1 3 100 300000 0.000002\n3 0 3 100 100000 0.00001\n";
    return json{{"seed", 1},
                {"stop_ns", 10000000},
                {"topology", {{"type", "hpcc-file"}, {"path", "topology.txt"}}},
                {"monitor", {{"interval_ns", 0}}},
                {"traffic", {{"flow_file", "flow.txt"}}}};
}

} // namespace

TEST(HpccFiles, TopologyAndFlowFilesRun)
{
    auto dir = fabricsim::test::TempDir("hpccfiles");
    json s = fabricsim::test::RunScenario(Scenario(dir), dir);
    ASSERT_EQ(s["flows_total"].get<int>(), 3);
    EXPECT_EQ(s["flows_completed"].get<int>(), 3);
    EXPECT_EQ(s["flows"][1]["start_ns"].get<int>(), 2000);
    EXPECT_EQ(s["flows"][2]["size_bytes"].get<int>(), 100000);
    EXPECT_EQ(s["topology"]["hosts"].get<int>(), 4);
}

TEST(HpccFiles, BadFlowLineIsNamed)
{
    auto dir = fabricsim::test::TempDir("hpccbad");
    json sc = Scenario(dir);
    std::ofstream(dir + "/flow.txt") << "2\n0 1 3 100 200000 0.000001\n0 1 3 abc\n";
    try
    {
        fabricsim::test::RunScenario(sc, dir);
        FAIL() << "expected an InputError";
    }
    catch (const fabricsim::InputError& e)
    {
        EXPECT_NE(std::string(e.what()).find("flow.txt"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("line 3"), std::string::npos) << e.what();
    }
}

TEST(HpccFiles, StartTimesAndSizesBeyondTheirTypesAreNamed)
{
    // A start past 106 days once wrapped in int64 ps and ran the flow at t = 0.
    const std::pair<const char*, const char*> cases[]
        = {{"1\n0 1 3 100 200000 1e10\n", "line 2 start_s"},
           {"1\n0 1 3 100 200000 9300000\n", "line 2 start_s"},
           {"2\n0 1 3 100 200000 0\n0 1 3 100 1e30 0\n", "line 3 size_bytes"}};
    for (const auto& [text, field] : cases)
    {
        auto dir = fabricsim::test::TempDir("hpccrange");
        json sc = Scenario(dir);
        std::ofstream(dir + "/flow.txt") << text;
        try
        {
            fabricsim::test::RunScenario(sc, dir);
            ADD_FAILURE() << "expected an InputError for " << text;
        }
        catch (const fabricsim::InputError& e)
        {
            EXPECT_NE(std::string(e.File()).find("flow.txt"), std::string::npos) << e.what();
            EXPECT_EQ(e.Field(), field) << e.what();
        }
    }
    // A start that fits is kept as given (the run stops at 10 ms, before it).
    auto dir = fabricsim::test::TempDir("hpccfar");
    json sc = Scenario(dir);
    std::ofstream(dir + "/flow.txt") << "1\n0 1 3 100 1000 9000000\n";
    json s = fabricsim::test::RunScenario(sc, dir);
    EXPECT_EQ(s["flows"][0]["start_ns"].get<uint64_t>(), 9000000000000000ULL);
    EXPECT_EQ(s["flows_completed"].get<int>(), 0);
}
