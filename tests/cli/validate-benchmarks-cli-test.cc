// `fabricsim validate-serving` on benchmark result files: refusals by option before anything is
// written, and a constructed sweep replayed deterministically, its fit recovering the TTFT
// offset the table was built with (the fit itself: tests/serving/benchmark-comparison-test.cc).
#include "scenario-runner.h"
#include "test-guard.h"
#include "validate-benchmarks.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

using nlohmann::json;
namespace fs = std::filesystem;

namespace
{

/// An InferenceX-style result at concurrency \p conc with \p ttftS as its median TTFT.
json
Result(uint32_t conc, uint64_t prompts, double ttftS)
{
    return {{"num_prompts", prompts},
            {"request_rate", "inf"},
            {"max_concurrency", conc},
            {"duration", 2.0},
            {"completed", prompts},
            {"total_input_tokens", prompts * 256},
            {"total_output_tokens", prompts * 16},
            {"request_throughput", prompts / 2.0},
            {"input_throughput", prompts * 128.0},
            {"output_throughput", prompts * 8.0},
            {"median_ttft", ttftS},
            {"p99_ttft", ttftS * 2},
            {"median_e2el", 0.5},
            {"p99_e2el", 0.8},
            {"median_tpot", 0.02},
            {"p99_tpot", 0.03}};
}

std::string
Sweep(const std::string& dir, double ttftC2, double ttftC4)
{
    const std::string d = dir + "/results";
    fs::create_directories(d);
    std::ofstream(d + "/llama_vllm_tp1_isl256_osl16_conc2.json") << Result(2, 8, ttftC2).dump();
    std::ofstream(d + "/llama_vllm_tp1_isl256_osl16_conc4.json") << Result(4, 16, ttftC4).dump();
    return d;
}

const std::string kDeployment = " --model Llama-3-8B --hardware H100 ";

TEST(Cli, ValidateServingRefusesBenchmarkOptionsItCannotUseAndWritesNothing)
{
    auto dir = fabricsim::test::TempDir("validate-benchmarks-refuse");
    const std::string results = Sweep(dir, 0.1, 0.1);
    const std::string run = dir + "/run";
    fs::create_directories(run + "/vllm");
    std::ofstream(run + "/vllm/meta.json") << "{}";
    struct Case
    {
        std::string args;
        std::string needle;
    };
    const Case cases[] = {
        {results + " --hardware H100", "--model"},
        {results + " --model Llama-3-8B", "--hardware"},
        {results + " --model acme-7b --hardware H100", "--model"},
        {results + " --model Llama-3-8B --hardware T4", "--hardware"},
        {results + kDeployment + "--parallel ep8", "--parallel"},
        {results + kDeployment + "--gpus 2", "--gpus"},
        {results + kDeployment + "--fit-frontend conc=3", "--fit-frontend"},
        {results + kDeployment + "--fit-frontend c8", "--fit-frontend"},
        {results + kDeployment + "--fitted-on conc=3", "--fitted-on"},
        {results + kDeployment + "--fitted-on conc=2,3", "conc=3"},
        {results + kDeployment + "--fitted-on conc=2,", "--fitted-on"},
        {results + kDeployment + "--fitted-on conc=2 --fit-frontend conc=2", "both"},
        {results + kDeployment + "--vllm-version latest", "--vllm-version"},
        {results + " " + run + kDeployment, "one kind per call"},
        {run + " --model Llama-3-8B", "only with benchmark results"},
        {dir + "/empty.json" + kDeployment, "empty.json"},
    };
    std::ofstream(dir + "/empty.json") << "{}";
    for (const Case& c : cases)
    {
        std::string out;
        EXPECT_EQ(
            fabricsim::test::RunCli("validate-serving " + c.args + " --out " + dir + "/out", out),
            2)
            << c.args << "\n"
            << out;
        EXPECT_NE(out.find(c.needle), std::string::npos) << c.args << "\n" << out;
        EXPECT_FALSE(fs::exists(dir + "/out")) << c.args;
    }
}

TEST(Cli, ValidateServingReplaysABenchmarkSweepAndFitsTheFrontend)
{
    auto dir = fabricsim::test::TempDir("validate-benchmarks-run");
    const std::string results = Sweep(dir, 0.1, 0.1);
    std::string out;
    ASSERT_EQ(fabricsim::test::RunCli(
                  "validate-serving " + results + kDeployment + "--out " + dir + "/a", out),
              0)
        << out;
    auto slurp = [](const std::string& p)
    {
        return fabricsim::test::ReadFile(p);
    };
    const json a = json::parse(slurp(dir + "/a/summary.json"));
    ASSERT_EQ(a["points"].size(), 2u);
    const json& c2 = a["points"][0];
    EXPECT_EQ(c2["label"], "llama_vllm_tp1_isl256_osl16_conc2");
    EXPECT_EQ(c2["warmup"], 4); // InferenceX's 2 x C
    EXPECT_TRUE(c2["complete"].get<bool>());
    EXPECT_EQ(c2["simulation"]["requests"]["count"], 8);
    EXPECT_EQ(c2["simulation"]["requests"]["warmup"], 4);
    EXPECT_DOUBLE_EQ(c2["metrics"]["median_ttft_ms"]["measured"].get<double>(), 100.0);
    const double simTtft = c2["metrics"]["median_ttft_ms"]["fabricsim"].get<double>();
    EXPECT_DOUBLE_EQ(simTtft, c2["simulation"]["ttft_ms"]["p50"].get<double>());
    EXPECT_NEAR(c2["metrics"]["median_ttft_ms"]["error_pct"].get<double>(),
                (simTtft - 100.0) / 100.0 * 100,
                1e-9);
    // comparison.csv: a row per point and metric that both sides have.
    const std::string csv = slurp(dir + "/a/comparison.csv");
    EXPECT_EQ(csv.rfind("file,role,metric,measured,simulated,error_pct\n", 0), 0u);
    EXPECT_NE(csv.find("llama_vllm_tp1_isl256_osl16_conc4,held out,median_tpot_ms,20.0000,"),
              std::string::npos)
        << csv;
    EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 2 * 9);
    // Deterministic: same inputs, same bytes.
    ASSERT_EQ(fabricsim::test::RunCli(
                  "validate-serving " + results + kDeployment + "--out " + dir + "/b", out),
              0);
    EXPECT_EQ(slurp(dir + "/a/summary.json"), slurp(dir + "/b/summary.json"));
    EXPECT_EQ(slurp(dir + "/a/comparison.csv"), slurp(dir + "/b/comparison.csv"));
    // The scenario it wrote runs as is, to the same figures.
    ASSERT_EQ(fabricsim::test::RunCli("run " + dir
                                          + "/a/llama_vllm_tp1_isl256_osl16_conc2.scenario.json"
                                          + " --backend analytical --out " + dir + "/rerun",
                                      out),
              0)
        << out;
    const json rerun = json::parse(slurp(dir + "/rerun/summary.json"));
    EXPECT_DOUBLE_EQ(rerun["ttft_ms"]["p50"].get<double>(), simTtft);

    // A table built 300 ms above the engine alone at C = 2: the fit finds 300 ms per request
    // (one input length: no per-token cost) and the fitted replay comes within 5% there.
    const std::string fitted = Sweep(dir + "/fit", simTtft / 1e3 + 0.3, 0.5);
    ASSERT_EQ(fabricsim::test::RunCli("validate-serving " + fitted + kDeployment
                                          + "--fit-frontend conc=2 --out " + dir + "/f",
                                      out),
              0)
        << out;
    const json f = json::parse(slurp(dir + "/f/summary.json"));
    EXPECT_NEAR(f["frontend_fit"]["request_overhead_s"].get<double>(), 0.3, 1e-9);
    EXPECT_EQ(f["frontend_fit"]["prompt_token_overhead_s"].get<double>(), 0.0);
    EXPECT_TRUE(f["frontend_fit"]["constant_only"].get<bool>());
    EXPECT_EQ(f["points"][0]["role"], "fit");
    EXPECT_EQ(f["points"][1]["role"], "held out");
    EXPECT_LE(std::abs(f["points"][0]["metrics"]["median_ttft_ms"]["error_pct"].get<double>()),
              5.0);
    EXPECT_TRUE(f["medians_abs_error_pct"]["held_out"].contains("median_ttft_ms"));
    const json scenario
        = json::parse(slurp(dir + "/f/llama_vllm_tp1_isl256_osl16_conc4.scenario.json"));
    EXPECT_EQ(scenario["serving"]["execution"]["request_overhead"], "0.3s");

    // Costs fitted elsewhere (scripts/fit-benchmark-overheads) and given by --set: --fitted-on
    // names their fitting set, reported as fit and left out of the held-out medians.
    ASSERT_EQ(fabricsim::test::RunCli(
                  "validate-serving " + fitted + kDeployment
                      + "--fitted-on conc=2 --set serving.execution.request_overhead=0.3s"
                        " --set serving.execution.frontend_servers=1 --out "
                      + dir + "/g",
                  out),
              0)
        << out;
    const json g = json::parse(slurp(dir + "/g/summary.json"));
    EXPECT_EQ(g["fitted_on_concurrency"], json::array({2}));
    EXPECT_TRUE(g["frontend_fit"].is_null());
    EXPECT_EQ(g["points"][0]["role"], "fit");
    EXPECT_EQ(g["points"][1]["role"], "held out");
    EXPECT_DOUBLE_EQ(
        g["medians_abs_error_pct"]["held_out"]["median_ttft_ms"].get<double>(),
        std::abs(g["points"][1]["metrics"]["median_ttft_ms"]["error_pct"].get<double>()));
    EXPECT_NE(slurp(dir + "/g/validation.md").find("fitted on the 1 points at C = 2"),
              std::string::npos);
    // Both concurrencies declared (each once): nothing is left to hold out.
    ASSERT_EQ(fabricsim::test::RunCli("validate-serving " + fitted + kDeployment
                                          + "--fitted-on conc=4,2,4 --out " + dir + "/h",
                                      out),
              0)
        << out;
    const json h = json::parse(slurp(dir + "/h/summary.json"));
    EXPECT_EQ(h["fitted_on_concurrency"], json::array({2, 4}));
    EXPECT_EQ(h["points"][1]["role"], "fit");
}

TEST(Cli, ValidateServingCountsTheDataOddities)
{
    auto dir = fabricsim::test::TempDir("validate-benchmarks-odd");
    // C = 2's TTFT above C = 4's (a cold first run); C = 4 at 16 / 2 = 8 requests a second with a
    // median E2E of 0.3 s: Little's law puts 2.4 requests in flight, 0.6 C (skewed). C = 2 is at
    // 4 requests a second x 0.5 s = 2 = C, and TPOT and throughput do not fall with C.
    const std::string results = Sweep(dir, 0.2, 0.1);
    json c4 = Result(4, 16, 0.1);
    c4["median_e2el"] = 0.3;
    std::ofstream(results + "/llama_vllm_tp1_isl256_osl16_conc4.json") << c4.dump();
    std::string out;
    ASSERT_EQ(fabricsim::test::RunCli(
                  "validate-serving " + results + kDeployment + "--out " + dir + "/a", out),
              0)
        << out;
    const json a = json::parse(fabricsim::test::ReadFile(dir + "/a/summary.json"));
    const json& counts = a["oddities"]["counts"];
    EXPECT_EQ(counts["sweeps"], 1);
    EXPECT_EQ(counts["cold_first_point"], 1);
    EXPECT_EQ(counts["skewed_latencies"], 1);
    EXPECT_EQ(counts["tpot_falls_with_c"], 0);
    EXPECT_EQ(counts["throughput_falls_with_c"], 0);
    const std::string list = a["oddities"]["list"].dump();
    EXPECT_NE(list.find("C 4: request rate x median E2E is 2.4 requests in flight (0.60 C)"),
              std::string::npos)
        << list;
}

} // namespace

namespace
{

// docs/validation.md's row for the shipped MiniMax-M2.5 point ISL 1,024, C 4 (held out), with
// the frontend costs the C = 8 fit found there: the published figures come from this code.
TEST(Cli, ValidateServingMiniMaxPointMatchesTheDocumentedRow)
{
#if defined(__SANITIZE_ADDRESS__)
    // 30 s in a release build, past the unit timeout under ASan; the sanitizer pass runs the
    // same code on the constructed sweep above, and the release pass holds these figures.
    GTEST_SKIP() << "the release build holds the documented figures";
#endif
    const std::string file = std::string(FABRICSIM_SOURCE_DIR)
                             + "/data/serving/inferencex-minimax-m2.5/results/"
                               "minimax_m25_vllm_tep8_isl1024_osl128_conc4.json";
    auto dir = fabricsim::test::TempDir("validate-benchmarks-minimax");
    std::string out;
    ASSERT_EQ(fabricsim::test::RunCli(
                  "validate-serving " + file
                      + " --model MiniMax-M2.5 --hardware H200"
                        " --set serving.execution.request_overhead=0.115873891s"
                        " --set serving.execution.prompt_token_overhead=0.000110235408s --out "
                      + dir + "/o",
                  out),
              0)
        << out;
    const json s = json::parse(fabricsim::test::ReadFile(dir + "/o/summary.json"));
    const json& m = s["points"][0]["metrics"];
    EXPECT_NEAR(m["output_throughput"]["error_pct"].get<double>(), 53.1, 0.1);
    EXPECT_NEAR(m["median_e2el_ms"]["error_pct"].get<double>(), -34.5, 0.1);
    EXPECT_NEAR(m["median_tpot_ms"]["error_pct"].get<double>(), -24.7, 0.1);
    EXPECT_NEAR(m["median_ttft_ms"]["error_pct"].get<double>(), -41.9, 0.1);
    EXPECT_EQ(s["points"][0]["simulation"]["requests"]["warmup"], 8);
}

} // namespace

namespace
{

// docs/validation.md's row for the shipped Qwen3.5-397B-A17B point ISL 1,024, C 16 (held out),
// with the frontend costs the C = 8 fit found: the linear-attention hybrid's published figures
// come from this code.
TEST(Cli, ValidateServingQwen35PointMatchesTheDocumentedRow)
{
#if defined(__SANITIZE_ADDRESS__)
    GTEST_SKIP() << "the release build holds the documented figures";
#endif
    const std::string file = std::string(FABRICSIM_SOURCE_DIR)
                             + "/data/serving/inferencex-qwen3.5/results/"
                               "qwen35_vllm_tp8_isl1024_osl128_conc16.json";
    auto dir = fabricsim::test::TempDir("validate-benchmarks-qwen35");
    std::string out;
    ASSERT_EQ(fabricsim::test::RunCli(
                  "validate-serving " + file
                      + " --model Qwen3.5-397B-A17B --hardware H200 --parallel tp8"
                        " --set serving.execution.request_overhead=2.794030001965303s"
                        " --set serving.execution.prompt_token_overhead=0.00004756059846089909s"
                        " --out "
                      + dir + "/o",
                  out),
              0)
        << out;
    const json s = json::parse(fabricsim::test::ReadFile(dir + "/o/summary.json"));
    const json& m = s["points"][0]["metrics"];
    EXPECT_NEAR(m["output_throughput"]["error_pct"].get<double>(), 3.7, 0.1);
    EXPECT_NEAR(m["median_e2el_ms"]["error_pct"].get<double>(), -6.8, 0.1);
    EXPECT_NEAR(m["median_tpot_ms"]["error_pct"].get<double>(), 10.8, 0.1);
    EXPECT_NEAR(m["median_ttft_ms"]["error_pct"].get<double>(), 8.9, 0.1);
    EXPECT_EQ(s["points"][0]["simulation"]["requests"]["warmup"], 32);
}

} // namespace
