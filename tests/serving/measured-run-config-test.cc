// A measured vLLM run's engine and machine (meta.json, config.json) become the scenario that
// replays it: the GPU named as runs name it maps to a preset, vLLM's expert parallelism to EP
// over dp x tp with data-parallel attention, and what cannot be replayed is refused by name.
#include "error-of.h"
#include "measured-run-config.h"
#include "shared-corpus.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

namespace fabricsim
{
namespace
{

using nlohmann::json;
using test::ErrorOf;

/// A run directory with \p meta as vllm/meta.json and, when given, \p config as config.json.
std::string
MakeRun(const std::string& name, const json& meta, const json& config = nullptr)
{
    const std::string dir = ::testing::TempDir() + "/" + name;
    ::mkdir(dir.c_str(), 0755);
    ::mkdir((dir + "/vllm").c_str(), 0755);
    std::ofstream(dir + "/vllm/meta.json") << meta.dump();
    if (!config.is_null())
    {
        std::ofstream(dir + "/config.json") << config.dump();
    }
    return dir;
}

json
Meta(const std::string& model, const json& kwargs)
{
    return {{"model", model}, {"vllm_version", "0.19.0"}, {"engine_kwargs", kwargs}};
}

TEST(MeasuredRunConfig, GpuNamesMapToPresets)
{
    EXPECT_EQ(HardwarePresetForDevice("NVIDIA RTX PRO 6000 Blackwell Server Edition"),
              "RTX-PRO-6000-Server");
    EXPECT_EQ(HardwarePresetForDevice("NVIDIA RTX PRO 6000 Blackwell Workstation Edition"),
              "RTX-PRO-6000");
    EXPECT_EQ(HardwarePresetForDevice("RTXPRO6000"), "RTX-PRO-6000-Server");
    EXPECT_EQ(HardwarePresetForDevice("NVIDIA GeForce RTX 4090"), "RTX-4090");
    EXPECT_EQ(HardwarePresetForDevice("NVIDIA H100 80GB HBM3"), "H100");
    EXPECT_EQ(HardwarePresetForDevice("NVIDIA H200"), "H200");
    EXPECT_EQ(HardwarePresetForDevice("AMD Instinct MI300X"), "MI300X");
    EXPECT_EQ(HardwarePresetForDevice("NVIDIA A100-SXM4-80GB"), "A100");
    // Other parts of the same number (memory, clocks, power) are not taken for the preset's.
    EXPECT_FALSE(HardwarePresetForDevice("NVIDIA A100-SXM4-40GB"));
    EXPECT_FALSE(HardwarePresetForDevice("NVIDIA H100 PCIe"));
    EXPECT_FALSE(HardwarePresetForDevice("NVIDIA H100 NVL"));
    EXPECT_FALSE(
        HardwarePresetForDevice("NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition"));
    EXPECT_FALSE(HardwarePresetForDevice("Tesla T4"));
    EXPECT_FALSE(HardwarePresetForDevice(""));
}

TEST(MeasuredRunConfig, EngineKwargsAndResolvedBlocks)
{
    const json kv = {{"num_gpu_blocks", 49181},
                     {"block_size", 64},
                     {"gpu_memory_utilization", 0.92},
                     {"enable_prefix_caching", false}};
    json meta = Meta("Qwen/Qwen3-30B-A3B-Instruct-2507",
                     {{"tensor_parallel_size", 1},
                      {"data_parallel_size", 2},
                      {"enable_expert_parallel", true},
                      {"max_num_seqs", 128},
                      {"max_num_batched_tokens", 2048},
                      {"max_model_len", nullptr},
                      {"dtype", "bfloat16"},
                      {"kv_cache_dtype", "auto"},
                      {"seed", 42}});
    meta["kv_cache"] = kv;
    meta["hardware"] = {{"device_name", "NVIDIA RTX PRO 6000 Blackwell Server Edition"}};
    const MeasuredRunConfig run = ReadMeasuredRunConfig(MakeRun("mrc-moe", meta));
    EXPECT_EQ(run.label, "mrc-moe");
    EXPECT_EQ(run.Gpus(), 2u);
    EXPECT_EQ(run.blockSize, 64u);
    EXPECT_EQ(run.numGpuBlocks, 49181u);
    EXPECT_FALSE(run.prefixCaching);
    EXPECT_TRUE(run.assumed.empty());
    EXPECT_EQ(run.deviceSource, "meta.json hardware.device_name");

    const json sc = MeasuredRunScenario(run, "r.jsonl");
    EXPECT_EQ(sc["hardware"], "RTX-PRO-6000-Server");
    EXPECT_EQ(sc["parallelism"],
              json({{"tp", 1},
                    {"pp", 1},
                    {"dp", 2},
                    {"ep", 2},
                    {"dp_attention", true},
                    {"ep_backend", "allgather-reducescatter"}}));
    EXPECT_EQ(sc["serving"]["batching"]["max_num_batched_tokens"], 2048);
    EXPECT_EQ(sc["serving"]["batching"]["max_num_seqs"], 128);
    EXPECT_EQ(sc["serving"]["kv_cache"]["num_blocks"], 49181);
    EXPECT_EQ(sc["serving"]["kv_cache"]["block_size"], 64);
    EXPECT_EQ(sc["serving"]["requests"]["trace"], "r.jsonl");
    EXPECT_EQ(sc["seed"], 42);
    // Two GPUs on one PCIe Gen5 x16 switch, at the 22.2 GB/s NCCL reaches over it.
    EXPECT_EQ(sc["topology"]["hosts"], 2);
    EXPECT_EQ(sc["topology"]["host_link"]["rate"], "177.6Gbps");

    // The same flags at data_parallel_size 1, tensor_parallel_size 2: vLLM runs no all-to-all
    // kernels there (dp_size > 1 is one of their conditions): the experts are sharded over the
    // TP group and one all-reduce sums their output.
    meta["engine_kwargs"]["tensor_parallel_size"] = 2;
    meta["engine_kwargs"]["data_parallel_size"] = 1;
    const json tp
        = MeasuredRunScenario(ReadMeasuredRunConfig(MakeRun("mrc-tp-ep", meta)), "r.jsonl");
    EXPECT_EQ(tp["parallelism"],
              json({{"tp", 2},
                    {"pp", 1},
                    {"dp", 1},
                    {"ep", 2},
                    {"dp_attention", false},
                    {"ep_backend", "tp-allreduce"}}));
}

TEST(MeasuredRunConfig, GpuFromConfigJsonAndDefaultsNoted)
{
    const json config
        = {{"nodes", {{{"instances", {{{"hardware", "RTXPRO6000"}, {"tp_size", 2}}}}}}}};
    const std::string dir
        = MakeRun("mrc-dense", Meta("Qwen/Qwen3-32B", {{"tensor_parallel_size", 2}}), config);
    const MeasuredRunConfig run = ReadMeasuredRunConfig(dir);
    EXPECT_EQ(run.device, "RTXPRO6000");
    EXPECT_EQ(run.deviceSource, "config.json nodes[].instances[].hardware");
    EXPECT_EQ(
        run.assumed,
        (std::vector<std::string>{"data_parallel_size", "max_num_seqs", "max_num_batched_tokens"}));
    const json sc = MeasuredRunScenario(run, "r.jsonl");
    EXPECT_EQ(sc["parallelism"], json({{"tp", 2}, {"pp", 1}, {"dp", 1}}));
    EXPECT_FALSE(sc["serving"]["kv_cache"].contains("num_blocks"));
}

TEST(MeasuredRunConfig, WhatCannotBeReplayedIsRefusedByName)
{
    // No GPU named anywhere.
    std::string dir = MakeRun("mrc-nogpu", Meta("meta-llama/Llama-3.1-8B", json::object()));
    InputError e = ErrorOf([&] { ReadMeasuredRunConfig(dir); });
    EXPECT_EQ(e.File(), dir + "/vllm/meta.json");
    EXPECT_EQ(e.Field(), "hardware.device_name");

    // An unknown GPU and an unknown model exit 2 naming them.
    json meta = Meta("meta-llama/Llama-3.1-8B", json::object());
    meta["hardware"] = {{"device_name", "Tesla T4"}};
    MeasuredRunConfig run = ReadMeasuredRunConfig(MakeRun("mrc-t4", meta));
    e = ErrorOf([&] { MeasuredRunScenario(run, "r.jsonl"); });
    EXPECT_EQ(e.Field(), "meta.json hardware.device_name");
    EXPECT_EQ(e.Found(), "\"Tesla T4\"");

    meta = Meta("acme/Unknown-7B", json::object());
    meta["hardware"] = {{"device_name", "NVIDIA H100 80GB HBM3"}};
    run = ReadMeasuredRunConfig(MakeRun("mrc-unknown-model", meta));
    e = ErrorOf([&] { MeasuredRunScenario(run, "r.jsonl"); });
    EXPECT_EQ(e.Field(), "model");
    EXPECT_EQ(e.Found(), "\"acme/Unknown-7B\"");

    // Settings the replay cannot honour.
    meta = Meta("meta-llama/Llama-3.1-8B", {{"quantization", "awq"}});
    meta["hardware"] = {{"device_name", "NVIDIA H100 80GB HBM3"}};
    e = ErrorOf([&] { ReadMeasuredRunConfig(MakeRun("mrc-awq", meta)); });
    EXPECT_EQ(e.Field(), "engine_kwargs.quantization");
    meta = Meta("Qwen/Qwen3-30B-A3B", {{"data_parallel_size", 2}});
    meta["hardware"] = {{"device_name", "NVIDIA H100 80GB HBM3"}};
    run = ReadMeasuredRunConfig(MakeRun("mrc-moe-dp", meta));
    e = ErrorOf([&] { MeasuredRunScenario(run, "r.jsonl"); });
    EXPECT_EQ(e.Field(), "engine_kwargs.enable_expert_parallel");
    meta
        = Meta("Qwen/Qwen3-30B-A3B", {{"data_parallel_size", 2}, {"enable_expert_parallel", true}});
    meta["hardware"] = {{"device_name", "NVIDIA H100 80GB HBM3"}};
    meta["resolved_config"] = {{"parallel_config", {{"all2all_backend", "deepep_low_latency"}}}};
    e = ErrorOf([&] { ReadMeasuredRunConfig(MakeRun("mrc-deepep", meta)); });
    EXPECT_EQ(e.Field(), "resolved_config.parallel_config.all2all_backend");
    EXPECT_EQ(e.Found(), "\"deepep_low_latency\"");
}

TEST(MeasuredRunConfig, ArrivalsAreTheArrivalOffsetsElseTheQueuedOnes)
{
    std::vector<MeasuredRequest> reqs(3);
    const double queued[] = {100.5, 100.25, 101.0};
    for (size_t i = 0; i < 3; ++i)
    {
        reqs[i].inputTokens = 10 * (i + 1);
        reqs[i].outputTokens = 5 + i;
        reqs[i].queuedS = queued[i];
    }
    const std::string byQueued
        = "{\"arrival_s\": 0.000000000, \"prompt_tokens\": 20, \"output_tokens\": 6}\n"
          "{\"arrival_s\": 0.250000000, \"prompt_tokens\": 10, \"output_tokens\": 5}\n"
          "{\"arrival_s\": 0.750000000, \"prompt_tokens\": 30, \"output_tokens\": 7}\n";
    EXPECT_EQ(ArrivalTrace(reqs), byQueued);
    // Wall-clock arrivals on another clock: only their offsets count.
    const double arrival[] = {5000.4, 5000.125, 5000.75};
    for (size_t i = 0; i < 3; ++i)
    {
        reqs[i].arrivalS = arrival[i];
    }
    EXPECT_EQ(ArrivalTrace(reqs),
              "{\"arrival_s\": 0.000000000, \"prompt_tokens\": 20, \"output_tokens\": 6}\n"
              "{\"arrival_s\": 0.275000000, \"prompt_tokens\": 10, \"output_tokens\": 5}\n"
              "{\"arrival_s\": 0.625000000, \"prompt_tokens\": 30, \"output_tokens\": 7}\n");
    reqs[2].arrivalS = -1;
    EXPECT_EQ(ArrivalTrace(reqs), byQueued);
}

TEST(MeasuredRunConfig, CorpusRunsBecomeScenarios)
{
    struct Expect
    {
        const char* run;
        json parallelism;
    };
    const Expect runs[] = {{"Llama-3.1-8B", {{"tp", 1}, {"pp", 1}, {"dp", 1}}},
                           {"Qwen3-32B", {{"tp", 2}, {"pp", 1}, {"dp", 1}}},
                           {"Qwen3-30B-A3B-Instruct-2507",
                            {{"tp", 1},
                             {"pp", 1},
                             {"dp", 2},
                             {"ep", 2},
                             {"dp_attention", true},
                             {"ep_backend", "allgather-reducescatter"}}}};
    for (const Expect& x : runs)
    {
        REQUIRE_SHARED_CORPUS(meta,
                              std::string("serving/llmservingsim-vllm/RTXPRO6000/") + x.run
                                  + "/vllm/meta.json");
        const std::string dir = meta.substr(0, meta.size() - std::string("/vllm/meta.json").size());
        const MeasuredRunConfig run = ReadMeasuredRunConfig(dir);
        EXPECT_EQ(run.vllmVersion, "0.19.0");
        EXPECT_TRUE(run.assumed.empty()) << x.run;
        const json sc = MeasuredRunScenario(run, "r.jsonl");
        EXPECT_EQ(sc["hardware"], "RTX-PRO-6000-Server") << x.run;
        EXPECT_EQ(sc["parallelism"], x.parallelism) << x.run;
        EXPECT_EQ(sc["serving"]["batching"]["max_num_seqs"], 128) << x.run;
        EXPECT_EQ(sc["serving"]["batching"]["max_num_batched_tokens"], 2048) << x.run;
    }
}

} // namespace
} // namespace fabricsim
