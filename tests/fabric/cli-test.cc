// The CLI: byte-identical outputs for the same scenario and seed (target 7); bad input exits 2
// naming file and field and leaves no summary behind.
#include "scenario-runner.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

using nlohmann::json;
namespace fs = std::filesystem;

namespace
{

std::string
WriteScenario(const std::string& dir, const std::string& name, const json& j)
{
    std::string p = dir + "/" + name;
    std::ofstream(p) << j.dump(2);
    return p;
}

json
SmallScenario(const std::string& cdf)
{
    return json{{"name", "det"},
                {"seed", 11},
                {"stop_ns", 2000000},
                {"topology", {{"type", "leaf-spine"}, {"leaves", 2}, {"spines", 2}, {"hosts_per_leaf", 4}}},
                {"transport", {{"cc", "dcqcn"}}},
                {"monitor", {{"interval_ns", 20000}}},
                {"traffic",
                 {{"poisson", {{"cdf", cdf}, {"load", 0.5}, {"duration_ns", 300000}}},
                  {"incast", {{"receiver", 0}, {"senders", 6}, {"size_bytes", 200000}, {"start_ns", 50000}}}}}};
}

} // namespace

TEST(Cli, SameSeedByteIdenticalOutputs)
{
    auto dir = fabricsim::test::TempDir("det");
    std::string cdf = std::string(FABRICSIM_SOURCE_DIR) + "/scenarios/cdf/websearch.cdf";
    std::string sc = WriteScenario(dir, "s.json", SmallScenario(cdf));
    std::string out;
    ASSERT_EQ(fabricsim::test::RunCli("run " + sc + " --out " + dir + "/a", out), 0) << out;
    ASSERT_EQ(fabricsim::test::RunCli("run " + sc + " --out " + dir + "/b", out), 0) << out;
    int compared = 0;
    for (auto& e : fs::directory_iterator(dir + "/a"))
    {
        std::string name = e.path().filename();
        if (name == "timing.json")
        {
            continue; // wall-clock seconds
        }
        EXPECT_EQ(fabricsim::test::ReadFile(e.path()), fabricsim::test::ReadFile(dir + "/b/" + name)) << name;
        ++compared;
    }
    EXPECT_GE(compared, 5);
    json s = json::parse(fabricsim::test::ReadFile(dir + "/a/summary.json"));
    EXPECT_GT(s["flows_total"].get<int>(), 6);
    // A different seed gives different traffic.
    ASSERT_EQ(fabricsim::test::RunCli("run " + sc + " --set seed=12 --out " + dir + "/c", out), 0) << out;
    EXPECT_NE(fabricsim::test::ReadFile(dir + "/a/fct.csv"), fabricsim::test::ReadFile(dir + "/c/fct.csv"));
}

struct BadCase
{
    const char* name;
    const char* set;     ///< --set override applied to a valid scenario
    const char* mention; ///< text the error must contain
};

class CliBadInput : public testing::TestWithParam<BadCase>
{
};

TEST_P(CliBadInput, ExitsTwoNamingFieldAndWritesNothing)
{
    auto dir = fabricsim::test::TempDir(std::string("bad-") + GetParam().name);
    json base = {{"seed", 1},
                 {"topology", {{"type", "single-switch"}, {"hosts", 4}}},
                 {"traffic", {{"flows", {{{"src", 0}, {"dst", 1}, {"size_bytes", 1000}}}}}}};
    std::string sc = WriteScenario(dir, "s.json", base);
    std::string out;
    int rc = fabricsim::test::RunCli("run " + sc + " --set '" + GetParam().set + "' --out " + dir + "/out", out);
    EXPECT_EQ(rc, 2) << out;
    EXPECT_NE(out.find("s.json"), std::string::npos) << out;
    EXPECT_NE(out.find(GetParam().mention), std::string::npos) << out;
    EXPECT_FALSE(fs::exists(dir + "/out/summary.json"));
}

INSTANTIATE_TEST_SUITE_P(
    Cases,
    CliBadInput,
    testing::Values(BadCase{"unknown_key", "transport.ccc=\"dcqcn\"", "ccc"},
                    BadCase{"wrong_type", "stop_ns=\"soon\"", "stop_ns"},
                    BadCase{"host_range", "traffic.flows.0.dst=9", "traffic.flows[0].dst"},
                    BadCase{"unknown_cc", "transport.cc=\"cubic\"", "dcqcn"},
                    BadCase{"bad_rate", "topology.host_link={\"rate\":\"fast\"}", "rate"},
                    BadCase{"disconnected",
                            "topology={\"type\":\"custom\",\"nodes\":[{\"name\":\"a\",\"kind\":\"host\"},{\"name\":\"b\",\"kind\":\"host\"},{\"name\":\"s\",\"kind\":\"switch\"}],\"links\":[{\"a\":\"a\",\"b\":\"s\"}]}",
                            "disconnected"}),
    [](const testing::TestParamInfo<BadCase>& i) { return std::string(i.param.name); });

TEST(Cli, MissingFileAndBadJsonExitTwo)
{
    std::string out;
    EXPECT_EQ(fabricsim::test::RunCli("run /nonexistent/x.json --out /tmp/never", out), 2);
    EXPECT_NE(out.find("/nonexistent/x.json"), std::string::npos) << out;
    auto dir = fabricsim::test::TempDir("badjson");
    std::ofstream(dir + "/b.json") << "{ \"seed\": 1, ";
    EXPECT_EQ(fabricsim::test::RunCli("run " + dir + "/b.json --out " + dir + "/out", out), 2);
    EXPECT_NE(out.find("valid JSON"), std::string::npos) << out;
    EXPECT_EQ(fabricsim::test::RunCli("run " + dir + "/b.json --ns3::NoSuch::Attr=1", out), 2);
}
