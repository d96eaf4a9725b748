// Serving benchmark result files (vLLM bench serve --save-result, InferenceX) read into one
// form, and the scenario that replays one: lengths, the client's loop, the measured figures in
// milliseconds, the parallel layout and vLLM's engine defaults; what is inconsistent is refused
// by file and key.
#include "benchmark-replay.h"
#include "benchmark-result.h"
#include "error-of.h"

#include <gtest/gtest.h>

#include <fstream>

namespace fabricsim
{
namespace
{

using nlohmann::json;
using test::ErrorOf;

std::string
Write(const std::string& name, const json& doc)
{
    const std::string path = ::testing::TempDir() + "/" + name;
    std::ofstream(path) << doc.dump();
    return path;
}

/// An InferenceX result: seconds, medians and p99 only.
json
InferenceX(uint64_t completed, uint64_t isl, uint64_t osl, uint32_t conc)
{
    return {{"model_id", "MiniMaxAI/MiniMax-M2.5"},
            {"num_prompts", completed},
            {"request_rate", "inf"},
            {"burstiness", 1.0},
            {"max_concurrency", conc},
            {"duration", 20.0},
            {"completed", completed},
            {"total_input_tokens", completed * isl},
            {"total_output_tokens", completed * osl},
            {"request_throughput", 2.0},
            {"input_throughput", 2048.0},
            {"output_throughput", 256.0},
            {"median_ttft", 0.45},
            {"p99_ttft", 1.1},
            {"median_e2el", 3.5},
            {"p99_e2el", 5.0},
            {"median_tpot", 0.0285},
            {"p99_tpot", 0.039}};
}

TEST(BenchmarkResult, InferenceXFileGivesLengthsFromItsNameAndMilliseconds)
{
    const std::string f
        = Write("minimax_m25_vllm_tep8_isl1024_osl128_conc16.json", InferenceX(160, 1024, 128, 16));
    const BenchmarkResult r = ReadBenchmarkResult(f);
    EXPECT_EQ(r.format, "inferencex");
    EXPECT_EQ(r.label, "minimax_m25_vllm_tep8_isl1024_osl128_conc16");
    EXPECT_EQ(r.inputTokens, 1024u);
    EXPECT_EQ(r.outputTokens, 128u);
    EXPECT_EQ(r.concurrency, 16u);
    EXPECT_EQ(r.numPrompts, 160u);
    EXPECT_EQ(r.parallelTag, "tep8");
    EXPECT_DOUBLE_EQ(r.requestRate, 0.0);
    EXPECT_DOUBLE_EQ(r.measured.at("median_ttft_ms"), 450.0);
    EXPECT_DOUBLE_EQ(r.measured.at("p99_tpot_ms"), 39.0);
    EXPECT_DOUBLE_EQ(r.measured.at("median_e2el_ms"), 3500.0);
    EXPECT_DOUBLE_EQ(r.measured.at("output_throughput"), 256.0);
    EXPECT_EQ(r.measured.count("mean_ttft_ms"), 0u); // InferenceX keeps no means
}

TEST(BenchmarkResult, InferenceXFileMustAgreeWithItsName)
{
    // The name's concurrency and lengths are the only record of them: totals or a concurrency
    // that disagree with the name are refused by key, a name without them by "file name".
    const InputError conc = ErrorOf(
        []
        {
            ReadBenchmarkResult(
                Write("m_vllm_tp8_isl1024_osl128_conc8.json", InferenceX(160, 1024, 128, 16)));
        });
    EXPECT_EQ(conc.Field(), "max_concurrency");
    EXPECT_EQ(conc.Found(), "16");
    json bad = InferenceX(160, 1024, 128, 16);
    bad["total_input_tokens"] = 160 * 1000;
    const InputError total = ErrorOf(
        [&] { ReadBenchmarkResult(Write("m_vllm_tp8_isl1024_osl128_conc16.json", bad)); });
    EXPECT_EQ(total.Field(), "total_input_tokens");
    const InputError name
        = ErrorOf([] { ReadBenchmarkResult(Write("run16.json", InferenceX(160, 1024, 128, 16))); });
    EXPECT_EQ(name.Field(), "file name");
    // A length past what a name can state is refused as a name, not overflowed.
    const InputError huge = ErrorOf(
        []
        {
            ReadBenchmarkResult(Write("m_vllm_tp8_isl99999999999999999999999_osl128_conc16.json",
                                      InferenceX(160, 1024, 128, 16)));
        });
    EXPECT_EQ(huge.Field(), "file name");
    json lost = InferenceX(160, 1024, 128, 16);
    lost["completed"] = 150;
    const InputError incomplete = ErrorOf(
        [&] { ReadBenchmarkResult(Write("m_vllm_tp8_isl1024_osl128_conc16.json", lost)); });
    EXPECT_EQ(incomplete.Field(), "completed");
}

TEST(BenchmarkResult, VllmSaveResultGivesMeansAndLengthsFromTotalsOrLists)
{
    json v = {{"backend", "vllm"},
              {"model_id", "meta-llama/Llama-3.1-8B"},
              {"num_prompts", 4},
              {"request_rate", 2.5},
              {"burstiness", 1.0},
              {"max_concurrency", nullptr},
              {"duration", 3.0},
              {"completed", 4},
              {"total_input_tokens", 2000},
              {"total_output_tokens", 400},
              {"request_throughput", 1.3},
              {"output_throughput", 133.3},
              {"total_token_throughput", 800.0},
              {"mean_ttft_ms", 40.0},
              {"median_ttft_ms", 38.0},
              {"std_ttft_ms", 3.0},
              {"p99_ttft_ms", 50.0},
              {"mean_tpot_ms", 12.0},
              {"median_tpot_ms", 11.5},
              {"p99_tpot_ms", 14.0},
              {"mean_itl_ms", 12.0},
              {"median_itl_ms", 11.0},
              {"p99_itl_ms", 20.0},
              {"mean_e2el_ms", 1300.0},
              {"median_e2el_ms", 1250.0},
              {"p99_e2el_ms", 1500.0}};
    const BenchmarkResult r = ReadBenchmarkResult(Write("llama-qps2.5.json", v));
    EXPECT_EQ(r.format, "vllm");
    EXPECT_EQ(r.inputTokens, 500u);
    EXPECT_EQ(r.outputTokens, 100u);
    EXPECT_EQ(r.concurrency, 0u);
    EXPECT_DOUBLE_EQ(r.requestRate, 2.5);
    EXPECT_DOUBLE_EQ(r.measured.at("mean_ttft_ms"), 40.0);
    EXPECT_DOUBLE_EQ(r.measured.at("median_itl_ms"), 11.0);
    EXPECT_EQ(r.measured.count("std_ttft_ms"), 0u); // no simulated counterpart is kept
    EXPECT_TRUE(r.parallelTag.empty());

    // Per-request lists, where saved, must add up to the totals.
    v["input_lens"] = {500, 500, 500, 500};
    v["output_lens"] = {100, 100, 100, 99};
    const InputError sum = ErrorOf([&] { ReadBenchmarkResult(Write("lists.json", v)); });
    EXPECT_EQ(sum.Field(), "total_output_tokens");
    v["output_lens"] = {100, 100, 100, 100};
    const BenchmarkResult listed = ReadBenchmarkResult(Write("lists.json", v));
    EXPECT_EQ(listed.outputTokens, 100u);
    EXPECT_TRUE(listed.outputLens.empty()); // all equal: one length

    // More than 10^12 tokens a request is refused by the total that says it.
    v.erase("input_lens");
    v.erase("output_lens");
    v["total_input_tokens"] = 4000000000000000000ULL;
    const InputError huge = ErrorOf([&] { ReadBenchmarkResult(Write("huge.json", v)); });
    EXPECT_EQ(huge.Field(), "total_input_tokens");

    const InputError neither = ErrorOf(
        [] {
            ReadBenchmarkResult(Write("x.json", json{{"completed", 1}}));
        });
    EXPECT_EQ(neither.Field(), "median_ttft_ms");
}

TEST(BenchmarkResult, ParallelTagsAndEngineDefaults)
{
    const auto tep = ParseParallelTag("tep8");
    ASSERT_TRUE(tep);
    EXPECT_EQ(tep->tp, 8u);
    EXPECT_EQ(tep->dp, 1u);
    EXPECT_TRUE(tep->expertParallel);
    const auto dep = ParseParallelTag("DEP4");
    ASSERT_TRUE(dep);
    EXPECT_EQ(dep->dp, 4u);
    EXPECT_EQ(dep->tp, 1u);
    EXPECT_TRUE(dep->expertParallel);
    EXPECT_FALSE(ParseParallelTag("tp8")->expertParallel);
    EXPECT_FALSE(ParseParallelTag("ep8"));
    EXPECT_FALSE(ParseParallelTag("tp0"));

    const double gib = double(1ULL << 30);
    // vLLM >= 0.9: 8192 / 1024 on GPUs of 70 GiB or more except A100, else 2048 / 256.
    EXPECT_EQ(VllmServeDefaults("", 141e9, "H200").maxNumBatchedTokens, 8192u);
    EXPECT_EQ(VllmServeDefaults("nightly", 141e9, "H200").maxNumSeqs, 1024u);
    EXPECT_EQ(VllmServeDefaults("0.10.1", 80 * gib, "A100-80GB").maxNumBatchedTokens, 2048u);
    EXPECT_EQ(VllmServeDefaults("0.10.1", 69 * gib, "L40").maxNumSeqs, 256u);
    EXPECT_EQ(VllmServeDefaults("0.8.5", 141e9, "H200").maxNumBatchedTokens, 2048u);
    EXPECT_EQ(VllmServeDefaults("v0.24.0rc1", 141e9, "H200").maxNumBatchedTokens, 8192u);
    EXPECT_TRUE(IsVllmVersion("0.24.0"));
    EXPECT_FALSE(IsVllmVersion("latest"));
}

TEST(BenchmarkReplay, ClosedLoopWithWarmupAndLayoutFromTheFileName)
{
    const BenchmarkResult r = ReadBenchmarkResult(
        Write("minimax_m25_vllm_tep8_isl1024_osl128_conc16.json", InferenceX(160, 1024, 128, 16)));
    BenchmarkDeployment dep;
    dep.model = ModelSpec::Preset("MiniMax-M2.5");
    dep.modelField = "MiniMax-M2.5";
    dep.modelName = "MiniMax-M2.5";
    dep.hardwarePreset = "H200";
    const BenchmarkReplay rep = BenchmarkReplayScenario(r, dep);
    const json& req = rep.scenario["serving"]["requests"];
    EXPECT_EQ(req["concurrency"], 16);
    EXPECT_EQ(req["warmup"], 32); // InferenceX's 2 x C
    EXPECT_EQ(req["count"], 160);
    EXPECT_EQ(req["prompt_tokens"], 1024);
    EXPECT_EQ(req["output_tokens"], 128);
    EXPECT_EQ(req["rate_per_s"], 0.0);
    const json& par = rep.scenario["parallelism"];
    EXPECT_EQ(par["tp"], 8);
    EXPECT_EQ(par["ep"], 8);
    EXPECT_EQ(par["ep_backend"], "tp-allreduce"); // vLLM's TP + EP at DP 1
    EXPECT_EQ(rep.scenario["serving"]["batching"]["max_num_batched_tokens"], 8192);
    EXPECT_EQ(rep.scenario["serving"]["batching"]["max_num_seqs"], 1024);
    EXPECT_EQ(rep.scenario["topology"]["hosts"], 8);

    // --warmups overrides the client's default; --gpus must match the layout.
    BenchmarkDeployment cold = dep;
    cold.warmups = 0;
    EXPECT_FALSE(
        BenchmarkReplayScenario(r, cold).scenario["serving"]["requests"].contains("warmup"));
    BenchmarkDeployment four = dep;
    four.gpus = 4;
    const InputError gpus = ErrorOf([&] { BenchmarkReplayScenario(r, four); });
    EXPECT_EQ(gpus.Field(), "--gpus");
    BenchmarkDeployment dp = dep;
    dp.parallel = ParseParallelTag("dep8");
    const json dpPar = BenchmarkReplayScenario(r, dp).scenario["parallelism"];
    EXPECT_EQ(dpPar["dp"], 8);
    EXPECT_EQ(dpPar["ep_backend"], "allgather-reducescatter");
}

} // namespace
} // namespace fabricsim
