#include "input-error.h"
#include "parallelism-spec.h"

#include <gtest/gtest.h>

using namespace fabricsim;
using nlohmann::json;

namespace
{

/// Field named by the InputError of validating \p j against \p model ("ok" when valid).
std::string
ErrorField(const json& j, const std::string& model)
{
    try
    {
        ParallelismSpec::FromJson(j, "s.json").Validate(ModelSpec::Preset(model), "s.json");
    }
    catch (const fabricsim::InputError& e)
    {
        return e.Field();
    }
    return "ok";
}

} // namespace

TEST(ParallelismSpec, DefaultsAndWorldSize)
{
    ParallelismSpec p = ParallelismSpec::FromJson(json{{"tp", 8}, {"pp", 2}, {"dp", 3}});
    EXPECT_EQ(p.ep, 1u);
    EXPECT_FALSE(p.sequenceParallel);
    EXPECT_EQ(p.ppSend, PpSendFlavor::Megatron);
    EXPECT_EQ(p.WorldSize(), 48u);
}

TEST(ParallelismSpec, ValidLayouts)
{
    EXPECT_EQ(ErrorField(json{{"tp", 8}}, "Llama-3-70B"), "ok");
    EXPECT_EQ(ErrorField(json{{"tp", 16}}, "Llama-3-70B"), "ok"); // kv heads replicated
    EXPECT_EQ(ErrorField(json{{"tp", 8}, {"ep", 8}}, "Mixtral-8x7B"), "ok");
    EXPECT_EQ(
        ErrorField(json{{"tp", 1}, {"dp", 64}, {"ep", 64}, {"dp_attention", true}}, "DeepSeek-V3"),
        "ok");
    EXPECT_EQ(
        ErrorField(json{{"tp", 2}, {"dp", 16}, {"ep", 8}, {"dp_attention", true}}, "DeepSeek-V3"),
        "ok");
}

TEST(ParallelismSpec, ErrorsNameTheField)
{
    EXPECT_EQ(ErrorField(json{{"tp", 3}}, "Llama-3-70B"), "parallelism.tp");
    EXPECT_EQ(ErrorField(json{{"tp", 0}}, "Llama-3-70B"), "parallelism.tp");
    EXPECT_EQ(ErrorField(json{{"pp", 81}}, "Llama-3-70B"), "parallelism.pp");
    EXPECT_EQ(ErrorField(json{{"pp", 2}, {"pp_layers", {40, 39}}}, "Llama-3-70B"),
              "parallelism.pp_layers");
    EXPECT_EQ(ErrorField(json{{"pp", 3}, {"pp_layers", {40, 40}}}, "Llama-3-70B"),
              "parallelism.pp_layers");
    EXPECT_EQ(ErrorField(json{{"ep", 2}}, "Llama-3-70B"), "parallelism.ep");
    EXPECT_EQ(ErrorField(json{{"dp_attention", true}}, "Llama-3-70B"), "parallelism.dp_attention");
    EXPECT_EQ(
        ErrorField(json{{"tp", 2}, {"dp", 8}, {"ep", 16}, {"dp_attention", true}}, "Mixtral-8x7B"),
        "parallelism.ep"); // 16 does not divide 8 experts
    EXPECT_EQ(ErrorField(json{{"tp", 4}, {"ep", 8}, {"dp", 2}}, "Mixtral-8x7B"),
              "parallelism.ep"); // EP across dp needs dp_attention
    EXPECT_EQ(ErrorField(json{{"tp", 4}, {"ep", 12}, {"dp", 8}, {"dp_attention", true}},
                         "Qwen3-235B-A22B"),
              "parallelism.ep"); // 12 / 4 = 3 does not divide dp 8
    EXPECT_EQ(ErrorField(json{{"tp", 64}}, "Qwen3-30B-A3B"), "parallelism.tp"); // 768 / 64 ok,
                                                                                // but 4 kv heads
    EXPECT_EQ(ErrorField(json{{"tensor_parallel", 8}}, "Llama-3-70B"),
              "parallelism.tensor_parallel");
    EXPECT_EQ(ErrorField(json{{"pp_send", "nccl"}}, "Llama-3-70B"), "parallelism.pp_send");
    EXPECT_EQ(ErrorField(json{{"ep_backend", "deepep"}}, "Llama-3-70B"), "parallelism.ep_backend");
    EXPECT_EQ(ErrorField(json{{"ep_sms", 0}}, "Llama-3-70B"), "parallelism.ep_sms");
    // tp-allreduce shards the experts over the TP group: ep must be tp, without DP attention.
    EXPECT_EQ(
        ErrorField(json{{"tp", 8}, {"ep", 8}, {"ep_backend", "tp-allreduce"}}, "Mixtral-8x7B"),
        "ok");
    EXPECT_EQ(ErrorField(json{{"tp", 4},
                              {"ep", 8},
                              {"dp", 2},
                              {"dp_attention", true},
                              {"ep_backend", "tp-allreduce"}},
                         "Mixtral-8x7B"),
              "parallelism.ep");
    EXPECT_EQ(ErrorField(json{{"tp", 1},
                              {"ep", 8},
                              {"dp", 8},
                              {"dp_attention", true},
                              {"ep_backend", "tp-allreduce"}},
                         "Mixtral-8x7B"),
              "parallelism.ep");
    EXPECT_EQ(ErrorField(json{{"ep_sms", 5000}}, "Llama-3-70B"), "parallelism.ep_sms");
}

TEST(ParallelismSpec, EveryEpBackendNameRoundTrips)
{
    for (EpBackend b : {EpBackend::AllToAll,
                        EpBackend::AllGatherReduceScatter,
                        EpBackend::DeepEpNormal,
                        EpBackend::DeepEpLowLatency,
                        EpBackend::DeepEpAuto,
                        EpBackend::TpAllReduce})
    {
        const ParallelismSpec p
            = ParallelismSpec::FromJson(json{{"ep_backend", EpBackendName(b)}}, "s.json", "p");
        EXPECT_EQ(p.epBackend, b) << EpBackendName(b);
    }
    EXPECT_EQ(EpBackendName(EpBackend::DeepEpNormal), "deepep-normal");
    // DeepEP's Buffer.num_sms unless the scenario says otherwise.
    EXPECT_EQ(ParallelismSpec::FromJson(json::object(), "s.json", "p").epSms, 20u);
    EXPECT_EQ(ParallelismSpec::FromJson(json{{"ep_sms", 24}}, "s.json", "p").epSms, 24u);
    EXPECT_EQ(EpBackendName(EpBackend::DeepEpLowLatency), "deepep-low-latency");
    EXPECT_EQ(EpBackendName(EpBackend::DeepEpAuto), "deepep-auto");
    EXPECT_EQ(EpBackendName(EpBackend::TpAllReduce), "tp-allreduce");
    // Auto picks the normal kernels for prefill, low latency for decode; others are themselves.
    EXPECT_EQ(ResolveEpBackend(EpBackend::DeepEpAuto, true), EpBackend::DeepEpNormal);
    EXPECT_EQ(ResolveEpBackend(EpBackend::DeepEpAuto, false), EpBackend::DeepEpLowLatency);
    EXPECT_EQ(ResolveEpBackend(EpBackend::AllToAll, true), EpBackend::AllToAll);
    EXPECT_EQ(ResolveEpBackend(EpBackend::DeepEpNormal, false), EpBackend::DeepEpNormal);
}

TEST(ParallelismSpec, UnevenPipelineSplitFollowsVllm)
{
    ModelSpec ds = ModelSpec::Preset("DeepSeek-V3"); // 61 layers
    ParallelismSpec p;
    p.pp = 4;
    // 15 each, the one extra layer to the stage before the last.
    EXPECT_EQ(p.LayersPerStage(ds), (std::vector<uint32_t>{15, 15, 16, 15}));
    EXPECT_EQ(p.FirstLayer(ds, 3), 46u);
    p.pp = 8;
    ModelSpec l = ModelSpec::Preset("Llama-3.1-405B"); // 126 layers
    EXPECT_EQ(p.LayersPerStage(l), (std::vector<uint32_t>{15, 16, 16, 16, 16, 16, 16, 15}));
    p.ppLayers = {20, 20, 20, 20, 20, 10, 8, 8};
    EXPECT_EQ(p.LayersPerStage(l)[5], 10u);
}
