// The CLI: byte-identical outputs for the same scenario and seed (target 7); bad input exits 2
// naming file and field and leaves no summary behind.
#include "cli-test-util.h"
#include "compute-calibration.h"
#include "scenario-runner.h"
#include "shared-corpus.h"
#include "test-guard.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

using fabricsim::test::SmallInference;
using fabricsim::test::WriteScenario;
using nlohmann::json;
namespace fs = std::filesystem;

namespace
{

json
SmallScenario(const std::string& cdf)
{
    return json{
        {"name", "det"},
        {"seed", 11},
        {"stop_ns", 2000000},
        {"topology", {{"type", "leaf-spine"}, {"leaves", 2}, {"spines", 2}, {"hosts_per_leaf", 4}}},
        {"transport", {{"cc", "dcqcn"}}},
        {"monitor", {{"interval_ns", 20000}}},
        {"traffic",
         {{"poisson", {{"cdf", cdf}, {"load", 0.5}, {"duration_ns", 300000}}},
          {"incast",
           {{"receiver", 0}, {"senders", 6}, {"size_bytes", 200000}, {"start_ns", 50000}}}}}};
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
        if (name == "provenance.json")
        {
            // The same but for the command line, which names another --out.
            json pa = json::parse(fabricsim::test::ReadFile(e.path()));
            json pb = json::parse(fabricsim::test::ReadFile(dir + "/b/" + name));
            EXPECT_NE(pa["command"], pb["command"]);
            pa.erase("command");
            pb.erase("command");
            EXPECT_EQ(pa, pb);
            continue;
        }
        EXPECT_EQ(fabricsim::test::ReadFile(e.path()),
                  fabricsim::test::ReadFile(dir + "/b/" + name))
            << name;
        ++compared;
    }
    EXPECT_GE(compared, 5);
    json s = json::parse(fabricsim::test::ReadFile(dir + "/a/summary.json"));
    EXPECT_GT(s["flows_total"].get<int>(), 6);
    // A different seed gives different traffic.
    ASSERT_EQ(fabricsim::test::RunCli("run " + sc + " --set seed=12 --out " + dir + "/c", out), 0)
        << out;
    EXPECT_NE(fabricsim::test::ReadFile(dir + "/a/fct.csv"),
              fabricsim::test::ReadFile(dir + "/c/fct.csv"));
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
    int rc = fabricsim::test::RunCli(
        "run " + sc + " --set '" + GetParam().set + "' --out " + dir + "/out", out);
    EXPECT_EQ(rc, 2) << out;
    EXPECT_NE(out.find("s.json"), std::string::npos) << out;
    EXPECT_NE(out.find(GetParam().mention), std::string::npos) << out;
    EXPECT_FALSE(fs::exists(dir + "/out/summary.json"));
}

INSTANTIATE_TEST_SUITE_P(
    Cases,
    CliBadInput,
    testing::Values(
        BadCase{"unknown_key", "transport.ccc=\"dcqcn\"", "ccc"},
        BadCase{"wrong_type", "stop_ns=\"soon\"", "stop_ns"},
        BadCase{"host_range", "traffic.flows.0.dst=9", "traffic.flows[0].dst"},
        BadCase{"unknown_cc", "transport.cc=\"cubic\"", "dcqcn"},
        BadCase{"bad_rate", "topology.host_link={\"rate\":\"fast\"}", "rate"},
        // Times past 106 days wrap in ns-3's int64 ps; sizes past 2^64 in uint64.
        BadCase{"start_past_time_range",
                "traffic.flows.0.start_ns=9300000000000000",
                "traffic.flows[0].start_ns"},
        BadCase{"stop_past_time_range", "stop_ns=18000000000000000000", "stop_ns"},
        BadCase{"incast_window_past_time_range",
                "traffic.incast={\"receiver\":0,\"senders\":2,\"size_bytes\":1000,"
                "\"start_ns\":5,\"load\":0.1,\"duration_ns\":9223372036854775}",
                "traffic.incast.duration_ns"},
        BadCase{"size_past_uint64", "traffic.flows.0.size_bytes=\"1e30GB\"", "size_bytes"},
        BadCase{"disconnected",
                "topology={\"type\":\"custom\",\"nodes\":[{\"name\":\"a\",\"kind\":"
                "\"host\"},{\"name\":\"b\",\"kind\":\"host\"},{\"name\":\"s\",\"kind\":"
                "\"switch\"}],\"links\":[{\"a\":\"a\",\"b\":\"s\"}]}",
                "disconnected"},
        BadCase{"name_not_a_string", "name=5", "field 'name'"},
        // Past 2^32 packets the NIC's PSN space wraps: refused, not aborted.
        BadCase{"flow_past_psn_space",
                "traffic.flows.0.size_bytes=1152921504606846976",
                "2^32 - 2 packets"},
        // A realistic 256 x 400G switch with the default 32 MiB buffer cannot hold the PFC
        // headroom of its ports: named with the size needed instead of an abort.
        BadCase{"buffer_below_pfc_headroom",
                "topology={\"type\":\"single-switch\",\"hosts\":256,\"host_link\":"
                "{\"rate\":\"400Gbps\",\"delay\":\"1us\"}}",
                "field 'switch.buffer_bytes': expected at least 39448577 bytes"},
        // An uplink rate of 0.4 b/s derived from the ratio: ns-3 aborted on it.
        BadCase{"oversubscription_past_rate_range",
                "topology={\"type\":\"leaf-spine\",\"leaves\":2,\"spines\":2,"
                "\"hosts_per_leaf\":2,\"oversubscription\":1e12}",
                "field 'topology.oversubscription': expected a ratio giving uplinks from 1bps"},
        // Files that never end or are not files: refused before a byte is read.
        BadCase{"cdf_is_a_device",
                "traffic.poisson={\"cdf\":\"/dev/zero\",\"duration_ns\":1000}",
                "traffic.poisson.cdf"},
        BadCase{
            "flow_file_is_a_device", "traffic={\"flow_file\":\"/dev/zero\"}", "character device"},
        BadCase{"topology_is_a_directory",
                "topology={\"type\":\"hpcc-file\",\"path\":\"/\"}",
                "a directory"}),
    [](const testing::TestParamInfo<BadCase>& i) { return std::string(i.param.name); });

TEST(Cli, FlowFilesAndCdfsHoldOnlyFlowsTheModelCarries)
{
    auto dir = fabricsim::test::TempDir("flow-files");
    json base = {{"seed", 1}, {"topology", {{"type", "single-switch"}, {"hosts", 4}}}};
    std::ofstream(dir + "/self.txt") << "1\n2 2 3 100 1000 0\n";
    std::ofstream(dir + "/huge.cdf") << "100 0\n1e30 100\n";
    base["traffic"] = {{"flow_file", "self.txt"}};
    std::string out;
    // A flow from a host to itself has no route: refused naming its line, no output left.
    EXPECT_EQ(fabricsim::test::RunCli(
                  "run " + WriteScenario(dir, "a.json", base) + " --out " + dir + "/out", out),
              2);
    EXPECT_NE(out.find("self.txt: field 'line 2 dst': expected a host other than src"),
              std::string::npos)
        << out;
    base["traffic"] = {{"poisson", {{"cdf", "huge.cdf"}, {"duration_ns", 1000}}}};
    EXPECT_EQ(fabricsim::test::RunCli(
                  "run " + WriteScenario(dir, "b.json", base) + " --out " + dir + "/out", out),
              2);
    EXPECT_NE(out.find("huge.cdf: field 'largest size_bytes'"), std::string::npos) << out;
    EXPECT_FALSE(fs::exists(dir + "/out"));
}

TEST(Cli, EveryCommandHasHelpAndAWrongOptionShowsItsUsage)
{
    std::string out;
    for (std::string c :
         {"run", "collective", "replay", "calibrate", "validate", "validate-serving", "attributes"})
    {
        EXPECT_EQ(fabricsim::test::RunCli(c + " --help", out), 0) << c << ": " << out;
        EXPECT_EQ(out.rfind("usage:\n  fabricsim " + c, 0), 0u) << out;
        // Help runs nothing: no default scenario is simulated, no output appears.
        EXPECT_LT(out.size(), 2000u) << out;
        EXPECT_EQ(fabricsim::test::RunCli("help " + c, out), 0) << out;
        EXPECT_NE(out.find("fabricsim " + c), std::string::npos) << out;
    }
    EXPECT_EQ(fabricsim::test::RunCli("run --bogus", out), 2);
    EXPECT_NE(out.find("field '--bogus'"), std::string::npos) << out;
    EXPECT_NE(out.find("usage:\n  fabricsim run "), std::string::npos) << out;
    EXPECT_EQ(fabricsim::test::RunCli("collective --frob 3", out), 2);
    EXPECT_NE(out.find("--frob"), std::string::npos) << out;
    EXPECT_NE(out.find("usage:\n  fabricsim collective "), std::string::npos) << out;
}

TEST(Cli, InterruptedRunsLeaveNoPartialOutput)
{
    // A paper-scale run lasts minutes; SIGINT and SIGTERM after a second stop it.
    const std::string sc
        = std::string(FABRICSIM_SOURCE_DIR) + "/scenarios/hpcc-eval/paper-fb-hadoop-30.json";
    auto dir = fabricsim::test::TempDir("interrupted");
    for (const auto& [sig, rc] : {std::pair<std::string, int>{"INT", 130}, {"TERM", 143}})
    {
        const std::string out = dir + "/out-" + sig;
        const std::string cmd = "timeout --preserve-status -s " + sig + " 1 "
                                + fabricsim::test::CapPrefix() + FABRICSIM_BIN + " run " + sc
                                + " --no-progress --out " + out + " > /dev/null 2>&1";
        const int st = std::system(cmd.c_str());
        ASSERT_TRUE(WIFEXITED(st)) << sig;
        EXPECT_EQ(WEXITSTATUS(st), rc) << sig;
        EXPECT_FALSE(fs::exists(out)) << sig << ": the run created it, so it goes";
    }
}

TEST(Cli, WorkPastTheMemoryLimitExitsTwoBeforeItStarts)
{
    auto dir = fabricsim::test::TempDir("memory");
    std::ofstream(dir + "/one-byte.cdf") << "1 0\n1 100\n";
    json base
        = {{"seed", 1},
           {"topology", {{"type", "single-switch"}, {"hosts", 4}}},
           {"traffic",
            {{"poisson", {{"cdf", "one-byte.cdf"}, {"load", 1.0}, {"duration_ns", 1000000}}}}}};
    const std::string sc = WriteScenario(dir, "flood.json", base);
    std::string out;
    // 1-byte flows at full load for 1 ms on 4 x 100G hosts: 5e7 flows, 200 GB. Refused at once.
    EXPECT_EQ(fabricsim::test::RunCli("run " + sc + " --memory-limit 1GB --out " + dir + "/o", out),
              2);
    EXPECT_NE(out.find("field 'traffic.poisson[0].load': expected traffic whose flows fit the "
                       "memory limit of 1.00 GB"),
              std::string::npos)
        << out;
    EXPECT_NE(out.find("about 50000000 flows"), std::string::npos) << out;
    EXPECT_FALSE(fs::exists(dir + "/o"));
    EXPECT_EQ(fabricsim::test::RunCli("run " + sc + " --memory-limit=lots", out), 2);
    EXPECT_NE(out.find("field '--memory-limit'"), std::string::npos) << out;
    // 10^9 requests (once a bad_alloc, then an out-of-memory part-way) are estimated up front:
    // 320 B each, 32 B per output token (12 on average), 3 kB per step of 64 sequences.
    EXPECT_EQ(fabricsim::test::RunCli("run " + std::string(FABRICSIM_SOURCE_DIR)
                                          + "/scenarios/default.json"
                                          + " --memory-limit 2GB --set serving.requests.count=1e9"
                                          + " --out " + dir + "/r",
                                      out),
              2);
    EXPECT_NE(out.find("field 'serving.requests.count': expected requests whose serving run fits "
                       "the memory limit of 2.00 GB"),
              std::string::npos)
        << out;
    EXPECT_NE(out.find("1e+09 requests generating 1.2e+10 output tokens: about 1.28 TB"),
              std::string::npos)
        << out;
    EXPECT_FALSE(fs::exists(dir + "/r"));
    // An out-of-memory the estimates do not foresee (a 16384-port switch in 200 MB) is exit 2
    // saying so: not a crash in ns-3's teardown (once signal 11 after the message), nor in
    // ns-3's Object constructor, which mallocs unchecked (signal 11 instead of bad_alloc, for
    // some output paths). Not under ASan: there the address-space cap cannot be set.
    if (fabricsim::test::UnderAsan())
    {
        return;
    }
    const std::string wide = WriteScenario(
        dir,
        "wide.json",
        {{"seed", 1},
         {"topology", {{"type", "single-switch"}, {"hosts", 16384}}},
         {"switch", {{"buffer_bytes", "8GB"}}},
         {"traffic", {{"flows", {{{"src", 0}, {"dst", 1}, {"size_bytes", 1000}}}}}}});
    EXPECT_EQ(
        fabricsim::test::RunCli("run " + wide + " --memory-limit 200MB --out " + dir + "/w", out),
        2);
    EXPECT_NE(out.find("out of memory: the run needs more than its memory limit of 200.0 MB"),
              std::string::npos)
        << out;
    EXPECT_FALSE(fs::exists(dir + "/w"));
}

TEST(Cli, EveryCommandRefusesFilesThatAreNotItsInput)
{
    // A directory, an empty file, random bytes, a file cut short and a 1 GB line (a sparse file)
    // wherever a command reads a file: exit 2 every time, never "internal error", a crash or a
    // hang, and no output. The sparse file is refused from its first bytes (a zero byte in a text
    // file, an empty Chakra message), not read whole: once 2.4 GB for replay, 3.2 GB for calibrate.
    auto dir = fabricsim::test::TempDir("not-input");
    const std::string src = FABRICSIM_SOURCE_DIR;
    const std::string sc = src + "/scenarios/fabric-incast.json";
    fs::create_directories(dir + "/a-directory");
    std::ofstream(dir + "/empty.json");
    {
        std::ofstream bin(dir + "/binary.bin", std::ios::binary);
        uint32_t x = 12345;
        for (int i = 0; i < 4096; ++i)
        {
            x = x * 1664525u + 1013904223u;
            bin.put(char(x >> 24));
        }
    }
    auto cut = [&](const std::string& from, const std::string& to)
    {
        std::ifstream in(from, std::ios::binary);
        std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        std::ofstream(dir + "/" + to, std::ios::binary) << text.substr(0, text.size() / 2);
    };
    cut(sc, "cut.json");
    cut(src + "/collectives/examples/allgather-4rank.xml", "cut.xml");
    // 1 GB of zero bytes and no line end, taking no disk (a sparse file).
    std::ofstream(dir + "/sparse").close();
    fs::resize_file(dir + "/sparse", 1ULL << 30);
    for (const std::string f :
         {"a-directory", "empty.json", "binary.bin", "cut.json", "cut.xml", "sparse"})
    {
        const std::string p = dir + "/" + f;
        for (const std::string& args : {"run " + p,
                                        "collective " + p + " --coll allreduce --algo ring",
                                        "collective " + sc + " --coll allgather --schedule " + p,
                                        "validate " + p,
                                        "replay " + p + " --scenario " + sc,
                                        "calibrate " + p + " --scenario " + sc,
                                        "validate-serving " + p,
                                        "run " + sc + " --overlay " + p})
        {
            std::string out;
            EXPECT_EQ(fabricsim::test::RunCli(args + " --out " + dir + "/out", out), 2)
                << args << "\n"
                << out;
            EXPECT_EQ(out.find("internal error"), std::string::npos) << args << "\n" << out;
            EXPECT_FALSE(fs::exists(dir + "/out")) << args;
        }
    }
}

TEST(Cli, RoutesThatLoopAreRefusedNamingTheRoute)
{
    auto dir = fabricsim::test::TempDir("routes");
    json base = {
        {"seed", 1},
        {"topology", {{"type", "leaf-spine"}, {"leaves", 2}, {"spines", 2}, {"hosts_per_leaf", 2}}},
        {"traffic", {{"flows", {{{"src", 0}, {"dst", 2}, {"size_bytes", 1000}}}}}}};
    // Host 3's packets bounce between leaf1's override and spine1's: a loop through both.
    base["routes"] = {{{"switch", "leaf0"}, {"dst", 2}, {"next", "spine1"}},
                      {{"switch", "leaf1"}, {"dst", 3}, {"next", "spine1"}},
                      {{"switch", "spine1"}, {"dst", {2, 3}}, {"next", "leaf1"}}};
    std::string out;
    EXPECT_EQ(fabricsim::test::RunCli(
                  "run " + WriteScenario(dir, "s.json", base) + " --out " + dir + "/out", out),
              2);
    EXPECT_NE(out.find("field 'routes[1]': expected routes that reach host 3 without a loop, "
                       "found a forwarding loop leaf1 -> spine1 -> leaf1"),
              std::string::npos)
        << out;
    EXPECT_FALSE(fs::exists(dir + "/out"));
    // A loop that only a failure creates is reported where it happens: leaf0 sends host 2's
    // packets to spine1; when spine1's link to leaf1 (link 7) fails, spine1's shortest path to
    // host 2 turns back through leaf0. The run goes on; summary.json says when and where.
    json failing = base;
    failing["routes"] = {{{"switch", "leaf0"}, {"dst", 2}, {"next", "spine1"}}};
    failing["link_events"] = {{{"link", 7}, {"at_ns", 10000}, {"state", "down"}}};
    failing["stop_ns"] = 2000000;
    failing["traffic"]["flows"][0]["start_ns"] = 20000;
    fabricsim::test::RunCli(
        "run " + WriteScenario(dir, "f.json", failing) + " --out " + dir + "/failing", out);
    EXPECT_NE(out.find("routing loop         at 10000 ns toward host 2: leaf0 -> spine1 -> leaf0"),
              std::string::npos)
        << out;
    json summary = json::parse(std::ifstream(dir + "/failing/summary.json"));
    ASSERT_EQ(summary["routing_loops"].size(), 1u) << summary.dump();
    EXPECT_EQ(summary["routing_loops"][0]["at_ns"], 10000);
    EXPECT_GT(summary["drops"]["by_reason"]["ttl_expired"].get<uint64_t>(), 0u);
    // Without leaf1's override the same spine route is a detour, not a loop: the run completes.
    base["routes"].erase(1);
    EXPECT_EQ(fabricsim::test::RunCli(
                  "run " + WriteScenario(dir, "t.json", base) + " --out " + dir + "/out", out),
              0)
        << out;
}

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
    EXPECT_EQ(fabricsim::test::RunCli("run /dev/zero --out " + dir + "/out", out), 2);
    EXPECT_NE(out.find("/dev/zero: expected a readable scenario file, found a character device"),
              std::string::npos)
        << out;
    EXPECT_EQ(fabricsim::test::RunCli("run " + dir + " --out " + dir + "/out", out), 2);
    EXPECT_NE(out.find("found a directory"), std::string::npos) << out;
    EXPECT_FALSE(fs::exists(dir + "/out"));
}

TEST(Cli, AttributeReferenceIsUpToDate)
{
    // docs/attributes.md is generated by `fabricsim attributes`; regenerate it when this fails.
    std::string out;
    ASSERT_EQ(fabricsim::test::RunCli("attributes", out), 0);
    std::string doc
        = fabricsim::test::ReadFile(std::string(FABRICSIM_SOURCE_DIR) + "/docs/attributes.md");
    EXPECT_EQ(out, doc) << "run: build/bin/fabricsim attributes > docs/attributes.md";
    EXPECT_NE(out.find("ns3::Dcqcn"), std::string::npos);
    EXPECT_NE(out.find("ns3::SharedBufferMmu"), std::string::npos);
}

// --ns3:: attribute overrides reach inference runs on either backend (they once applied to the
// packet backend only, so the analytical one ignored them silently).
TEST(Cli, InferenceRunHonoursExecutorAttributesOnTheAnalyticalBackend)
{
    auto dir = fabricsim::test::TempDir("inf-attr");
    std::string p = WriteScenario(
        dir,
        "inf.json",
        SmallInference(
            {{"rate_per_s", 0}, {"count", 16}, {"prompt_tokens", 32}, {"output_tokens", 4}}));
    auto meanItl = [&](const std::string& extra, const std::string& out)
    {
        std::string log;
        EXPECT_EQ(fabricsim::test::RunCli(
                      "run " + p + " --backend analytical --out " + dir + "/" + out + extra, log),
                  0)
            << log;
        return json::parse(
                   fabricsim::test::ReadFile(dir + "/" + out + "/summary.json"))["itl_ms"]["mean"]
            .get<double>();
    };
    const double base = meanItl("", "base");
    const double slow = meanItl(" --ns3::CollectiveExecutor::LaunchLatency=200us", "slow");
    // Every decode step issues collectives; each now waits 196 us longer to launch.
    EXPECT_GT(slow, base + 0.19) << "base " << base << " ms, slow " << slow << " ms";
}

// An inference run ends when its workload ends: a hidden 1 s stop_ns once cut 8 requests
// arriving over 1.75 s to 4, with exit 3 and throughput over the partial run. The cap a user sets
// holds on both backends (the analytical one once ignored it: all requests, exit 0).
TEST(Cli, InferenceRunEndsWhenItsWorkloadEndsAndACapSaysSo)
{
    auto dir = fabricsim::test::TempDir("inf-end");
    json sc = SmallInference({{"rate_per_s", 4},
                              {"arrival", "uniform"},
                              {"count", 8},
                              {"prompt_tokens", 32},
                              {"output_tokens", 4}});
    const std::string whole = WriteScenario(dir, "whole.json", sc);
    sc["stop_ns"] = 1000000000;
    const std::string capped = WriteScenario(dir, "capped.json", sc);
    for (const std::string backend : {"packet", "analytical"})
    {
        SCOPED_TRACE(backend);
        const std::string o = dir + "/" + backend;
        std::string log;
        ASSERT_EQ(fabricsim::test::RunCli(
                      "run " + whole + " --backend " + backend + " --out " + o + "-whole", log),
                  0)
            << log;
        json s = json::parse(fabricsim::test::ReadFile(o + "-whole/summary.json"));
        EXPECT_TRUE(s["complete"].get<bool>());
        EXPECT_EQ(s["requests"]["completed"].get<int>(), 8);
        EXPECT_GT(s["duration_s"].get<double>(), 1.75);

        EXPECT_EQ(fabricsim::test::RunCli(
                      "run " + capped + " --backend " + backend + " --out " + o + "-capped", log),
                  3)
            << log;
        EXPECT_NE(log.find("requests completed      4 / 8"), std::string::npos) << log;
        EXPECT_NE(log.find("INCOMPLETE"), std::string::npos) << log;
        EXPECT_NE(log.find("(stop_ns)"), std::string::npos) << log;
        json c = json::parse(fabricsim::test::ReadFile(o + "-capped/summary.json"));
        EXPECT_FALSE(c["complete"].get<bool>());
        EXPECT_EQ(c["requests"]["count"].get<int>(), 8);
        EXPECT_EQ(c["requests"]["completed"].get<int>(), 4);
        // Every figure is over the finished requests: 4 TTFTs, 4 x 4 generated tokens.
        EXPECT_EQ(c["ttft_ms"]["count"].get<int>(), 4);
        EXPECT_NEAR(
            c["generation_tokens_per_s"].get<double>() * c["duration_s"].get<double>(), 16.0, 1e-6);
    }
}

// The packet backend once stopped every run at 100 simulated seconds unless stop_ns said
// otherwise: a serving replay of minutes (the measured Qwen3-32B run takes 160 s) ended with
// nothing finished and no reason given. Only a stall (messages in flight, none delivered for
// 100 s) stops a run now.
TEST(Cli, InferenceRunOnThePacketBackendOutlastsOneHundredSeconds)
{
    auto dir = fabricsim::test::TempDir("inf-long");
    json sc = SmallInference({{"rate_per_s", 0.02},
                              {"arrival", "uniform"},
                              {"count", 3},
                              {"prompt_tokens", 32},
                              {"output_tokens", 4}});
    const std::string file = WriteScenario(dir, "long.json", sc);
    std::string log;
    ASSERT_EQ(fabricsim::test::RunCli("run " + file + " --backend packet --out " + dir + "/o", log),
              0)
        << log;
    json s = json::parse(fabricsim::test::ReadFile(dir + "/o/summary.json"));
    EXPECT_TRUE(s["complete"].get<bool>());
    EXPECT_EQ(s["requests"]["completed"].get<int>(), 3);
    EXPECT_GT(s["fabric"]["simulated_ns"].get<double>(), 100e9);
}

TEST(Cli, FitComputeWritesACalibrationThatReadsBackAndReportsItsError)
{
    // A GEMM table made by overhead 5 us + the roofline at eta 0.5 / 0.8 on H100.
    auto dir = fabricsim::test::TempDir("fit-compute");
    {
        std::ofstream csv(dir + "/gemm.csv");
        csv << "framework,version,device,op_name,kernel_source,gemm_dtype,m,n,k,latency\n";
        for (int m = 1; m <= 1024; m *= 2)
        {
            for (int n : {1024, 4096, 16384})
            {
                for (int k : {1024, 4096, 8192})
                {
                    const double flops = 2.0 * m * n * k;
                    const double bytes = 2.0 * (double(n) * k + double(m) * k + double(m) * n);
                    const double ms
                        = 0.005 + std::max(flops / (989e12 * 0.5), bytes / (3.35e12 * 0.8)) * 1e3;
                    csv << "VLLM,0.24.0,test-gpu,gemm,linear,bfloat16," << m << "," << n << "," << k
                        << "," << ms << "\n";
                }
            }
        }
    }
    std::string out;
    ASSERT_EQ(fabricsim::test::RunCli("fit-compute " + dir
                                          + "/gemm.csv --hardware H100 --rows all "
                                            "--out "
                                          + dir + "/out",
                                      out),
              0)
        << out;
    std::ifstream in(dir + "/out/calibration.json");
    const json cal = json::parse(in);
    EXPECT_EQ(cal["format"], "fabricsim-compute-calibration");
    EXPECT_EQ(cal["fitted_on"]["device"], "test-gpu");
    ASSERT_EQ(cal["curves"].size(), 1u);
    // Three rows per (n, m): too few for a line per n level, so one line of m.
    EXPECT_EQ(cal["curves"][0]["size"], "m");
    EXPECT_EQ(cal["curves"][0]["points"].size(), 11u); // m = 2^0 ... 2^10
    std::ifstream e(dir + "/out/errors.json");
    const json errors = json::parse(e);
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_LT(errors[0]["fit"]["mape_pct"].get<double>(), 1.0) << out;
    EXPECT_GT(errors[0]["roofline"]["mape_pct"].get<double>(), 10.0) << out;
    // --base: the classes the tables lack keep the base file's curves, each saying where it was
    // fitted; the fitted class is this fit's, not the base's.
    {
        json base = cal;
        base["fitted_on"]["device"] = "base-gpu";
        base["curves"][0]["points"][0]["overhead_us"] = 99.0;
        json moe = base["curves"][0];
        moe["op"] = "moe";
        moe["size"] = "num_tokens";
        base["curves"].push_back(moe);
        std::ofstream(dir + "/base.json") << base.dump();
    }
    ASSERT_EQ(fabricsim::test::RunCli("fit-compute " + dir + "/gemm.csv --hardware H100 --rows all "
                                          + "--base " + dir + "/base.json --out " + dir + "/b",
                                      out),
              0)
        << out;
    std::ifstream bin(dir + "/b/calibration.json");
    const json merged = json::parse(bin);
    ASSERT_EQ(merged["curves"].size(), 2u);
    EXPECT_EQ(merged["curves"][0]["op"], "gemm");
    EXPECT_FALSE(merged["curves"][0].contains("fitted_on"));
    EXPECT_EQ(merged["curves"][0]["points"][0]["overhead_us"],
              cal["curves"][0]["points"][0]["overhead_us"]);
    EXPECT_EQ(merged["curves"][1]["op"], "moe");
    EXPECT_EQ(merged["curves"][1]["fitted_on"]["device"], "base-gpu");
    EXPECT_EQ(merged["curves"][1]["points"][0]["overhead_us"], 99.0);
    EXPECT_EQ(fabricsim::ComputeCalibration::Read(dir + "/b/calibration.json")
                  .curves[1]
                  .fittedOn.at("device"),
              "base-gpu");
    // Bad input: no hardware, an unknown row set, an unreadable table: exit 2, nothing written.
    EXPECT_EQ(fabricsim::test::RunCli("fit-compute " + dir + "/gemm.csv --out " + dir + "/x", out),
              2);
    EXPECT_NE(out.find("--hardware"), std::string::npos) << out;
    EXPECT_EQ(
        fabricsim::test::RunCli("fit-compute " + dir + "/gemm.csv --hardware H100 --rows odd", out),
        2);
    EXPECT_EQ(fabricsim::test::RunCli("fit-compute " + dir
                                          + "/gemm.csv --hardware H100 --gemm-size k --out " + dir
                                          + "/z",
                                      out),
              2);
    EXPECT_NE(out.find("--gemm-size"), std::string::npos) << out;
    EXPECT_EQ(fabricsim::test::RunCli(
                  "fit-compute " + dir + "/none.csv --hardware H100 --out " + dir + "/y", out),
              2);
    struct stat st;
    EXPECT_NE(::stat((dir + "/y/calibration.json").c_str(), &st), 0);
}

TEST(Cli, AnInferenceStepPastTheClockIsBadInputNotAnInternalError)
{
    // 1 B/s of HBM makes one decode step take 10^19 ps: exit 2 naming the figures, no output.
    auto dir = fabricsim::test::TempDir("step-past-clock");
    std::string out;
    EXPECT_EQ(fabricsim::test::RunCli("run " + std::string(FABRICSIM_SOURCE_DIR)
                                          + "/scenarios/default.json --backend analytical "
                                            "--no-progress --set 'hardware={\"preset\": \"H100\", "
                                            "\"hbm_bw\": \"1B/s\"}' --out "
                                          + dir + "/o",
                                      out),
              2)
        << out;
    EXPECT_NE(out.find("field 'model, hardware, serving': expected figures whose step times fit"),
              std::string::npos)
        << out;
    EXPECT_FALSE(fs::exists(dir + "/o/summary.json"));
}

// A model key that would change the cost and is not modelled stops the run before any output;
// the keys the reader passes over are listed in summary.json and counted in the table.
TEST(Cli, ModelKeysAreReadRefusedOrListed)
{
    auto dir = fabricsim::test::TempDir("model-keys");
    const std::string sc = std::string(FABRICSIM_SOURCE_DIR) + "/scenarios/default.json";
    std::string out;
    ASSERT_EQ(fabricsim::test::RunCli("run " + sc
                                          + " --backend analytical --no-progress --set "
                                            "'model={\"preset\": \"Qwen3-30B-A3B\", "
                                            "\"index_topk\": 2048}' --out "
                                          + dir + "/w",
                                      out),
              2)
        << out;
    EXPECT_NE(out.find("sparse attention over indexed tokens is not modelled yet"),
              std::string::npos)
        << out;
    EXPECT_FALSE(fs::exists(dir + "/w/summary.json"));
    ASSERT_EQ(fabricsim::test::RunCli("run " + sc
                                          + " --backend analytical --no-progress --set "
                                            "'model=\"Qwen3-30B-A3B\"' --out "
                                          + dir + "/o",
                                      out),
              0)
        << out;
    const json s = json::parse(fabricsim::test::ReadFile(dir + "/o/summary.json"));
    EXPECT_EQ(s["model"]["ignored_keys"],
              json({"max_position_embeddings", "norm_topk_prob", "rms_norm_eps", "rope_theta"}));
    EXPECT_NE(out.find("Qwen3-30B-A3B (4 config keys not read: model.ignored_keys)"),
              std::string::npos)
        << out;
    EXPECT_FALSE(s["model"].contains("uncalibrated"));
    // Gemma 3's local layers have no measured attention rows: the run says so.
    ASSERT_EQ(fabricsim::test::RunCli("run " + sc
                                          + " --backend analytical --no-progress --set "
                                            "'model=\"Gemma-3-27B\"' --set "
                                            "'parallelism={\"tp\": 1, \"dp\": 32}' --out "
                                          + dir + "/g",
                                      out),
              0)
        << out;
    const json g = json::parse(fabricsim::test::ReadFile(dir + "/g/summary.json"));
    ASSERT_EQ(g["model"]["uncalibrated"].size(), 1u) << g["model"];
    EXPECT_NE(out.find("uncalibrated            sliding-window attention"), std::string::npos)
        << out;
}
