// The CLI's workflows past a single run: record then replay, TP placement checked against the
// topology, attribute typos, progress lines, the timeline's memory, provenance and the tables
// an inference run writes.
#include "cli-test-util.h"
#include "scenario-runner.h"
#include "sha256.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <regex>
#include <sstream>

using fabricsim::test::SmallInference;
using fabricsim::test::WriteScenario;
using nlohmann::json;
namespace fs = std::filesystem;

// The docs' record-then-replay workflow on the scenario just run: `collective` and `replay` read
// an inference scenario's fabric (they once refused its `hardware` key), `replay` knows the
// recorded programs.jsonl without --format (its first record opens with "deps" and was read as
// Kineto), and the ranks replay on the hosts that ran them (hosts 4-7 here; 0-3 idle, not SPMD
// copies that waited on each other for ever).
TEST(Cli, RecordedProgramsReplayOnTheScenarioJustRun)
{
    auto dir = fabricsim::test::TempDir("record-replay");
    json sc = SmallInference(
        {{"rate_per_s", 100}, {"count", 2}, {"prompt_tokens", 16}, {"output_tokens", 2}});
    sc["parallelism"] = {{"tp", 1}, {"dp", 4}, {"ep", 4}, {"dp_attention", true}};
    sc["serving"]["placement"] = {{"first_host", 4}};
    const std::string file = WriteScenario(dir, "small.json", sc);
    std::string log;
    ASSERT_EQ(fabricsim::test::RunCli(
                  "run " + file + " --backend analytical --record --out " + dir + "/rec", log),
              0)
        << log;
    ASSERT_EQ(fabricsim::test::RunCli("replay " + dir + "/rec/programs.jsonl --scenario " + file
                                          + " --backend analytical --out " + dir + "/rep",
                                      log),
              0)
        << log;
    const json r = json::parse(fabricsim::test::ReadFile(dir + "/rep/replay.json"));
    EXPECT_TRUE(r["complete"].get<bool>()) << r["stuck"].dump();
    EXPECT_EQ(r["trace"]["format"], "fabricsim-program");
    ASSERT_EQ(r["trace"]["ranks"].size(), 8u);
    for (int h = 0; h < 8; ++h)
    {
        EXPECT_EQ(r["trace"]["ranks"][h]["ops"].get<int>() > 0, h >= 4) << h;
    }
    EXPECT_EQ(r["trace"]["notes"].dump().find("SPMD"), std::string::npos) << r["trace"]["notes"];
    EXPECT_GT(r["replayed_us"].get<double>(), 0);
    ASSERT_EQ(fabricsim::test::RunCli("collective " + file
                                          + " --coll alltoall --algo direct -b 1M -e 1M "
                                            "--backend analytical",
                                      log),
              0)
        << log;
    EXPECT_NE(log.find("     1048576"), std::string::npos) << log;
}

// A TP group inside one server with no scale-up link, on hardware that has one, once ran its
// all-reduces over the NICs without a word (the docs' example: TTFT 7.8 s instead of 67 ms).
TEST(Cli, TensorParallelInsideAServerNeedsItsScaleUpOrSaysNone)
{
    auto dir = fabricsim::test::TempDir("tp-scale-up");
    json sc = SmallInference(
        {{"rate_per_s", 100}, {"count", 1}, {"prompt_tokens", 16}, {"output_tokens", 2}});
    sc["parallelism"] = {{"tp", 4}, {"dp", 2}};
    std::string log;
    ASSERT_EQ(fabricsim::test::RunCli("run " + WriteScenario(dir, "with.json", sc)
                                          + " --backend analytical --out " + dir + "/with",
                                      log),
              0)
        << log;
    sc["topology"].erase("scale_up");
    const std::string without = WriteScenario(dir, "without.json", sc);
    EXPECT_EQ(fabricsim::test::RunCli(
                  "run " + without + " --backend analytical --out " + dir + "/without", log),
              2);
    EXPECT_NE(log.find("field 'topology.scale_up': expected a scale-up link block for the servers "
                       "(TP 4 puts hosts 0 and 1 of one server in a group and H100 has a scale-up "
                       "link), or \"none\""),
              std::string::npos)
        << log;
    EXPECT_FALSE(fs::exists(dir + "/without"));
    // Said outright, it runs over the NICs: slower than over the scale-up links.
    sc["topology"]["scale_up"] = "none";
    ASSERT_EQ(fabricsim::test::RunCli("run " + WriteScenario(dir, "none.json", sc)
                                          + " --backend analytical --out " + dir + "/none",
                                      log),
              0)
        << log;
    const json a = json::parse(fabricsim::test::ReadFile(dir + "/with/summary.json"));
    const json b = json::parse(fabricsim::test::ReadFile(dir + "/none/summary.json"));
    EXPECT_GT(b["tpot_ms"]["mean"].get<double>(), a["tpot_ms"]["mean"].get<double>());
    // TP across servers (one rank per server) needs no scale-up link.
    sc["topology"].erase("scale_up");
    sc["parallelism"] = {{"tp", 2}, {"dp", 4}};
    sc["serving"]["placement"] = {{"tp", "across_servers"}};
    EXPECT_EQ(fabricsim::test::RunCli("run " + WriteScenario(dir, "across.json", sc)
                                          + " --backend analytical --out " + dir + "/across",
                                      log),
              0)
        << log;
    // Anything else than a link object or "none" is refused by name.
    sc["topology"]["scale_up"] = "nvlink";
    EXPECT_EQ(fabricsim::test::RunCli("run " + WriteScenario(dir, "bad.json", sc)
                                          + " --backend analytical --out " + dir + "/bad",
                                      log),
              2);
    EXPECT_NE(log.find("field 'topology.scale_up': expected a link object or \"none\", found "
                       "\"nvlink\""),
              std::string::npos)
        << log;
}

// A misspelt --ns3:: attribute or attributes key gets the nearest name, as scenario keys do.
TEST(Cli, Ns3AttributeTyposGetADidYouMean)
{
    auto dir = fabricsim::test::TempDir("attr-typo");
    const std::string incast = std::string(FABRICSIM_SOURCE_DIR) + "/scenarios/fabric-incast.json";
    std::string log;
    EXPECT_EQ(fabricsim::test::RunCli(
                  "run " + incast + " --ns3::Dcqcn::RateAi=40Mbps --out " + dir + "/a", log),
              2);
    EXPECT_NE(log.find("(did you mean \"--ns3::Dcqcn::RateAI\"?)"), std::string::npos) << log;
    EXPECT_EQ(fabricsim::test::RunCli("run " + incast
                                          + " --set 'attributes={\"ns3::Dcqcn::RateAi\": "
                                            "\"40Mbps\"}' --out "
                                          + dir + "/b",
                                      log),
              2);
    EXPECT_NE(log.find("(did you mean \"ns3::Dcqcn::RateAI\"?)"), std::string::npos) << log;
    // A right name with a wrong value gets no suggestion.
    EXPECT_EQ(fabricsim::test::RunCli(
                  "run " + incast + " --ns3::Dcqcn::RateAI=fast --out " + dir + "/c", log),
              2);
    EXPECT_EQ(log.find("did you mean"), std::string::npos) << log;
    // Each shipped scenario is named for itself (fabric-incast.json once began "default:").
    const json doc = json::parse(fabricsim::test::ReadFile(incast));
    EXPECT_EQ(doc["name"].get<std::string>().rfind("fabric-incast:", 0), 0u) << doc["name"];
}

// --progress once printed nothing on inference runs (either backend).
TEST(Cli, InferenceProgressShowsTimeStepsRequestsAndEventRate)
{
    auto dir = fabricsim::test::TempDir("inf-progress");
    json sc = SmallInference(
        {{"rate_per_s", 100}, {"count", 2}, {"prompt_tokens", 16}, {"output_tokens", 3}});
    const std::string file = WriteScenario(dir, "p.json", sc);
    for (const std::string backend : {"packet", "analytical"})
    {
        std::string log;
        ASSERT_EQ(fabricsim::test::RunCli("run " + file + " --progress --backend " + backend
                                              + " --out " + dir + "/" + backend,
                                          log),
                  0)
            << log;
        const std::regex line(R"(\[fabricsim\] t=[0-9.]+ ms  [1-9][0-9]* steps  [0-2]/2 requests  )"
                              R"([0-9.]+ M events/s  ETA [0-9]+ s)");
        EXPECT_TRUE(std::regex_search(log, line)) << backend << ":\n" << log;
        // Without it (stderr is no terminal here) nothing of the kind.
        ASSERT_EQ(fabricsim::test::RunCli("run " + file + " --backend " + backend + " --out " + dir
                                              + "/quiet-" + backend,
                                          log),
                  0);
        EXPECT_EQ(log.find("[fabricsim] t="), std::string::npos) << log;
    }
}

// A timeline holds its slices until written: counted before the run (the docs' example with
// every step recorded once ran out of memory part-way, after a minute, with nothing written),
// and record.max_steps bounds it.
TEST(Cli, TheTimelineIsCountedAgainstTheMemoryLimitBeforeTheRun)
{
    auto dir = fabricsim::test::TempDir("timeline-memory");
    json sc = SmallInference(
        {{"rate_per_s", 100}, {"count", 4}, {"prompt_tokens", 16}, {"output_tokens", 3000}});
    const std::string file = WriteScenario(dir, "t.json", sc);
    std::string log;
    // 3,000 steps x 8 ranks x 48 layers x 16 kB: about 19 GB.
    EXPECT_EQ(fabricsim::test::RunCli(
                  "run " + file + " --trace --memory-limit 4GB --out " + dir + "/all", log),
              2);
    EXPECT_NE(log.find("field 'serving.requests.count'"), std::string::npos) << log;
    EXPECT_NE(log.find("(the timeline 18.9 GB; record.max_steps bounds it)"), std::string::npos)
        << log;
    EXPECT_FALSE(fs::exists(dir + "/all"));
    sc["serving"]["record"] = {{"timeline", true}, {"max_steps", 2}};
    sc["serving"]["requests"]["output_tokens"] = 3;
    EXPECT_EQ(fabricsim::test::RunCli("run " + WriteScenario(dir, "few.json", sc)
                                          + " --backend analytical --memory-limit 4GB --out " + dir
                                          + "/few",
                                      log),
              0)
        << log;
    EXPECT_TRUE(fs::exists(dir + "/few/timeline.json"));
}

// Every output folder says what produced it: the command line, the effective scenario, the
// attribute overrides, each input file read with its SHA-256 (paths never absolute) and the
// version, which summary.json does not carry.
TEST(Cli, OutputsCarryTheirProvenance)
{
    auto dir = fabricsim::test::TempDir("provenance");
    const std::string src = FABRICSIM_SOURCE_DIR;
    std::string log;
    ASSERT_EQ(fabricsim::test::RunCli("run --set serving.requests.count=2 --backend analytical "
                                      "--ns3::CollectiveExecutor::StepLatency=1us --out "
                                          + dir + "/inf",
                                      log),
              0)
        << log;
    const json p = json::parse(fabricsim::test::ReadFile(dir + "/inf/provenance.json"));
    EXPECT_EQ(p["command"][0], "run");
    EXPECT_EQ(p["command"][2], "serving.requests.count=2");
    EXPECT_EQ(p["scenario"]["serving"]["requests"]["count"], 2); // after --set
    EXPECT_EQ(p["attribute_overrides"][0], "--ns3::CollectiveExecutor::StepLatency=1us");
    ASSERT_EQ(p["inputs"].size(), 2u) << p.dump(2);
    EXPECT_EQ(p["inputs"][0]["path"], "<fabricsim>/scenarios/default.json");
    EXPECT_EQ(p["inputs"][0]["sha256"], fabricsim::Sha256OfFile(src + "/scenarios/default.json"));
    EXPECT_EQ(p["inputs"][1]["path"], "<fabricsim>/scenarios/compute/h100-sxm-vllm-0.24.0.json");
    const std::string version = p["fabricsim_version"];
    EXPECT_FALSE(version.empty());
    EXPECT_EQ(fabricsim::test::ReadFile(dir + "/inf/summary.json").find("fabricsim_version"),
              std::string::npos);
    // A fabric run lists its flow CDF too; a collective sweep with --out has one as well.
    const std::string incast = src + "/scenarios/fabric-incast.json";
    ASSERT_EQ(fabricsim::test::RunCli(
                  "run " + incast + " --set stop_ns=200000 --out " + dir + "/fab", log),
              0)
        << log;
    const json f = json::parse(fabricsim::test::ReadFile(dir + "/fab/provenance.json"));
    EXPECT_EQ(f["scenario"]["stop_ns"], 200000);
    bool cdf = false;
    for (const json& in : f["inputs"])
    {
        EXPECT_NE(in["path"].get<std::string>().front(), '/') << in;
        EXPECT_EQ(in["sha256"].get<std::string>().size(), 64u) << in;
        cdf = cdf || in["path"].get<std::string>().find(".cdf") != std::string::npos;
    }
    EXPECT_TRUE(cdf) << f["inputs"];
    ASSERT_EQ(fabricsim::test::RunCli("collective " + incast
                                          + " --coll allreduce --algo ring -b 1K -e 1K "
                                            "--backend analytical --out "
                                          + dir + "/coll",
                                      log),
              0)
        << log;
    const json c = json::parse(fabricsim::test::ReadFile(dir + "/coll/provenance.json"));
    EXPECT_EQ(c["command"][0], "collective");
    EXPECT_EQ(c["inputs"][0]["path"], "<fabricsim>/scenarios/fabric-incast.json");
}

// An inference run leaves tables to look at: a row per request and per step, whose figures are
// the summary's (TTFT mean, the step count and the compute sum).
TEST(Cli, InferenceRunsWriteRequestAndStepTables)
{
    auto dir = fabricsim::test::TempDir("inf-tables");
    json sc = SmallInference(
        {{"rate_per_s", 200}, {"count", 5}, {"prompt_tokens", 24}, {"output_tokens", 4}});
    std::string log;
    ASSERT_EQ(fabricsim::test::RunCli("run " + WriteScenario(dir, "t.json", sc)
                                          + " --backend analytical --out " + dir + "/o",
                                      log),
              0)
        << log;
    const json s = json::parse(fabricsim::test::ReadFile(dir + "/o/summary.json"));
    auto rows = [](const std::string& text)
    {
        std::vector<std::vector<std::string>> out;
        std::istringstream in(text);
        std::string line;
        while (std::getline(in, line))
        {
            std::vector<std::string> cells;
            std::istringstream l(line);
            std::string cell;
            while (std::getline(l, cell, ','))
            {
                cells.push_back(cell);
            }
            out.push_back(cells);
        }
        return out;
    };
    const auto req = rows(fabricsim::test::ReadFile(dir + "/o/requests.csv"));
    ASSERT_EQ(req.size(), 6u);
    ASSERT_EQ(req[0][9], "ttft_ms");
    double ttft = 0;
    for (size_t i = 1; i < req.size(); ++i)
    {
        EXPECT_EQ(req[i][8], "4"); // every token done
        ttft += std::stod(req[i][9]);
    }
    EXPECT_NEAR(ttft / 5, s["ttft_ms"]["mean"].get<double>(), 1e-5);
    const auto steps = rows(fabricsim::test::ReadFile(dir + "/o/steps.csv"));
    ASSERT_EQ(steps[0][9], "compute_ms");
    EXPECT_EQ(int(steps.size()) - 1, s["breakdown"]["steps"].get<int>());
    double compute = 0;
    for (size_t i = 1; i < steps.size(); ++i)
    {
        compute += std::stod(steps[i][9]);
    }
    EXPECT_NEAR(compute, s["breakdown"]["compute_ms"].get<double>(), 1e-4);
}

// vLLM's TP + EP at data_parallel_size 1 (ep_backend tp-allreduce) on both backends: no
// dispatch, combine or all-gather, only the TP all-reduces, which now sum the MoE output too;
// the packet fabric and the flow model agree inside the servers.
TEST(Cli, TpAllReduceExpertParallelRunsOnBothBackends)
{
    const std::string dir = fabricsim::test::TempDir("tp-ep");
    json sc = SmallInference({{"rate_per_s", 0},
                              {"count", 8},
                              {"prompt_tokens", 64},
                              {"output_tokens", 4},
                              {"concurrency", 4}});
    sc["parallelism"] = {{"tp", 4}, {"dp", 2}, {"ep", 4}, {"ep_backend", "tp-allreduce"}};
    const std::string path = WriteScenario(dir, "tp-ep.json", sc);
    std::map<std::string, json> runs;
    for (const std::string backend : {"packet", "analytical"})
    {
        std::string log;
        ASSERT_EQ(fabricsim::test::RunCli("run " + path + " --backend " + backend + " --out " + dir
                                              + "/" + backend,
                                          log),
                  0)
            << log;
        runs[backend]
            = json::parse(fabricsim::test::ReadFile(dir + "/" + backend + "/summary.json"));
        const json& comm = runs[backend]["breakdown"]["exposed_comm_ms"];
        EXPECT_TRUE(runs[backend]["complete"].get<bool>()) << backend;
        EXPECT_GT(comm.value("tp_allreduce", 0.0), 0) << backend;
        for (const char* none : {"ep_dispatch", "ep_combine", "tp_allgather"})
        {
            EXPECT_FALSE(comm.contains(none)) << backend << " " << none;
        }
    }
    for (const char* m : {"ttft_ms", "tpot_ms"})
    {
        const double p = runs["packet"][m]["mean"].get<double>();
        EXPECT_NEAR(runs["analytical"][m]["mean"].get<double>(), p, 0.01 * p) << m;
    }
}
