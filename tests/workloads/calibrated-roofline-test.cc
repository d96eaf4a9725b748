// The serving loop's ops priced by a compute calibration (hardware.compute_calibration), and the
// calibration's error on the kernels the shipped scenarios issue, held out on H200
// (docs/validation.md "Compute against measured kernels").
#include "compute-calibration.h"
#include "input-error.h"
#include "shared-corpus.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <set>

namespace fabricsim
{
namespace
{

const std::string kShipped
    = std::string(FABRICSIM_SOURCE_DIR) + "/scenarios/compute/h100-sxm-vllm-0.24.0.json";

/// A calibration of one bf16 GEMM curve and one prefill curve, flat.
ComputeCalibration
FlatCalibration()
{
    ComputeCalibration cal;
    CalibrationCurve gemm;
    gemm.op = KernelOp::Gemm;
    gemm.dtype = "bfloat16";
    gemm.points.push_back({0, 4000, 0.5, 0.8, 0, 0});
    CalibrationCurve prefill = gemm;
    prefill.op = KernelOp::ContextAttention;
    prefill.points[0].overheadNs = 6000;
    cal.curves = {gemm, prefill};
    return cal;
}

/// A flat curve of \p op and \p dtype with a \p overheadNs a kernel.
CalibrationCurve
FlatCurve(KernelOp op, const std::string& dtype, double overheadNs)
{
    CalibrationCurve c;
    c.op = op;
    c.dtype = dtype;
    c.points.push_back({0, overheadNs, 0.5, 0.8, 0, 0});
    return c;
}

TEST(CalibratedRoofline, BlockScaledFp8ShapesTakeTheBlockCurveWhereThereIsOne)
{
    ComputeCalibration cal;
    cal.curves = {FlatCurve(KernelOp::Moe, "fp8", 1000),
                  FlatCurve(KernelOp::Moe, "fp8_block", 2000),
                  FlatCurve(KernelOp::Gemm, "fp8", 3000),
                  FlatCurve(KernelOp::Gemm, "bfloat16", 4000)};
    KernelShape moe;
    moe.op = KernelOp::Moe;
    moe.dtype = DType::Fp8;
    EXPECT_EQ(CalibrationCurveFor(cal, moe)->dtype, "fp8");
    moe.blockScaled = true;
    EXPECT_EQ(CalibrationCurveFor(cal, moe)->dtype, "fp8_block");
    // GEMMs have no block curve (the corpus has no block-scaled GEMM rows): per-tensor fp8.
    KernelShape gemm;
    gemm.op = KernelOp::Gemm;
    gemm.dtype = DType::Fp8;
    gemm.blockScaled = true;
    EXPECT_EQ(CalibrationCurveFor(cal, gemm)->dtype, "fp8");
    gemm.dtype = DType::Bf16; // a 16-bit shape is never block-scaled fp8
    EXPECT_EQ(CalibrationCurveFor(cal, gemm)->dtype, "bfloat16");
    cal.curves.erase(cal.curves.begin()); // no per-tensor MoE curve: the block one still prices
    EXPECT_EQ(CalibrationCurveFor(cal, moe)->dtype, "fp8_block");
    moe.blockScaled = false;
    EXPECT_EQ(CalibrationCurveFor(cal, moe), nullptr);
}

TEST(CalibratedRoofline, Fp8ModelRunsBlockKernelsAndKeepsItsEdgesSixteenBit)
{
    // DeepSeek-V3's checkpoint: fp8 with 128 x 128 block scales. Its linear layers and experts
    // are block-scaled fp8 shapes; its router and LM head stay bf16, as vLLM builds them.
    const ModelSpec m = ModelSpec::Preset("DeepSeek-V3");
    ParallelismSpec par;
    par.tp = 8;
    const Roofline r(m, HardwareSpec::Preset("H200"), par);
    size_t block = 0;
    size_t edges = 0;
    for (const ComputeOp& op : r.StepOps(StepBatch::Decode(16, 1024), RankPosition{}))
    {
        for (const KernelShape& s : op.shapes)
        {
            const std::string name = s.name;
            if (name == "router" || name == "lm_head")
            {
                EXPECT_EQ(s.dtype, DType::Bf16) << name;
                EXPECT_FALSE(s.blockScaled) << name;
                ++edges;
            }
            else if (s.op == KernelOp::Gemm || s.op == KernelOp::Moe)
            {
                EXPECT_EQ(s.dtype, DType::Fp8) << name;
                EXPECT_TRUE(s.blockScaled) << name;
                ++block;
            }
        }
    }
    EXPECT_EQ(edges, 58u + 1u); // a router per MoE layer, one LM head
    EXPECT_GT(block, 61u * 3);
}

TEST(CalibratedRoofline, OpCostsItsShapesAtTheirCurves)
{
    const HardwareSpec h100 = HardwareSpec::Preset("H100");
    const ComputeCalibration cal = FlatCalibration();
    // Two GEMMs: each its overhead plus the slower term of its own FLOPs and bytes.
    ComputeOp mlp;
    mlp.kernels = 3;
    KernelShape up;
    up.op = KernelOp::Gemm;
    up.m = 1;
    up.n = 8192;
    up.k = 4096;
    KernelShape big = up;
    big.m = 8192;
    mlp.shapes = {up, big};
    CalibrateOp(h100, cal, mlp);
    const double upNs = 4000 + 2.0 * (8192.0 * 4096 + 4096 + 8192) / (3.35e12 * 0.8) * 1e9;
    const double bigNs = 4000 + 2.0 * 8192 * 8192 * 4096 / (989e12 * 0.5) * 1e9;
    EXPECT_NEAR(mlp.kernelNs, upNs + bigNs, 1e-6);
    EXPECT_TRUE(mlp.calibrated);
    // The launches overlap the kernels: 3 x 3 us is less than the kernels' time.
    EXPECT_NEAR(mlp.timeNs, mlp.kernelNs, 1e-9);

    // Two prompt chunks run as one varlen kernel: one overhead. A chunk after a prefix also
    // reads the prefix's K and V and attends to it.
    ComputeOp attn;
    KernelShape chunk;
    chunk.op = KernelOp::ContextAttention;
    chunk.batch = 1;
    chunk.isl = 64;
    chunk.heads = 8;
    chunk.kvHeads = 1;
    chunk.headDim = 128;
    KernelShape later = chunk;
    later.cached = 1024;
    attn.shapes = {chunk, later};
    CalibrateOp(h100, cal, attn);
    const ComputeOp a = KernelShapeOp(h100, chunk);
    const ComputeOp b = KernelShapeOp(h100, later);
    EXPECT_DOUBLE_EQ(b.flops - a.flops, 4.0 * 8 * 128 * 64 * 1024);
    EXPECT_DOUBLE_EQ(b.kvBytes - a.kvBytes, 1024.0 * 2 * 1 * 128 * 2);
    auto term = [](const ComputeOp& o)
    {
        return std::max(o.flops / (989e12 * 0.5), o.Bytes() / (3.35e12 * 0.8)) * 1e9;
    };
    EXPECT_NEAR(attn.kernelNs, 6000 + term(a) + term(b), 1e-6);
    // Tiny kernels: the host's launches are what shows.
    attn.kernels = 10;
    CalibrateOp(h100, cal, attn);
    EXPECT_NEAR(attn.timeNs, 10 * 3000, 1e-9);

    // A class the calibration lacks (decode attention here) leaves the roofline's cost.
    ComputeOp decode;
    decode.flops = 1e9;
    decode.kvBytes = 1e9;
    CostOp(h100, decode, DType::Bf16);
    const ComputeOp before = decode;
    KernelShape d = chunk;
    d.op = KernelOp::GenerationAttention;
    decode.shapes = {d};
    CalibrateOp(h100, cal, decode);
    EXPECT_EQ(decode.timeNs, before.timeNs);
    EXPECT_FALSE(decode.calibrated);
}

TEST(CalibratedRoofline, GemmAndMoeShapesReadTheirCurvesLevel)
{
    // Two levels: GEMM n 2^10 and 2^12 (MoE inter / tp the same), efficiencies 0.2 and 0.6.
    const HardwareSpec h100 = HardwareSpec::Preset("H100");
    ComputeCalibration cal;
    for (KernelOp k : {KernelOp::Gemm, KernelOp::Moe})
    {
        CalibrationCurve c;
        c.op = k;
        c.dtype = "bfloat16";
        c.byN = true;
        c.points.push_back({0, 1000, 0.2, 0.2, 0, 0, 10});
        c.points.push_back({0, 1000, 0.6, 0.6, 0, 0, 12});
        cal.curves.push_back(c);
    }
    // A GEMM of n 2048 sits halfway: 0.4.
    KernelShape g;
    g.op = KernelOp::Gemm;
    g.m = 4096;
    g.n = 2048;
    g.k = 8192;
    ComputeOp gemm;
    gemm.shapes = {g};
    CalibrateOp(h100, cal, gemm);
    const ComputeOp gr = KernelShapeOp(h100, g);
    EXPECT_NEAR(gemm.kernelNs, 1000 + gr.flops / (989e12 * 0.4) * 1e9, 1e-6);
    // A MoE layer of 768-wide experts at TP 1 reads log2 768 = 9.58 (below the first level: 0.2);
    // at inter 8192 over TP 2 its experts are 4096 wide: the top level, 0.6.
    KernelShape m;
    m.op = KernelOp::Moe;
    m.tokens = 64;
    m.hidden = 2048;
    m.inter = 768;
    m.topk = 8;
    m.experts = 128;
    EXPECT_EQ(KernelShapeLevel(m), 768);
    ComputeOp moe;
    moe.weightBytes = 1e9;
    moe.shapes = {m};
    CalibrateOp(h100, cal, moe);
    EXPECT_NEAR(moe.kernelNs, 1000 + 1e9 / (3.35e12 * 0.2) * 1e9, 1e-6);
    m.inter = 8192;
    m.tp = 2;
    EXPECT_EQ(KernelShapeLevel(m), 4096);
    moe.shapes = {m};
    CalibrateOp(h100, cal, moe);
    EXPECT_NEAR(moe.kernelNs, 1000 + 1e9 / (3.35e12 * 0.6) * 1e9, 1e-6);
    // Levels from nothing to 2^60 clamp to the end levels: a GEMM of n 0 or 1 reads the first,
    // one of n 2^60 the last, each the closed form at that efficiency, finite.
    for (const auto& [n, eta] : {std::pair<uint64_t, double>{0, 0.2}, {1, 0.2}, {1ULL << 60, 0.6}})
    {
        g.n = n;
        gemm.shapes = {g};
        CalibrateOp(h100, cal, gemm);
        const ComputeOp r = KernelShapeOp(h100, g);
        const double expected
            = 1000 + std::max(r.flops / (989e12 * eta), r.Bytes() / (3.35e12 * eta)) * 1e9;
        EXPECT_TRUE(std::isfinite(gemm.kernelNs)) << n;
        EXPECT_NEAR(gemm.kernelNs / expected, 1, 1e-12) << n;
    }
}

// The norm / rotary / activation kernels of an op: priced by an elementwise curve at the bytes
// they move and added to its shapes' time; a calibration without the curve leaves them out.
TEST(CalibratedRoofline, ElementwiseKernelsAddTheirCurveCostOnlyWhereTheCalibrationHasOne)
{
    const HardwareSpec h100 = HardwareSpec::Preset("H100");
    ComputeCalibration cal = FlatCalibration();
    ComputeOp mlp;
    KernelShape up;
    up.op = KernelOp::Gemm;
    up.m = 16;
    up.n = 8192;
    up.k = 4096;
    mlp.shapes = {up};
    KernelShape norm;
    norm.op = KernelOp::Elementwise;
    norm.tokens = 16;
    norm.bytes = 4.0 * 16 * 4096 * 2;
    KernelShape act = norm;
    act.bytes = 3.0 * 16 * 8192 * 2;
    mlp.elementwise = {norm, act};
    ComputeOp without = mlp;
    CalibrateOp(h100, cal, without);
    ComputeOp gemmOnly = mlp;
    gemmOnly.elementwise.clear();
    CalibrateOp(h100, cal, gemmOnly);
    EXPECT_DOUBLE_EQ(without.kernelNs, gemmOnly.kernelNs);

    CalibrationCurve ew;
    ew.op = KernelOp::Elementwise;
    ew.dtype = "bfloat16";
    ew.points.push_back({10, 2000, 1, 0.5, 0, 0}); // below 1 KiB moved: 2 us + half the bandwidth
    ew.points.push_back({30, 2000, 1, 1.5, 0, 0}); // 1 GiB: L2-fed, 1.5 x the HBM bandwidth
    cal.curves.push_back(ew);
    CalibrateOp(h100, cal, mlp);
    auto priced = [&](double bytes)
    {
        const double eta = 0.5 + (std::log2(bytes) - 10) / 20 * (1.5 - 0.5);
        return 2000 + bytes / (3.35e12 * eta) * 1e9;
    };
    EXPECT_NEAR(mlp.kernelNs - gemmOnly.kernelNs, priced(norm.bytes) + priced(act.bytes), 1e-6);
    // From one byte to a terabyte: the curve's ends hold outside it, and the time is the closed
    // form, finite.
    for (const auto& [bytes, eta] : {std::pair<double, double>{1, 0.5}, {1e12, 1.5}})
    {
        ComputeOp op;
        op.shapes = {up};
        KernelShape k = norm;
        k.bytes = bytes;
        op.elementwise = {k};
        CalibrateOp(h100, cal, op);
        EXPECT_NEAR(op.kernelNs - gemmOnly.kernelNs,
                    2000 + bytes / (3.35e12 * eta) * 1e9,
                    1e-9 * (2000 + bytes / (3.35e12 * eta) * 1e9))
            << bytes;
    }
}

TEST(CalibratedRoofline, ExtremeShapesStayFiniteAndClampToTheCurvesEnds)
{
    // m = 2^40 tokens, k = n = 2^20: far past the tables' grid; the end point holds and the
    // sizes do not overflow (doubles throughout): 2 m n k FLOPs at the fp8 peak x 0.5.
    const HardwareSpec h100 = HardwareSpec::Preset("H100");
    const ComputeCalibration cal = FlatCalibration();
    ComputeOp op;
    KernelShape s;
    s.op = KernelOp::Gemm;
    s.m = uint64_t(1) << 40;
    s.n = uint64_t(1) << 20;
    s.k = uint64_t(1) << 20;
    s.dtype = DType::Fp8;
    op.shapes = {s};
    CalibrateOp(h100, cal, op);
    EXPECT_FALSE(op.calibrated); // no fp8 curve in this calibration
    s.dtype = DType::Bf16;
    op.shapes = {s};
    CalibrateOp(h100, cal, op);
    ASSERT_TRUE(op.calibrated);
    EXPECT_TRUE(std::isfinite(op.timeNs));
    EXPECT_NEAR(op.kernelNs / (4000 + std::ldexp(2.0, 80) / (989e12 * 0.5) * 1e9), 1, 1e-12);
    // One token: the overhead and the weight reads.
    s.m = 1;
    op.shapes = {s};
    CalibrateOp(h100, cal, op);
    EXPECT_GT(op.kernelNs, 4000);
}

TEST(CalibratedRoofline, HardwareKeyLoadsTheFileRelativeToTheScenario)
{
    const std::string dir = ::testing::TempDir() + "calibrated-roofline";
    std::system(("mkdir -p " + dir + "/cal").c_str());
    {
        std::ofstream f(dir + "/cal/flat.json");
        f << FlatCalibration().ToJson().dump();
    }
    const nlohmann::json j = {{"preset", "H100"}, {"compute_calibration", "cal/flat.json"}};
    const HardwareSpec h = HardwareSpec::FromJson(j, dir + "/scenario.json", "hardware");
    ASSERT_NE(h.computeCalibration, nullptr);
    EXPECT_EQ(h.computeCalibrationFile, dir + "/cal/flat.json");
    EXPECT_EQ(h.computeCalibration->curves.size(), 2u);
    try
    {
        HardwareSpec::FromJson({{"preset", "H100"}, {"compute_calibration", "cal/none.json"}},
                               dir + "/scenario.json",
                               "hardware");
        ADD_FAILURE() << "a missing calibration file was accepted";
    }
    catch (const InputError& e)
    {
        EXPECT_EQ(e.Field(), "hardware.compute_calibration");
        EXPECT_NE(std::string(e.what()).find("none.json"), std::string::npos) << e.what();
    }
}

/// The shipped scenarios' layouts, and the step batches they run: decode of 1 ... maxSeqs
/// sequences at the contexts given, and prompt chunks of up to maxTokens tokens.
struct ScenarioShapes
{
    const char* name;
    const char* model;
    ParallelismSpec par;
    uint32_t maxSeqs;
    uint32_t maxTokens;
    std::vector<uint64_t> contexts;
};

std::vector<ScenarioShapes>
TargetScenarios()
{
    ParallelismSpec ep32;
    ep32.dp = 32;
    ep32.ep = 32;
    ep32.dpAttention = true;
    ParallelismSpec tp8;
    tp8.tp = 8;
    ParallelismSpec ep8;
    ep8.dp = 8;
    ep8.ep = 8;
    ep8.dpAttention = true;
    return {{"default (Qwen3-30B-A3B, DP32 EP32)", "Qwen3-30B-A3B", ep32, 64, 1024, {32, 64, 128}},
            {"Llama-3-70B TP8", "Llama-3-70B", tp8, 256, 8192, {1024, 2048, 4096, 8192}},
            {"Qwen3-30B-A3B DP8 EP8", "Qwen3-30B-A3B", ep8, 256, 8192, {1024, 2048, 4096}}};
}

/// Every kernel shape the scenarios' steps issue, in bf16 and fp8 for GEMMs and MoE.
std::vector<KernelShape>
TargetShapes()
{
    const HardwareSpec h100 = HardwareSpec::Preset("H100");
    std::vector<KernelShape> out;
    for (const ScenarioShapes& s : TargetScenarios())
    {
        const Roofline r(ModelSpec::Preset(s.model), h100, s.par);
        std::vector<StepBatch> batches;
        for (uint32_t b = 1; b <= s.maxSeqs; b *= 2)
        {
            for (uint64_t c : s.contexts)
            {
                batches.push_back(StepBatch::Decode(b, c));
            }
        }
        for (uint32_t t = 16; t <= s.maxTokens; t *= 2)
        {
            batches.push_back(StepBatch::Prefill(1, t));
        }
        for (const StepBatch& batch : batches)
        {
            for (const ComputeOp& op : r.LayerOps(0, batch))
            {
                for (KernelShape k : op.shapes)
                {
                    out.push_back(k);
                    if (k.op == KernelOp::Gemm || k.op == KernelOp::Moe)
                    {
                        k.dtype = DType::Fp8;
                        out.push_back(k);
                    }
                }
            }
            for (const ComputeOp& op : r.StepOps(batch))
            {
                if (op.kind == OpKind::LmHead)
                {
                    out.insert(out.end(), op.shapes.begin(), op.shapes.end());
                }
            }
        }
    }
    return out;
}

/// The row of \p t nearest \p s: the same dtype, heads and MoE layout, the least squared
/// distance in log2 over the sizes.
std::optional<size_t>
NearestRow(const KernelTable& t, const KernelShape& s)
{
    auto d = [](double a, double b)
    {
        const double x = std::log2(std::max(a, 1.0)) - std::log2(std::max(b, 1.0));
        return x * x;
    };
    const std::string dtype = CalibrationDtype(s.dtype);
    std::optional<size_t> best;
    double bestD = 0;
    for (size_t i = 0; i < t.Size(); ++i)
    {
        double dist = 0;
        if (t.op == KernelOp::Gemm)
        {
            const GemmTime& g = t.gemm[i];
            if (g.dtype != dtype)
            {
                continue;
            }
            dist = d(g.m, s.m) + d(g.n, s.n) + d(g.k, s.k);
        }
        else if (t.op == KernelOp::Moe)
        {
            const MoeTime& m = t.moe[i];
            if (m.dtype != dtype || m.hidden != s.hidden || m.inter != s.inter || m.topk != s.topk
                || m.experts != s.experts || m.tp != s.tp || m.ep != s.ep)
            {
                continue;
            }
            dist = d(m.tokens, s.tokens);
        }
        else
        {
            const AttentionTime& a = t.attention[i];
            if (a.heads != s.heads || a.kvHeads != s.kvHeads || a.headDim != s.headDim)
            {
                continue;
            }
            dist = t.op == KernelOp::ContextAttention
                       ? d(a.batch, s.batch) + d(a.isl, s.isl)
                       : d(a.batch, s.batch) + d(double(a.step) + 1, double(s.cached) + 1);
        }
        if (!best || dist < bestD)
        {
            best = i;
            bestD = dist;
        }
    }
    return best;
}

TEST(CalibratedRoofline, ScenarioShapesHeldOutOnH200)
{
    REQUIRE_SHARED_CORPUS(probe, "compute/h200_sxm/h200_sxm-vllm-0.24.0-gemm.csv.gz");
    const ComputeCalibration cal = ComputeCalibration::Read(kShipped);
    std::map<KernelOp, KernelTable> tables;
    for (const char* op : {"gemm", "context_attention", "generation_attention", "moe"})
    {
        const KernelTable t = ReadKernelTable(test::SharedCorpusFile(
            std::string("compute/h200_sxm/h200_sxm-vllm-0.24.0-") + op + ".csv.gz"));
        tables.emplace(t.op, t);
    }
    std::map<KernelOp, std::set<size_t>> rows;
    size_t unmatched = 0;
    for (const KernelShape& s : TargetShapes())
    {
        const auto row = NearestRow(tables.at(s.op), s);
        row ? void(rows[s.op].insert(*row)) : void(++unmatched);
    }
    EXPECT_EQ(unmatched, 0u);
    const HardwareSpec h200 = HardwareSpec::Preset("H200");
    for (const auto& [op, set] : rows)
    {
        const KernelTable& t = tables.at(op);
        auto use = [&set](size_t row)
        {
            return set.count(row) > 0;
        };
        const auto calibrated = KernelErrors(
            t,
            [&](const KernelTable& tt, size_t row) { return CalibratedRowOp(cal, h200, tt, row); },
            use);
        const auto roofline = KernelErrors(
            t,
            [&](const KernelTable& tt, size_t row) { return KernelRooflineOp(h200, tt, row); },
            use);
        ASSERT_EQ(calibrated.size(), roofline.size());
        for (size_t c = 0; c < calibrated.size(); ++c)
        {
            std::cout << "H200 scenario rows " << ToJson(calibrated[c]).dump() << " roofline "
                      << roofline[c].mape << "\n";
            EXPECT_GE(calibrated[c].rows, 10u) << calibrated[c].op;
            // Carried from H100, the calibration at least halves the roofline's error on the
            // kernels the scenarios run (the 10 % target is not met everywhere yet;
            // docs/validation.md gives each class's figure).
            EXPECT_LT(calibrated[c].mape, roofline[c].mape / 2)
                << calibrated[c].op << " " << calibrated[c].dtype;
            // With the latency below H100's nominal bandwidth kept, GEMMs carry without a bias
            // (with the efficiencies carried whole their medians were -5.0 and -6.6 %) and fp8
            // MoE within the target (20.6 % before); with a line of m per n level, GEMMs too
            // (one line of m: 11.2 and 13.0 %).
            if (op == KernelOp::Gemm)
            {
                EXPECT_LT(std::abs(calibrated[c].medianError), 3.0) << calibrated[c].dtype;
                EXPECT_LE(calibrated[c].mape, 10.0) << calibrated[c].dtype;
            }
            // MoE by the per-expert width too (by tokens alone: bf16 11.2 %, fp8 9.6 %).
            if (op == KernelOp::Moe)
            {
                EXPECT_LE(calibrated[c].mape, 10.0) << calibrated[c].dtype;
            }
        }
    }
}

TEST(CalibratedRoofline, ShippedCalibrationTracksTheMeasuredKernelsInTheServingLoop)
{
    REQUIRE_SHARED_CORPUS(gemm, "compute/h100_sxm/h100_sxm-vllm-0.24.0-gemm.csv.gz");
    // Qwen3-30B-A3B on one H100, decode of 8 sequences: its qkv projection is the table's
    // m 8, n 5120, k 2048 GEMM, its output projection m 8, n 2048, k 4096. (Its router, m 8,
    // n 128, k 2048, is priced 3.4 us against 5.0 measured even on its own n level's line: the
    // few output tiles run a serial K loop the line's other k do not; docs/validation.md.)
    HardwareSpec h100 = HardwareSpec::Preset("H100");
    h100.computeCalibration
        = std::make_shared<const ComputeCalibration>(ComputeCalibration::Read(kShipped));
    const Roofline r(ModelSpec::Preset("Qwen3-30B-A3B"), h100, ParallelismSpec());
    const auto ops = r.LayerOps(0, StepBatch::Decode(8, 1024));
    const KernelTable t = ReadKernelTable(gemm);
    auto measuredNs = [&t](uint64_t m, uint64_t n, uint64_t k)
    {
        for (const GemmTime& g : t.gemm)
        {
            if (g.dtype == "bfloat16" && g.m == m && g.n == n && g.k == k)
            {
                return g.ms * 1e6;
            }
        }
        return 0.0;
    };
    for (const ComputeOp& op : ops)
    {
        if (op.kind != OpKind::QkvProj && op.kind != OpKind::OutProj)
        {
            continue;
        }
        ASSERT_EQ(op.shapes.size(), 1u);
        const KernelShape& s = op.shapes[0];
        const double measured = measuredNs(s.m, s.n, s.k);
        ASSERT_GT(measured, 0) << OpKindName(op.kind);
        EXPECT_TRUE(op.calibrated);
        // qkv within 10 % (-1.8 %); the output projection (n 2048, k 4096: 12 % optimistic)
        // within 15 %.
        const double bound = op.kind == OpKind::QkvProj ? 0.1 : 0.15;
        EXPECT_NEAR(op.kernelNs, measured, bound * measured) << OpKindName(op.kind);
        std::cout << OpKindName(op.kind) << " calibrated " << op.kernelNs << " ns, measured "
                  << measured << " ns\n";
    }
}

} // namespace
} // namespace fabricsim
