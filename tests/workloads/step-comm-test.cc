#include "input-error.h"
#include "step-comm.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace fabricsim;

namespace
{

size_t
Count(const std::vector<CollectiveCall>& cs, StepCollectiveKind k, const std::string& label = "")
{
    return size_t(std::count_if(cs.begin(),
                                cs.end(),
                                [&](const CollectiveCall& c)
                                { return c.kind == k && (label.empty() || c.label == label); }));
}

} // namespace

// Llama-3-70B decode batch 64, TP 8: 2 x 80 + 1 = 161 all-reduces of 64 x 8192 x 2 B = 1 MiB.
TEST(StepComm, Llama70bDecodeIssues161AllReducesOf1MiB)
{
    ModelSpec m = ModelSpec::Preset("Llama-3-70B");
    ParallelismSpec p;
    p.tp = 8;
    StepBatch b = StepBatch::Decode(64, 1000);
    auto ops = Roofline(m, HardwareSpec::Preset("H100"), p).StepOps(b);
    auto cs = StepComm(m, p).Collectives(b, ops);
    ASSERT_EQ(Count(cs, StepCollectiveKind::AllReduce), 161u);
    for (const auto& c : cs)
    {
        if (c.kind == StepCollectiveKind::AllReduce)
        {
            EXPECT_DOUBLE_EQ(c.bytes, 1048576.0);
            EXPECT_EQ(c.group, RankGroup::Tp);
            EXPECT_EQ(c.groupSize, 8u);
            ASSERT_GE(c.afterOp, 0);
            OpKind k = ops[size_t(c.afterOp)].kind;
            EXPECT_TRUE(k == OpKind::Embedding || k == OpKind::OutProj || k == OpKind::DenseMlp);
            EXPECT_EQ(ops[size_t(c.afterOp)].layer, c.layer);
        }
    }
    ASSERT_EQ(Count(cs, StepCollectiveKind::Gather), 1u);
    EXPECT_DOUBLE_EQ(cs.back().bytes, 64.0 * 16032 * 2);
    EXPECT_EQ(ops[size_t(cs.back().afterOp)].kind, OpKind::LmHead);
    EXPECT_EQ(cs.size(), 162u);
    // Ordered by position.
    EXPECT_TRUE(std::is_sorted(
        cs.begin(), cs.end(), [](const auto& a, const auto& c) { return a.afterOp < c.afterOp; }));
}

TEST(StepComm, SequenceParallelSplitsEachAllReduce)
{
    ModelSpec m = ModelSpec::Preset("Llama-3-70B");
    ParallelismSpec p;
    p.tp = 8;
    p.sequenceParallel = true;
    StepBatch b = StepBatch::Decode(64, 1000);
    auto ops = Roofline(m, HardwareSpec::Preset("H100"), p).StepOps(b);
    auto cs = StepComm(m, p).Collectives(b, ops);
    EXPECT_EQ(Count(cs, StepCollectiveKind::AllReduce), 0u);
    EXPECT_EQ(Count(cs, StepCollectiveKind::ReduceScatter), 161u);
    EXPECT_EQ(Count(cs, StepCollectiveKind::AllGather), 161u);
}

TEST(StepComm, NoTensorParallelNoCollectives)
{
    ModelSpec m = ModelSpec::Preset("Llama-3-8B");
    ParallelismSpec p;
    StepBatch b = StepBatch::Decode(16, 100);
    auto ops = Roofline(m, HardwareSpec::Preset("H100"), p).StepOps(b);
    EXPECT_TRUE(StepComm(m, p).Collectives(b, ops).empty());
}

TEST(StepComm, PipelineSendsAndRecvs)
{
    ModelSpec m = ModelSpec::Preset("Llama-3-70B");
    ParallelismSpec p;
    p.tp = 8;
    p.pp = 2;
    StepBatch b = StepBatch::Decode(64, 1000);
    Roofline r(m, HardwareSpec::Preset("H100"), p);
    auto ops0 = r.StepOps(b, RankPosition{0, 0});
    auto cs0 = StepComm(m, p).Collectives(b, ops0, RankPosition{0, 0});
    EXPECT_EQ(Count(cs0, StepCollectiveKind::AllReduce), 81u); // 2 x 40 + embedding
    ASSERT_EQ(cs0.back().kind, StepCollectiveKind::Send);
    EXPECT_DOUBLE_EQ(cs0.back().bytes, 1048576.0);
    EXPECT_EQ(cs0.back().afterOp, int32_t(ops0.size()) - 1);
    EXPECT_EQ(cs0.back().peerStage, 1u);

    p.ppSend = PpSendFlavor::Vllm;
    auto ops1 = r.StepOps(b, RankPosition{1, 0});
    auto cs1 = StepComm(m, p).Collectives(b, ops1, RankPosition{1, 0});
    ASSERT_EQ(cs1.front().kind, StepCollectiveKind::Recv);
    EXPECT_EQ(cs1.front().afterOp, -1);
    EXPECT_DOUBLE_EQ(cs1.front().bytes, 2 * 1048576.0);
    EXPECT_EQ(Count(cs1, StepCollectiveKind::AllReduce), 80u);
    EXPECT_EQ(Count(cs1, StepCollectiveKind::Gather), 1u);
}

// DeepSeek-V3, 4096 local tokens, ep 64, bf16: T k H b (ep - 1) / ep ~ 441 MiB per rank per
// MoE layer in dispatch.
TEST(StepComm, DeepSeekV3ExpertParallelDispatch)
{
    ModelSpec m = ModelSpec::Preset("DeepSeek-V3");
    ParallelismSpec p;
    p.tp = 1;
    p.dp = 64;
    p.ep = 64;
    p.dpAttention = true;
    StepBatch b = StepBatch::Prefill(1, 4096);
    auto ops = Roofline(m, HardwareSpec::Preset("H200"), p).StepOps(b);
    auto cs = StepComm(m, p).Collectives(b, ops);
    EXPECT_EQ(Count(cs, StepCollectiveKind::AllToAll, "moe_dispatch"), 58u);
    EXPECT_EQ(Count(cs, StepCollectiveKind::AllToAll, "moe_combine"), 58u);
    EXPECT_EQ(cs.size(), 116u);
    double expect = 4096.0 * 8 * 7168 * 2 * 63 / 64;
    for (const auto& c : cs)
    {
        EXPECT_NEAR(c.bytes, expect, 1e-6 * expect);
        EXPECT_EQ(c.groupSize, 64u);
        ASSERT_EQ(c.sendBytes.size(), 64u);
        OpKind after = ops[size_t(c.afterOp)].kind;
        EXPECT_EQ(after, c.label == "moe_dispatch" ? OpKind::Router : OpKind::MoeExperts);
    }
    EXPECT_NEAR(cs[0].bytes / (1 << 20), 441.0, 0.5);
}

// vLLM's default without DeepEP: every token goes to every EP rank once (all-gather of
// ep x T x H x b output), whatever its top-k, and the partial outputs come back summed
// (reduce-scatter of the same input size): Qwen3-30B-A3B, DP 2 x EP 2, 128 decode tokens each.
TEST(StepComm, AllGatherReduceScatterBackendSendsEachTokenOnce)
{
    ModelSpec m = ModelSpec::Preset("Qwen3-30B-A3B");
    ParallelismSpec p = ParallelismSpec::FromJson(
        {{"dp", 2}, {"ep", 2}, {"dp_attention", true}, {"ep_backend", "allgather-reducescatter"}});
    p.Validate(m);
    EXPECT_EQ(EpBackendName(p.epBackend), "allgather-reducescatter");
    StepBatch b = StepBatch::Decode(128, 1000);
    auto ops = Roofline(m, HardwareSpec::Preset("H100"), p).StepOps(b);
    auto cs = StepComm(m, p).Collectives(b, ops);
    EXPECT_EQ(Count(cs, StepCollectiveKind::AllGather, "moe_dispatch"), 48u);
    EXPECT_EQ(Count(cs, StepCollectiveKind::ReduceScatter, "moe_combine"), 48u);
    EXPECT_EQ(Count(cs, StepCollectiveKind::AllToAll), 0u);
    const double each = 2.0 * 128 * 2048 * 2; // ep x T x H x bf16 = 1 MiB
    for (const auto& c : cs)
    {
        EXPECT_EQ(c.group, RankGroup::Ep);
        EXPECT_DOUBLE_EQ(c.bytes, each);
        EXPECT_TRUE(c.sendBytes.empty());
    }
    // The all-to-all sends each token's copies for the other rank's experts: with top-8 of 128
    // experts spread over 2 ranks about 4 copies per token, 4 x the gather's remote half.
    p.epBackend = EpBackend::AllToAll;
    auto a2a = StepComm(m, p).Collectives(b, ops);
    EXPECT_NEAR(a2a[0].bytes / (each / 2), 4.0, 0.1);
}

TEST(StepComm, SkewedDispatchRowsAreUnevenButConserveBytes)
{
    ModelSpec m = ModelSpec::Preset("DeepSeek-V3");
    ParallelismSpec p;
    p.tp = 1;
    p.dp = 64;
    p.ep = 64;
    p.dpAttention = true;
    StepBatch b = StepBatch::Decode(256, 1000);
    RoutingModel z = RoutingModel::Zipf(1.0, 9);
    auto ops = Roofline(m, HardwareSpec::Preset("H200"), p, z).StepOps(b);
    auto cs = StepComm(m, p, z).Collectives(b, ops);
    const auto& row = cs[0].sendBytes;
    double sum = 0;
    for (double x : row)
    {
        sum += x;
    }
    EXPECT_NEAR(sum, 256.0 * 8 * 7168 * 2, 1.0);
    EXPECT_GT(*std::max_element(row.begin(), row.end()),
              3 * *std::min_element(row.begin(), row.end()));
}

TEST(StepComm, ExpertParallelInsideTensorParallelGroup)
{
    ModelSpec m = ModelSpec::Preset("Mixtral-8x7B");
    ParallelismSpec p;
    p.tp = 8;
    p.ep = 8;
    StepBatch b = StepBatch::Decode(64, 500);
    auto ops = Roofline(m, HardwareSpec::Preset("H100"), p).StepOps(b);
    auto cs = StepComm(m, p).Collectives(b, ops);
    // Per layer: attention all-reduce, dispatch, combine, all-gather of the MoE output.
    EXPECT_EQ(Count(cs, StepCollectiveKind::AllReduce), 32u + 1);
    EXPECT_EQ(Count(cs, StepCollectiveKind::AllToAll), 64u);
    EXPECT_EQ(Count(cs, StepCollectiveKind::AllGather, "moe_out"), 32u);
    for (const auto& c : cs)
    {
        if (c.label == "moe_dispatch")
        {
            // T / tp = 8 local tokens x k 2 x H x b x 7 / 8.
            EXPECT_NEAR(c.bytes, 8.0 * 2 * 4096 * 2 * 7 / 8, 1e-6);
        }
    }
    p.sequenceParallel = true;
    auto sp = StepComm(m, p).Collectives(b, ops);
    EXPECT_EQ(Count(sp, StepCollectiveKind::ReduceScatter, "attn_out"), 32u);
    EXPECT_EQ(Count(sp, StepCollectiveKind::AllGather, "attn_out"), 0u);
}

// vLLM's --tensor-parallel-size 8 --enable-expert-parallel at data_parallel_size 1: no
// all-to-all kernels (use_all2all_kernels needs dp_size > 1). Every rank holds every token after
// the attention all-reduce, runs its 1/8 of the experts on all of them, and one TP all-reduce
// sums the MoE output: per MoE layer two all-reduces of T x H x b, nothing else.
TEST(StepComm, TpAllReduceBackendShardsExpertsOverTheTpGroup)
{
    ModelSpec m = ModelSpec::Preset("Mixtral-8x7B");
    ParallelismSpec p;
    p.tp = 8;
    p.ep = 8;
    p.epBackend = EpBackend::TpAllReduce;
    ASSERT_FALSE(p.EpExchangesTokens());
    const StepBatch b = StepBatch::Decode(64, 500);
    const Roofline r(m, HardwareSpec::Preset("H100"), p);
    auto ops = r.StepOps(b, RankPosition{0, 3});
    auto cs = StepComm(m, p).Collectives(b, ops, RankPosition{0, 3});
    EXPECT_EQ(Count(cs, StepCollectiveKind::AllReduce, "attn_out"), 32u);
    EXPECT_EQ(Count(cs, StepCollectiveKind::AllReduce, "moe_out"), 32u);
    EXPECT_EQ(Count(cs, StepCollectiveKind::AllReduce), 32u * 2 + 1); // and the embedding's
    EXPECT_EQ(Count(cs, StepCollectiveKind::AllToAll), 0u);
    EXPECT_EQ(Count(cs, StepCollectiveKind::AllGather), 0u);
    for (const auto& c : cs)
    {
        if (c.kind == StepCollectiveKind::AllReduce)
        {
            EXPECT_DOUBLE_EQ(c.bytes, 64.0 * 4096 * 2);
            EXPECT_EQ(c.groupSize, 8u);
        }
    }
    // The router runs on all 64 tokens; rank 3's one expert (of 8) takes its share of their
    // 128 copies, whole (no tensor split of the expert).
    ParallelismSpec exchange = p;
    exchange.epBackend = EpBackend::AllToAll;
    const auto dispatched
        = Roofline(m, HardwareSpec::Preset("H100"), exchange).StepOps(b, RankPosition{0, 3});
    for (size_t i = 0; i < ops.size(); ++i)
    {
        if (ops[i].kind == OpKind::Router)
        {
            EXPECT_EQ(ops[i].shapes[0].m, 64u);
            EXPECT_EQ(dispatched[i].shapes[0].m, 8u); // T / tp after a dispatch
        }
        if (ops[i].kind == OpKind::MoeExperts)
        {
            EXPECT_EQ(ops[i].shapes[0].tp, 1u);
            EXPECT_EQ(ops[i].shapes[0].ep, 8u);
            EXPECT_DOUBLE_EQ(ops[i].flops, dispatched[i].flops);
        }
    }
}

// MiniMax-M2's QK norm spans every head (qk_norm_type "per_layer"): with its q and k split over
// the TP ranks, vLLM all-reduces their fp32 variances, q's and k's in one call, every layer.
TEST(StepComm, QkNormAcrossHeadsAllReducesItsVariancesOnceALayer)
{
    nlohmann::json cfg = {{"model_type", "minimax_m2"},
                          {"hidden_size", 3072},
                          {"num_hidden_layers", 4},
                          {"num_attention_heads", 48},
                          {"num_key_value_heads", 8},
                          {"head_dim", 128},
                          {"intermediate_size", 1536},
                          {"num_local_experts", 16},
                          {"num_experts_per_tok", 2},
                          {"vocab_size", 1000},
                          {"use_qk_norm", true},
                          {"qk_norm_type", "per_layer"}};
    const ModelSpec m = ModelSpec::FromConfig(cfg);
    EXPECT_TRUE(m.qkNorm);
    EXPECT_TRUE(m.qkNormAcrossHeads);
    ParallelismSpec p;
    p.tp = 8;
    const StepBatch b = StepBatch::Decode(32, 500);
    auto ops = Roofline(m, HardwareSpec::Preset("H200"), p).StepOps(b);
    auto cs = StepComm(m, p).Collectives(b, ops);
    ASSERT_EQ(Count(cs, StepCollectiveKind::AllReduce, "qk_norm"), 4u);
    for (const auto& c : cs)
    {
        if (c.label == "qk_norm")
        {
            EXPECT_DOUBLE_EQ(c.bytes, 32.0 * 2 * 4);
            EXPECT_EQ(ops[size_t(c.afterOp)].kind, OpKind::QkvProj);
        }
    }
    // Per head (Qwen3's kind), or on one rank, there is nothing to reduce.
    cfg["qk_norm_type"] = "per_head";
    const ModelSpec perHead = ModelSpec::FromConfig(cfg);
    EXPECT_TRUE(perHead.qkNorm);
    EXPECT_EQ(
        Count(StepComm(perHead, p).Collectives(b, ops), StepCollectiveKind::AllReduce, "qk_norm"),
        0u);
    // Its weights: one per element of q and of k, not one head's worth each.
    EXPECT_EQ(m.AttentionParams() - perHead.AttentionParams(), (48u + 8u - 2u) * 128u);
    cfg["qk_norm_type"] = "per_token";
    EXPECT_THROW(ModelSpec::FromConfig(cfg), fabricsim::InputError);
}
