#include "roofline.h"
#include "unit-conversions.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace fabricsim;

namespace
{

ParallelismSpec
Tp(uint32_t tp)
{
    ParallelismSpec p;
    p.tp = tp;
    return p;
}

} // namespace

// Llama-3-70B decode, batch 64 (128 cached tokens each), TP 8 on H100: memory bound, and the
// step takes weight bytes per GPU / (HBM bw x eta_m) plus the launch overheads.
TEST(Roofline, Llama70bDecodeIsWeightBandwidthBound)
{
    ModelSpec m = ModelSpec::Preset("Llama-3-70B");
    HardwareSpec h = HardwareSpec::Preset("H100");
    Roofline r(m, h, Tp(8));
    auto ops = r.StepOps(StepBatch::Decode(64, 128));
    double weights = 0;
    uint32_t kernels = 0;
    for (const auto& op : ops)
    {
        EXPECT_TRUE(op.MemoryBound()) << OpKindName(op.kind) << " layer " << op.layer;
        weights += op.weightBytes;
        kernels += op.kernels;
    }
    ASSERT_EQ(ops.size(), 1 + 80 * 4 + 1u);
    // Weights one GPU reads: its 1/8 of each layer (1 of 8 KV heads) and of the LM head, the
    // norms, and 64/8 embedding rows on average.
    double layer = 8192.0 * (8 + 2) * 128 + 8.0 * 128 * 8192 + 3.0 * 8192 * 28672 / 8 + 2 * 8192;
    double expectWeights = 2.0 * (80 * layer + 128256.0 * 8192 / 8 + 8192 + 64.0 * 8192 / 8);
    EXPECT_NEAR(weights / expectWeights, 1.0, 1e-12);
    double ideal = expectWeights / (3.35e12 * 0.85) * 1e9 + kernels * 3000.0;
    double total = Roofline::TotalTimeNs(ops);
    EXPECT_GE(total, ideal);
    EXPECT_LT(total / ideal, 1.04); // KV reads (1.4%) and activations (2%) on top
    double bytes = 0;
    for (const auto& op : ops)
    {
        bytes += op.Bytes();
    }
    EXPECT_NEAR(total, bytes / (3.35e12 * 0.85) * 1e9 + kernels * 3000.0, 1e-6);
    EXPECT_NEAR(total / 1e6, 8.56, 0.05); // 6.1 ms of weights + 2.2 ms of launches + KV
}

TEST(Roofline, AttentionFlopsAndKvBytes)
{
    ModelSpec m = ModelSpec::Preset("Llama-3-70B");
    Roofline r(m, HardwareSpec::Preset("H100"), Tp(8));
    StepBatch b;
    b.sequences = {SequenceWork{1, 1000, true}, SequenceWork{512, 0, false}};
    auto ops = r.LayerOps(0, b);
    ASSERT_EQ(ops[1].kind, OpKind::Attention);
    double flops = 4.0 * 8 * 128 * (1 * (1000 + 1.0) + 512 * (0 + 513 / 2.0));
    EXPECT_DOUBLE_EQ(ops[1].flops, flops);
    // KV: read c and write q tokens, 2 x 1 head x 128 x 2 B per token on this rank.
    EXPECT_DOUBLE_EQ(ops[1].kvBytes, (1001.0 + 512) * 512);
    // MLA: the latent cache is read whole by every TP rank.
    ModelSpec ds = ModelSpec::Preset("DeepSeek-V3");
    ParallelismSpec p = Tp(8);
    Roofline rd(ds, HardwareSpec::Preset("H200"), p);
    auto dsOps = rd.LayerOps(0, StepBatch::Decode(1, 4095));
    EXPECT_DOUBLE_EQ(dsOps[1].kvBytes, 4096.0 * 576 * 2);
    EXPECT_DOUBLE_EQ(dsOps[1].flops, 2.0 * 16 * (192 + 128) * 1 * (4095 + 1));
}

TEST(Roofline, PrefillGemmsAreComputeBound)
{
    ModelSpec m = ModelSpec::Preset("Llama-3-70B");
    HardwareSpec h = HardwareSpec::Preset("H100");
    Roofline r(m, h, Tp(8));
    auto ops = r.LayerOps(10, StepBatch::Prefill(1, 4096));
    ASSERT_EQ(ops[3].kind, OpKind::DenseMlp);
    EXPECT_FALSE(ops[3].MemoryBound());
    double flops = 2.0 * 4096 * 3 * 8192 * 28672 / 8;
    EXPECT_DOUBLE_EQ(ops[3].flops, flops);
    EXPECT_NEAR(ops[3].timeNs, flops / (989e12 * 0.7) * 1e9 + 4 * 3000, 1e-6);
    EXPECT_FALSE(ops[1].MemoryBound()); // attention at 4096 tokens
}

TEST(Roofline, Fp8WeightsUseFp8PeakAndHalfTheBytes)
{
    ModelSpec m = ModelSpec::Preset("Llama-3-70B");
    m.weightDtype = DType::Fp8;
    Roofline r(m, HardwareSpec::Preset("H100"), Tp(8));
    auto ops = r.LayerOps(0, StepBatch::Prefill(1, 4096));
    EXPECT_NEAR(ops[3].computeNs, ops[3].flops / (1979e12 * 0.7) * 1e9, 1e-6);
    EXPECT_DOUBLE_EQ(ops[3].weightBytes, 3.0 * 8192 * 28672 / 8 + 8192);
}

TEST(Roofline, MoeExpertsHitWithoutEp)
{
    ModelSpec m = ModelSpec::Preset("Mixtral-8x7B");
    Roofline r(m, HardwareSpec::Preset("H100"), Tp(2));
    auto one = r.LayerOps(0, StepBatch::Decode(1, 100));
    ASSERT_EQ(one.size(), 5u);
    EXPECT_EQ(one[3].kind, OpKind::Router);
    EXPECT_EQ(one[4].kind, OpKind::MoeExperts);
    double expert = 3.0 * 4096 * 14336 / 2;                // one expert's half on this rank
    EXPECT_NEAR(one[4].weightBytes, 2 * expert * 2, 1e-3); // exactly k = 2 experts hit
    EXPECT_NEAR(one[4].flops, 2 * 2 * expert, 1e-3);
    auto many = r.LayerOps(0, StepBatch::Decode(16, 100));
    double hit = 8 * (1 - std::pow(0.75, 16));
    EXPECT_NEAR(many[4].weightBytes, hit * expert * 2, 1e-3);
}

TEST(Roofline, MoeWithExpertParallelism)
{
    ModelSpec m = ModelSpec::Preset("DeepSeek-V3");
    ParallelismSpec p;
    p.tp = 1;
    p.dp = 64;
    p.ep = 64;
    p.dpAttention = true;
    Roofline r(m, HardwareSpec::Preset("H200"), p);
    StepBatch b = StepBatch::Decode(32, 2000);
    EXPECT_DOUBLE_EQ(r.TokensPerEpGroup(b), 32.0 * 64);
    auto ops = r.LayerOps(3, b);
    ASSERT_EQ(ops.size(), 6u);
    const ComputeOp& experts = ops[4];
    // 4 local experts, 2048 tokens x 8 / 256 = 64 assignments each in expectation.
    double expert = 3.0 * 7168 * 2048;
    EXPECT_NEAR(experts.flops, 2 * 256 * expert, 1e-3 * expert);
    double hit = 4 * (1 - std::pow(1 - 8.0 / 256, 2048));
    EXPECT_NEAR(experts.weightBytes, hit * expert * 1.0, 1.0); // fp8 weights
    EXPECT_EQ(ops[5].kind, OpKind::SharedExperts);
    EXPECT_DOUBLE_EQ(ops[5].flops, 2.0 * 32 * expert); // replicated, local tokens
    // Dense layer 0 has no MoE ops.
    EXPECT_EQ(r.LayerOps(0, b).back().kind, OpKind::DenseMlp);
}

TEST(Roofline, SkewedRoutingLoadsRanksUnevenly)
{
    ModelSpec m = ModelSpec::Preset("Qwen3-235B-A22B");
    ParallelismSpec p;
    p.tp = 1;
    p.dp = 8;
    p.ep = 8;
    p.dpAttention = true;
    Roofline r(m, HardwareSpec::Preset("H100"), p, RoutingModel::Zipf(1.0, 42));
    StepBatch b = StepBatch::Decode(64, 1000);
    double sum = 0;
    double maxFlops = 0;
    for (uint32_t rank = 0; rank < 8; ++rank)
    {
        double f = r.LayerOps(0, b, rank)[4].flops;
        sum += f;
        maxFlops = std::max(maxFlops, f);
    }
    double total = 2.0 * 64 * 8 * 8 * 3 * 4096 * 1536; // all assignments of the EP group
    EXPECT_NEAR(sum / total, 1.0, 1e-9);
    EXPECT_GT(maxFlops, 1.3 * total / 8);
}

TEST(Roofline, PipelineStagesSplitLayersEmbeddingAndHead)
{
    ModelSpec m = ModelSpec::Preset("Llama-3-8B");
    ParallelismSpec p;
    p.pp = 3; // 32 layers: 11, 11, 10 (extra layers before the last stage)
    Roofline r(m, HardwareSpec::Preset("A100"), p);
    StepBatch b = StepBatch::Decode(8, 10);
    auto s0 = r.StepOps(b, RankPosition{0, 0});
    auto s2 = r.StepOps(b, RankPosition{2, 0});
    EXPECT_EQ(s0.front().kind, OpKind::Embedding);
    EXPECT_EQ(s0.size(), 1 + 11 * 4u);
    EXPECT_EQ(s2.back().kind, OpKind::LmHead);
    EXPECT_EQ(s2.size(), 10 * 4 + 1u);
    EXPECT_EQ(s2.front().layer, 22);
    EXPECT_DOUBLE_EQ(s2.back().flops, 2.0 * 8 * 4096 * 128256);
}

TEST(Roofline, EncoderStage)
{
    nlohmann::json c = ModelSpec::PresetConfig("Llama-3-8B");
    c["encoder"] = {{"num_hidden_layers", 24},
                    {"hidden_size", 1024},
                    {"num_attention_heads", 16},
                    {"tokens_per_image", 576}};
    ModelSpec m = ModelSpec::FromConfig(c);
    Roofline r(m, HardwareSpec::Preset("H100"), Tp(2));
    StepBatch b = StepBatch::Prefill(2, 700);
    b.images = 2;
    auto ops = r.StepOps(b);
    ASSERT_EQ(ops.front().kind, OpKind::Encoder);
    EXPECT_DOUBLE_EQ(ops.front().flops, 2 * m.encoder->FlopsPerImage() / 2);
    b.images = 0;
    EXPECT_EQ(r.StepOps(b).front().kind, OpKind::Embedding);
}

// Every op's cost across the token counts a step can hold (1 to 10^7 tokens, one prefill
// sequence, or a decode batch of up to 10^6) on a dense and an MoE model: time = max(FLOPs /
// effective peak, bytes / effective HBM bandwidth) + kernels x launch, GEMM FLOPs linear in tokens,
// prefill attention 2 n_h (d_qk + d_v) q (q + 1) / 2, the step time growing with the tokens, and
// every figure finite and representable as ps (10^7 tokens of Qwen3-30B-A3B prefill: minutes).
TEST(Roofline, OpCostsFollowTheirClosedFormsFromOneTokenToTenMillion)
{
    const HardwareSpec h = HardwareSpec::Preset("H100");
    for (const char* name : {"Llama-3-8B", "Qwen3-30B-A3B"})
    {
        const ModelSpec m = ModelSpec::Preset(name);
        const Roofline r(m, h, Tp(1));
        const DType gemm = m.weightDtype == DType::Fp8 ? DType::Fp8 : m.activationDtype;
        for (bool prefill : {true, false})
        {
            double previous = 0;
            double qkvFlopsPerToken = 0;
            // Decode batches stop at 10^6 sequences (the batch is walked per sequence).
            for (uint32_t t = 1; t <= (prefill ? 10000000u : 1000000u); t *= 10)
            {
                const StepBatch b = prefill ? StepBatch::Prefill(1, t) : StepBatch::Decode(t, 1024);
                const auto ops = r.StepOps(b);
                const std::string where = std::string(name) + (prefill ? " prefill " : " decode ")
                                          + std::to_string(t) + " tokens";
                for (const ComputeOp& op : ops)
                {
                    ASSERT_TRUE(std::isfinite(op.timeNs) && op.timeNs > 0) << where;
                    EXPECT_DOUBLE_EQ(op.memoryNs, op.Bytes() / h.EffectiveHbmBw() * 1e9) << where;
                    const double atGemm = op.flops / h.EffectiveFlops(gemm) * 1e9;
                    const double atAct = op.flops / h.EffectiveFlops(m.activationDtype) * 1e9;
                    EXPECT_TRUE(op.computeNs == atGemm || op.computeNs == atAct)
                        << where << " " << OpKindName(op.kind);
                    EXPECT_DOUBLE_EQ(op.timeNs,
                                     std::max(op.computeNs, op.memoryNs)
                                         + op.kernels * h.launchOverheadSec * 1e9)
                        << where << " " << OpKindName(op.kind);
                }
                const ComputeOp& qkv = ops[1]; // after the embedding
                ASSERT_EQ(qkv.kind, OpKind::QkvProj);
                if (qkvFlopsPerToken == 0)
                {
                    qkvFlopsPerToken = qkv.flops / t;
                }
                EXPECT_NEAR(qkv.flops / t / qkvFlopsPerToken, 1.0, 1e-12) << where;
                if (prefill)
                {
                    const ComputeOp& attn = ops[2];
                    ASSERT_EQ(attn.kind, OpKind::Attention);
                    const double q = t;
                    const double expect
                        = 2.0 * m.numHeads * (m.QkHeadDim() + m.VHeadDim()) * q * (q + 1) / 2;
                    EXPECT_NEAR(attn.flops / expect, 1.0, 1e-12) << where;
                }
                const double total = Roofline::TotalTimeNs(ops);
                EXPECT_GT(total, previous) << where;
                previous = total;
                EXPECT_NO_THROW(units::NsToPs(total, "step")) << where << ": " << total << " ns";
            }
        }
    }
}

// Each op names the kernels it stands for, in the measured tables' shapes: Llama-3-70B TP 8,
// a step of 62 decodes (1000 cached) and two prompt chunks (512 new after 0, 256 after 512).
TEST(Roofline, OpsCarryTheShapesOfTheirKernels)
{
    ModelSpec m = ModelSpec::Preset("Llama-3-70B");
    Roofline r(m, HardwareSpec::Preset("H100"), Tp(8));
    StepBatch b = StepBatch::Decode(62, 1000);
    b.sequences.push_back(SequenceWork{512, 0, true});
    b.sequences.push_back(SequenceWork{256, 512, false});
    const uint64_t t = 62 + 512 + 256;
    auto ops = r.LayerOps(0, b);
    ASSERT_EQ(ops.size(), 4u);
    auto gemm = [](const KernelShape& s, uint64_t m, uint64_t n, uint64_t k)
    {
        EXPECT_EQ(s.op, KernelOp::Gemm) << s.name;
        EXPECT_EQ(s.m, m) << s.name;
        EXPECT_EQ(s.n, n) << s.name;
        EXPECT_EQ(s.k, k) << s.name;
        EXPECT_EQ(s.dtype, DType::Bf16) << s.name;
    };
    ASSERT_EQ(ops[0].shapes.size(), 1u); // 8 query heads and 1 KV head pair of 128 per rank
    gemm(ops[0].shapes[0], t, (8 + 2) * 128, 8192);
    ASSERT_EQ(ops[1].shapes.size(), 3u); // two prompt chunks, then the decodes together
    EXPECT_EQ(ops[1].shapes[0].op, KernelOp::ContextAttention);
    EXPECT_EQ(ops[1].shapes[0].isl, 512u);
    EXPECT_EQ(ops[1].shapes[1].isl, 256u);
    EXPECT_EQ(ops[1].shapes[1].cached, 512u);
    const KernelShape& dec = ops[1].shapes[2];
    EXPECT_EQ(dec.op, KernelOp::GenerationAttention);
    EXPECT_EQ(dec.batch, 62u);
    EXPECT_EQ(dec.cached, 1000u);
    EXPECT_EQ(dec.heads, 8u);
    EXPECT_EQ(dec.kvHeads, 1u);
    EXPECT_EQ(dec.headDim, 128u);
    gemm(ops[2].shapes.at(0), t, 8192, 8 * 128);
    ASSERT_EQ(ops[3].shapes.size(), 2u);
    gemm(ops[3].shapes[0], t, 2 * 28672 / 8, 8192);
    gemm(ops[3].shapes[1], t, 8192, 28672 / 8);
    // The LM head runs on the one sampling prompt and the 62 decodes.
    const std::vector<ComputeOp> step = r.StepOps(b);
    const ComputeOp& head = step.back();
    ASSERT_EQ(head.kind, OpKind::LmHead);
    gemm(head.shapes.at(0), 63, 128256 / 8, 8192);
}

// The memory-bound kernels each op lists, with the bytes they move: Qwen3-32B at TP 2 (q and k
// norms; 32 query and 4 KV heads of 128 per rank, hidden 5120, intermediate 25600).
TEST(Roofline, OpsListTheirElementwiseKernelsWithTheBytesTheyMove)
{
    ModelSpec m = ModelSpec::Preset("Qwen3-32B");
    Roofline r(m, HardwareSpec::Preset("H100"), Tp(2));
    const double t = 128;
    const std::vector<ComputeOp> ops = r.LayerOps(0, StepBatch::Decode(128, 1000));
    ASSERT_EQ(ops.size(), 4u);
    auto check = [](const ComputeOp& op, std::vector<std::pair<std::string, double>> want)
    {
        ASSERT_EQ(op.elementwise.size(), want.size()) << OpKindName(op.kind);
        for (size_t i = 0; i < want.size(); ++i)
        {
            EXPECT_EQ(op.elementwise[i].op, KernelOp::Elementwise);
            EXPECT_EQ(op.elementwise[i].name, want[i].first);
            EXPECT_EQ(op.elementwise[i].tokens, 128u);
            EXPECT_DOUBLE_EQ(op.elementwise[i].bytes, want[i].second) << want[i].first;
        }
    };
    check(ops[0],
          {{"input_layernorm", 4 * t * 5120 * 2},
           {"q_norm", 2 * t * 32 * 128 * 2},
           {"k_norm", 2 * t * 4 * 128 * 2}});
    check(ops[1], {{"rotary_emb", 2 * t * (32 + 4) * 128 * 2}});
    check(ops[2], {});
    check(
        ops[3],
        {{"post_attention_layernorm", 4 * t * 5120 * 2}, {"silu_and_mul", 3 * t * 25600 / 2 * 2}});
    // Llama has no q / k norms.
    Roofline llama(ModelSpec::Preset("Llama-3-70B"), HardwareSpec::Preset("H100"), Tp(8));
    EXPECT_EQ(llama.LayerOps(0, StepBatch::Decode(8, 10))[0].elementwise.size(), 1u);
    // The plain roofline's cost does not change with them (its op bytes already count them).
    ComputeOp qkv = ops[0];
    const double before = qkv.timeNs;
    r.Cost(qkv, DType::Bf16);
    EXPECT_DOUBLE_EQ(qkv.timeNs, before);
}

// Qwen3-30B-A3B, DP 2 x EP 2: the router on the rank's own tokens, the fused MoE on the EP
// group's tokens with the model's full expert width, EP 2.
TEST(Roofline, MoeOpsCarryTheFusedMoeShape)
{
    ModelSpec m = ModelSpec::Preset("Qwen3-30B-A3B");
    ParallelismSpec p;
    p.dp = 2;
    p.ep = 2;
    p.dpAttention = true;
    Roofline r(m, HardwareSpec::Preset("H100"), p);
    auto ops = r.LayerOps(0, StepBatch::Decode(100, 500));
    ASSERT_EQ(ops.size(), 5u);
    const KernelShape& router = ops[3].shapes.at(0);
    EXPECT_EQ(router.m, 100u);
    EXPECT_EQ(router.n, 128u);
    const KernelShape& moe = ops[4].shapes.at(0);
    EXPECT_EQ(moe.op, KernelOp::Moe);
    EXPECT_EQ(moe.tokens, 200u);
    EXPECT_EQ(moe.hidden, 2048u);
    EXPECT_EQ(moe.inter, 768u);
    EXPECT_EQ(moe.topk, 8u);
    EXPECT_EQ(moe.experts, 128u);
    EXPECT_EQ(moe.ep, 2u);
    EXPECT_EQ(moe.tp, 1u);
}
