// The roofline's estimate of one measured kernel call, against closed forms, and its baseline
// error on the corpus tables (docs/validation.md "Compute against measured kernels").
#include "kernel-roofline.h"
#include "shared-corpus.h"

#include <gtest/gtest.h>

#include <cmath>
#include <iostream>

namespace fabricsim
{
namespace
{

const HardwareSpec kH100 = HardwareSpec::Preset("H100");

TEST(KernelRoofline, GemmComputeAndMemoryBoundClosedForms)
{
    // 8192^3 bf16: 2 x 8192^3 FLOPs at 989 TFLOP/s x 0.7 = 1.588 ms, no launch cost.
    GemmTime big{"bfloat16", 8192, 8192, 8192, 1.54};
    ComputeOp op = KernelRooflineOp(kH100, big);
    EXPECT_FALSE(op.MemoryBound());
    EXPECT_NEAR(op.timeNs, 2.0 * 8192 * 8192 * 8192 / (989e12 * 0.7) * 1e9, 1e-6);
    // m = 1: the 8192 x 8192 bf16 weights (134 MB) at 3.35 TB/s x 0.85.
    GemmTime thin{"bfloat16", 1, 8192, 8192, 0.052};
    op = KernelRooflineOp(kH100, thin);
    EXPECT_TRUE(op.MemoryBound());
    const double bytes = 2.0 * (8192.0 * 8192 + 8192 + 8192);
    EXPECT_NEAR(op.timeNs, bytes / (3.35e12 * 0.85) * 1e9, 1e-6);
    // fp8: half the weight bytes and the fp8 peak.
    GemmTime thin8{"fp8", 1, 8192, 8192, 0.03};
    EXPECT_NEAR(KernelRooflineOp(kH100, thin8).weightBytes, 8192.0 * 8192, 0);
    GemmTime big8{"fp8", 8192, 8192, 8192, 0.84};
    EXPECT_NEAR(KernelRooflineOp(kH100, big8).timeNs,
                2.0 * 8192 * 8192 * 8192 / (1979e12 * 0.7) * 1e9,
                1e-6);
}

TEST(KernelRoofline, AttentionAndMoeClosedForms)
{
    // Decode: 64 sequences of 4096 cached tokens, 8 KV heads of 128: 1.07 GB of KV.
    AttentionTime dec{64, 1, 32, 8, 128, 4095, "bfloat16", "bfloat16", 0, 0.354};
    ComputeOp op = KernelRooflineOp(kH100, dec, false);
    EXPECT_DOUBLE_EQ(op.kvBytes, 64.0 * 4096 * 2 * 8 * 128 * 2);
    EXPECT_TRUE(op.MemoryBound());
    // Prefill: causal, 4 h d s (s + 1) / 2 per sequence.
    AttentionTime pre{2, 4096, 32, 8, 128, 0, "bfloat16", "bfloat16", 0, 1.0};
    EXPECT_DOUBLE_EQ(KernelRooflineOp(kH100, pre, true).flops,
                     2 * 4.0 * 32 * 128 * 4096 * 4097 / 2);
    // Qwen3-30B-A3B's MoE, one token: its 8 experts' weights, 6 H I FLOPs per pair.
    MoeTime one{"bfloat16", 1, 2048, 768, 8, 128, 1, 1, "balanced", 0.05};
    op = KernelRooflineOp(kH100, one);
    EXPECT_NEAR(op.weightBytes, 8.0 * 3 * 2048 * 768 * 2, 1e-3);
    EXPECT_DOUBLE_EQ(op.flops, 8.0 * 6 * 2048 * 768);
    // EP 4: a quarter of the experts and of the pairs; many tokens touch every local expert.
    MoeTime ep{"bfloat16", 4096, 2048, 768, 8, 128, 1, 4, "balanced", 1.0};
    op = KernelRooflineOp(kH100, ep);
    EXPECT_NEAR(op.weightBytes, 32.0 * 3 * 2048 * 768 * 2, 1.0);
    EXPECT_DOUBLE_EQ(op.flops, 4096.0 * 8 / 4 * 6 * 2048 * 768);
}

TEST(KernelRoofline, BaselineErrorOnTheCorpus)
{
    for (const char* sys : {"h100_sxm", "h200_sxm"})
    {
        const HardwareSpec hw
            = HardwareSpec::Preset(std::string(sys) == "h100_sxm" ? "H100" : "H200");
        for (const char* op : {"gemm", "context_attention", "generation_attention", "moe"})
        {
            REQUIRE_SHARED_CORPUS(
                path, std::string("compute/") + sys + "/" + sys + "-vllm-0.24.0-" + op + ".csv.gz");
            const KernelTable t = ReadKernelTable(path);
            size_t rows = 0;
            for (const KernelErrorClass& c : KernelRooflineErrors(t, hw))
            {
                rows += c.rows;
                EXPECT_TRUE(std::isfinite(c.mape)) << sys << " " << op << " " << c.dtype;
                // Uncalibrated, the roofline is optimistic at the median in every class: the
                // kernels' fixed cost and lower efficiencies are what calibration must add.
                EXPECT_LT(c.medianError, 0) << sys << " " << op << " " << c.dtype;
                std::cout << sys << " " << ToJson(c).dump() << "\n";
            }
            EXPECT_EQ(rows, t.Size()) << sys << " " << op;
        }
    }
}

} // namespace
} // namespace fabricsim
