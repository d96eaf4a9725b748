// Attention on sliding-window layers: the keys a query sees are capped at the window, in
// FLOPs and in the KV it reads, against hand calculations from Gemma-3-27B's config.
#include "compute-calibration.h"
#include "roofline.h"

#include <gtest/gtest.h>

using namespace fabricsim;

namespace
{

/// Attention FLOPs and KV bytes of every layer of one step.
struct AttentionTotals
{
    double flops = 0;
    double kvBytes = 0;
};

AttentionTotals
Attention(const Roofline& r, const StepBatch& b)
{
    AttentionTotals t;
    for (const auto& op : r.StepOps(b))
    {
        if (op.kind == OpKind::Attention)
        {
            t.flops += op.flops;
            t.kvBytes += op.kvBytes;
        }
    }
    return t;
}

// Gemma-3-27B at TP 1: 32 query heads of 128 (q/k and v), 16 KV heads; 10 global layers and
// 52 local ones with a 1,024-token window.
constexpr double kHeads = 32;
constexpr double kPerKey = 2 * kHeads * (128 + 128); // FLOPs per query and key seen
constexpr double kKvPerToken = 2.0 * 16 * 128 * 2;   // bytes per token and layer

} // namespace

// Decode at 1k, 32k and 128k context: a global layer's query sees c + 1 keys, a local one at
// most 1,024; the local layers read at most the last 1,023 cached tokens.
TEST(SlidingWindowRoofline, DecodeAtLongContext)
{
    const ModelSpec m = ModelSpec::Preset("Gemma-3-27B");
    const Roofline r(m, HardwareSpec::Preset("H200"), ParallelismSpec());
    for (double c : {1024.0, 32768.0, 131072.0})
    {
        const AttentionTotals t = Attention(r, StepBatch::Decode(1, uint64_t(c)));
        const double keys = 10 * (c + 1) + 52 * std::min(c + 1, 1024.0);
        EXPECT_DOUBLE_EQ(t.flops, kPerKey * keys) << c;
        const double read = 10 * c + 52 * std::min(c, 1023.0);
        EXPECT_DOUBLE_EQ(t.kvBytes, (read + 62) * kKvPerToken) << c;
    }
    // At 128k the window leaves 1 / 5.958 of the attention FLOPs of every layer global.
    const AttentionTotals far = Attention(r, StepBatch::Decode(1, 131072));
    EXPECT_NEAR(kPerKey * 62 * 131073 / far.flops, 5.958, 0.001);
}

// A 16k-token prompt in one chunk: query p sees p + 1 keys, capped at 1,024 on local layers:
// 1,024 x 1,025 / 2 + (16,384 - 1,024) x 1,024 keys there, 16,384 x 16,385 / 2 on global ones.
// A chunk after a cached prefix starts part-way into the window.
TEST(SlidingWindowRoofline, PrefillChunks)
{
    const ModelSpec m = ModelSpec::Preset("Gemma-3-27B");
    const Roofline r(m, HardwareSpec::Preset("H200"), ParallelismSpec());
    StepBatch b;
    b.sequences = {SequenceWork{16384, 0, true}};
    const double local = 1024.0 * 1025 / 2 + (16384.0 - 1024) * 1024;
    const double global = 16384.0 * 16385 / 2;
    EXPECT_DOUBLE_EQ(Attention(r, b).flops, kPerKey * (10 * global + 52 * local));
    // 600 new tokens after 500 cached: queries 500..1,099; the first 524 see 501..1,024 keys.
    b.sequences = {SequenceWork{600, 500, true}};
    const double localChunk = 524.0 * 500 + 524.0 * 525 / 2 + 76.0 * 1024;
    const double globalChunk = 600.0 * (500 + 601.0 / 2);
    EXPECT_DOUBLE_EQ(Attention(r, b).flops, kPerKey * (10 * globalChunk + 52 * localChunk));
}

// No measured kernel table has sliding-window rows: with a calibration the local layers' attention
// keeps the roofline's price (not calibrated), the global layers' is calibrated.
TEST(SlidingWindowRoofline, LocalAttentionIsNotCalibrated)
{
    const ModelSpec m = ModelSpec::Preset("Gemma-3-27B");
    HardwareSpec hw = HardwareSpec::Preset("H100");
    auto cal = std::make_shared<ComputeCalibration>();
    CalibrationCurve curve;
    curve.op = KernelOp::GenerationAttention;
    curve.dtype = "bfloat16";
    curve.points = {CalibrationPoint{0, 1000, 0.5, 0.5}};
    cal->curves.push_back(curve);
    hw.computeCalibration = cal;
    const Roofline r(m, hw, ParallelismSpec());
    for (const auto& op : r.StepOps(StepBatch::Decode(4, 4096)))
    {
        if (op.kind == OpKind::Attention)
        {
            EXPECT_EQ(op.calibrated, m.KindOf(uint32_t(op.layer)) == LayerKind::Full) << op.layer;
        }
    }
}

// The full-attention kind for comparison, MiniMax-M2.5 at TP 1: every one of the 62 layers holds
// every token (2 x 8 x 128 x 2 = 4,096 B a token and layer) and a decode query sees all c + 1
// keys over 48 heads of 128.
TEST(SlidingWindowRoofline, FullAttentionModelAtLongContext)
{
    const ModelSpec m = ModelSpec::Preset("MiniMax-M2.5");
    const Roofline r(m, HardwareSpec::Preset("H200"), ParallelismSpec());
    for (double c : {1024.0, 32768.0, 131072.0})
    {
        EXPECT_DOUBLE_EQ(m.KvBytesPerSequence(uint64_t(c)), 62 * 4096.0 * c) << c;
        const AttentionTotals t = Attention(r, StepBatch::Decode(1, uint64_t(c)));
        EXPECT_DOUBLE_EQ(t.flops, 62 * 2 * 48 * 256.0 * (c + 1)) << c;
        EXPECT_DOUBLE_EQ(t.kvBytes, 62 * (c + 1) * 4096.0) << c;
    }
}
