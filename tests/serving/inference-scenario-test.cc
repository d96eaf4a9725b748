// Inference scenario parsing: defaults, pools, and errors that name the field.

#include "input-error.h"
#include "serving-test-util.h"

#include <gtest/gtest.h>

namespace fabricsim
{
namespace
{

using nlohmann::json;

std::string
ErrorField(const json& patch)
{
    try
    {
        MakeScenario(patch);
    }
    catch (const fabricsim::InputError& e)
    {
        EXPECT_EQ(e.File(), "test.json");
        return e.Field();
    }
    return "no error";
}

TEST(InferenceScenario, DefaultsFollowVllm)
{
    InferenceScenario sc = MakeScenario();
    EXPECT_TRUE(InferenceScenario::IsInference(ScenarioJson()));
    EXPECT_FALSE(InferenceScenario::IsInference(json{{"topology", json::object()}}));
    EXPECT_EQ(sc.model.name, "Llama-3-8B");
    EXPECT_EQ(sc.pool.batching.maxNumBatchedTokens, 8192u);
    EXPECT_EQ(sc.pool.batching.maxNumSeqs, 256u);
    EXPECT_TRUE(sc.pool.batching.chunkedPrefill);
    EXPECT_EQ(sc.kv.blockSize, 16u);
    EXPECT_DOUBLE_EQ(sc.kv.gpuMemoryUtilization, 0.9);
    EXPECT_EQ(sc.kv.placement, KvPlacement::Hbm);
    EXPECT_FALSE(sc.disagg.enabled);
    EXPECT_FALSE(sc.slo.enabled);
    EXPECT_EQ(sc.exec.epOverlap, EpOverlap::None);
    EXPECT_EQ(sc.requests.seed, 7u); // the scenario seed
    EXPECT_EQ(sc.NumAccelerators(), 1u);
}

TEST(InferenceScenario, ParsesEveryServingBlock)
{
    InferenceScenario sc = MakeScenario(
        {{"model", "Qwen3-30B-A3B"},
         {"topology",
          {{"type", "rail-optimized"}, {"servers", 4}, {"accels_per_server", 4}, {"spines", 2}}},
         {"serving",
          {{"batching",
            {{"max_num_batched_tokens", 2048}, {"max_num_seqs", 64}, {"chunked_prefill", false}}},
           {"kv_cache", {{"placement", "remote"}, {"pool_hosts", {14, 15}}, {"capacity", "1TB"}}},
           {"slo", {{"ttft_ms", 500}, {"tpot_ms", 50}}},
           {"execution", {{"ep_overlap", "two_batch"}, {"graph_kernel_overhead", "2us"}}},
           {"placement", {{"tp", "across_servers"}}},
           {"expert_routing", {{"kind", "zipf"}, {"s", 1.2}, {"seed", 3}}},
           {"record", {{"programs", true}, {"timeline", true}, {"max_steps", 50}}},
           {"disaggregation",
            {{"prefill", {{"parallelism", {{"tp", 2}}}, {"first_host", 0}}},
             {"decode", {{"parallelism", {{"tp", 4}, {"ep", 4}}}, {"hosts", {4, 5, 6, 7}}}},
             {"kv_transfer", "layerwise"}}}}}});
    EXPECT_EQ(sc.placement.accelsPerServer, 4u);
    EXPECT_EQ(sc.placement.numHosts, 16u);
    EXPECT_EQ(sc.placement.tp, TpPlacement::AcrossServers);
    EXPECT_TRUE(sc.disagg.enabled);
    EXPECT_EQ(sc.disagg.prefill.par.tp, 2u);
    EXPECT_EQ(sc.disagg.decode.par.ep, 4u);
    EXPECT_EQ(sc.disagg.decode.hosts, (std::vector<uint32_t>{4, 5, 6, 7}));
    EXPECT_EQ(sc.disagg.decode.batching.maxNumBatchedTokens, 2048u);
    EXPECT_EQ(sc.disagg.transfer, KvTransferMode::Layerwise);
    EXPECT_EQ(sc.kv.placement, KvPlacement::Remote);
    EXPECT_DOUBLE_EQ(sc.kv.tierCapacityBytes, 1e12);
    EXPECT_TRUE(sc.slo.enabled);
    EXPECT_DOUBLE_EQ(sc.slo.tpotMs, 50);
    EXPECT_EQ(sc.exec.epOverlap, EpOverlap::TwoBatch);
    EXPECT_DOUBLE_EQ(sc.exec.graphKernelOverheadSec, 2e-6);
    EXPECT_FALSE(sc.routing.IsUniform());
    EXPECT_TRUE(sc.record.programs);
    EXPECT_EQ(sc.record.maxSteps, 50u);
    EXPECT_EQ(sc.NumAccelerators(), 6u);
}

TEST(InferenceScenario, DecodePoolFollowsThePrefillPoolByDefault)
{
    InferenceScenario sc
        = MakeScenario({{"serving",
                         {{"disaggregation",
                           {{"prefill", {{"parallelism", {{"tp", 2}}}, {"first_host", 8}}},
                            {"decode", {{"parallelism", {{"tp", 4}}}}}}}}}});
    EXPECT_EQ(sc.disagg.prefill.firstHost, 8u);
    EXPECT_EQ(sc.disagg.decode.firstHost, 10u);
    EXPECT_EQ(sc.disagg.transfer, KvTransferMode::Bulk);
}

TEST(InferenceScenario, ErrorsNameTheField)
{
    EXPECT_EQ(ErrorField({{"serving", {{"batching", {{"max_batch", 3}}}}}}),
              "serving.batching.max_batch");
    EXPECT_EQ(ErrorField({{"serving", {{"batching", {{"max_num_seqs", 0}}}}}}),
              "serving.batching.max_num_seqs");
    EXPECT_EQ(ErrorField({{"serving", {{"kv_cache", {{"placement", "ssd"}}}}}}),
              "serving.kv_cache.placement");
    EXPECT_EQ(ErrorField({{"serving", {{"kv_cache", {{"placement", "remote"}}}}}}),
              "serving.kv_cache.pool_hosts");
    EXPECT_EQ(ErrorField({{"serving", {{"kv_cache", {{"bandwidth", "fast"}}}}}}),
              "serving.kv_cache.bandwidth");
    EXPECT_EQ(ErrorField({{"serving", {{"slo", {{"ttft_ms", 100}}}}}}), "serving.slo.tpot_ms");
    EXPECT_EQ(ErrorField({{"serving", {{"execution", {{"ep_overlap", "always"}}}}}}),
              "serving.execution.ep_overlap");
    // Host overheads past an hour are a unit left off (once an internal error: the step's
    // time overflowed the picosecond clock); the largest legal one still fits it.
    EXPECT_EQ(ErrorField({{"serving", {{"execution", {{"step_overhead", 7200}}}}}}),
              "serving.execution.step_overhead");
    EXPECT_EQ(ErrorField({{"serving", {{"execution", {{"sequence_overhead", "1e30s"}}}}}}),
              "serving.execution.sequence_overhead");
    EXPECT_EQ(ErrorField({{"serving", {{"execution", {{"graph_kernel_overhead", 3601}}}}}}),
              "serving.execution.graph_kernel_overhead");
    EXPECT_EQ(ErrorField({{"serving", {{"placement", {{"tp", "diagonal"}}}}}}),
              "serving.placement.tp");
    EXPECT_EQ(ErrorField({{"serving", {{"disaggregation", {{"prefill", json::object()}}}}}}),
              "serving.disaggregation.decode");
    EXPECT_EQ(ErrorField({{"serving",
                           {{"disaggregation",
                             {{"prefill", json::object()},
                              {"decode", json::object()},
                              {"kv_transfer", "streamed"}}}}}}),
              "serving.disaggregation.kv_transfer");
    EXPECT_EQ(
        ErrorField(
            {{"serving",
              {{"disaggregation",
                {{"prefill", {{"parallelism", {{"tp", 3}}}}}, {"decode", json::object()}}}}}}),
        "serving.disaggregation.prefill.parallelism.tp");
    EXPECT_EQ(ErrorField({{"serving", {{"requests", nullptr}}}}), "serving.requests");
    EXPECT_EQ(ErrorField({{"serving", {{"batches", 1}}}}), "serving.batches");
    EXPECT_EQ(ErrorField({{"parallelism", {{"tp", 3}}}}), "parallelism.tp");
    EXPECT_EQ(ErrorField({{"model", "Llama-9"}}), "model");
    EXPECT_EQ(ErrorField({{"serving", {{"placement", {{"hosts", {0, 0}}}}}}}),
              "serving.placement.hosts[1]");
    EXPECT_EQ(ErrorField({{"serving", {{"placement", {{"hosts", {0, 1}}}}}}}),
              "serving.placement.hosts");
}

} // namespace
} // namespace fabricsim
