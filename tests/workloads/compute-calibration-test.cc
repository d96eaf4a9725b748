// The compute calibration: interpolation, its file, the fit on a constructed table (recovers what
// made it) and on the corpus (H100 fit, left-out rows and H200 held out; docs/validation.md
// "Compute against measured kernels"), and the shipped calibration being that fit.
#include "compute-calibration-fit.h"
#include "input-error.h"
#include "json-read.h"
#include "shared-corpus.h"

#include <gtest/gtest.h>

#include <cmath>
#include <iostream>

namespace fabricsim
{
namespace
{

const HardwareSpec kH100 = HardwareSpec::Preset("H100");

CalibrationCurve
TwoPointCurve()
{
    CalibrationCurve c;
    c.points.push_back({2, 1000, 0.2, 0.9, 0, 0});
    c.points.push_back({6, 3000, 0.6, 0.5, 0, 0});
    return c;
}

TEST(ComputeCalibration, CurveIsLinearInLog2SizeAndHoldsItsEnds)
{
    const CalibrationCurve c = TwoPointCurve();
    // size 16 = 2^4: halfway between the points.
    const CalibrationPoint mid = c.At(16);
    EXPECT_NEAR(mid.overheadNs, 2000, 1e-9);
    EXPECT_NEAR(mid.etaCompute, 0.4, 1e-12);
    EXPECT_NEAR(mid.etaMemory, 0.7, 1e-12);
    // size 8 = 2^3: a quarter of the way.
    EXPECT_NEAR(c.At(8).etaCompute, 0.3, 1e-12);
    // Outside, the end points hold.
    EXPECT_EQ(c.At(1).etaCompute, 0.2);
    EXPECT_EQ(c.At(0).etaCompute, 0.2);
    EXPECT_EQ(c.At(1e12).etaMemory, 0.5);
}

TEST(ComputeCalibration, CostIsOverheadPlusTheSlowerTermAtTheTargetsPeaks)
{
    ComputeOp op;
    op.flops = 2e12;
    op.weightBytes = 1e9;
    const CalibrationCurve c = TwoPointCurve();
    ComputeCalibration::Cost(kH100, c, 4, DType::Bf16, op);
    // 2^2: 1 us + max(2e12 / (989e12 x 0.2), 1e9 / (3.35e12 x 0.9)) = 1 us + 10.11 ms.
    EXPECT_NEAR(op.timeNs, 1000 + 2e12 / (989e12 * 0.2) * 1e9, 1e-3);
    EXPECT_FALSE(op.MemoryBound());
    // On H200 the memory term is 3.35 / 4.8 of H100's; the compute term is the same.
    ComputeOp op2;
    op2.weightBytes = 1e9;
    ComputeCalibration::Cost(HardwareSpec::Preset("H200"), c, 4, DType::Bf16, op2);
    EXPECT_NEAR(op2.timeNs, 1000 + 1e9 / (4.8e12 * 0.9) * 1e9, 1e-3);
}

TEST(ComputeCalibration, OnAnotherGpuOnlyTheNominalRatePartOfTheMemoryTermCarries)
{
    CalibrationCurve c;
    c.points.push_back({0, 2000, 0.7, 0.8, 0, 0});
    c.points.push_back({10, 2000, 0.7, 1.25, 0, 0});
    c.fitHbmBwBytesPerSec = kH100.hbmBwBytesPerSec;
    c.fitSms = kH100.sms;
    const double bytes = 1e9;
    auto memoryNs = [&](const HardwareSpec& hw, double size)
    {
        ComputeOp op;
        op.weightBytes = bytes;
        ComputeCalibration::Cost(hw, c, size, DType::Bf16, op);
        EXPECT_NEAR(op.timeNs, 2000 + op.memoryNs, 1e-6);
        return op.memoryNs;
    };
    // On the fitted GPU: B / (0.8 x 3.35 TB/s), as without the split.
    EXPECT_NEAR(memoryNs(kH100, 1), bytes / (3.35e12 * 0.8) * 1e9, 1e-3);
    // H200 (same 132 SMs): the nominal part at 4.8 TB/s, the shortfall (1 / 0.8 - 1 of H100's
    // nominal time) as it was: 208.3 + 74.6 us, 0.76 x H100's 373.1 instead of 3.35 / 4.8.
    const double h200 = memoryNs(HardwareSpec::Preset("H200"), 1);
    EXPECT_NEAR(h200, (bytes / 4.8e12 + bytes * 0.25 / 3.35e12) * 1e9, 1e-3);
    EXPECT_NEAR(h200 / memoryNs(kH100, 1), 0.758, 1e-3);
    // 188 SMs keep more bytes in flight: the shortfall shrinks by 132 / 188.
    const HardwareSpec rtx = HardwareSpec::Preset("RTX-PRO-6000-Server");
    EXPECT_NEAR(
        memoryNs(rtx, 1), (bytes / 1.597e12 + bytes * 0.25 / 3.35e12 * 132 / 188) * 1e9, 1e-3);
    // At or above the nominal rate (bytes the L2 served) there is no shortfall to keep: the
    // efficiency carries as it is.
    EXPECT_NEAR(memoryNs(HardwareSpec::Preset("H200"), 1024), bytes / (4.8e12 * 1.25) * 1e9, 1e-3);
    // From a byte to a terabyte the split stays the closed form (linear in the bytes, finite).
    for (double b : {1.0, 1e12})
    {
        ComputeOp op;
        op.weightBytes = b;
        ComputeCalibration::Cost(HardwareSpec::Preset("H200"), c, 1, DType::Bf16, op);
        const double expected = (b / 4.8e12 + b * 0.25 / 3.35e12) * 1e9;
        EXPECT_NEAR(op.memoryNs, expected, 1e-9 * expected) << b;
    }
    // A curve whose fitted GPU is not known carries by efficiency alone.
    c.fitHbmBwBytesPerSec = 0;
    EXPECT_NEAR(memoryNs(HardwareSpec::Preset("H200"), 1), bytes / (4.8e12 * 0.8) * 1e9, 1e-3);
}

TEST(ComputeCalibration, CurvesKnowTheGpuTheyWereFittedOn)
{
    const nlohmann::json point
        = {{"log2_size", 0}, {"overhead_us", 1}, {"eta_compute", 0.7}, {"eta_memory", 0.8}};
    const nlohmann::json j = {{"format", "fabricsim-compute-calibration"},
                              {"version", 1},
                              {"fitted_on", {{"hardware", "H100"}}},
                              {"curves",
                               {{{"op", "gemm"}, {"dtype", "bfloat16"}, {"points", {point}}},
                                {{"op", "moe"},
                                 {"dtype", "bfloat16"},
                                 {"fitted_on", {{"hardware", "RTX-PRO-6000-Server"}}},
                                 {"points", {point}}},
                                {{"op", "moe"},
                                 {"dtype", "fp8"},
                                 {"fitted_on", {{"hardware", "a GPU of our own"}}},
                                 {"points", {point}}}}}};
    const ComputeCalibration cal = ComputeCalibration::FromJson(j, "cal.json");
    ASSERT_EQ(cal.curves.size(), 3u);
    EXPECT_EQ(cal.curves[0].fitHbmBwBytesPerSec, 3.35e12);
    EXPECT_EQ(cal.curves[0].fitSms, 132u);
    EXPECT_EQ(cal.curves[1].fitHbmBwBytesPerSec, 1.597e12);
    EXPECT_EQ(cal.curves[1].fitSms, 188u);
    EXPECT_EQ(cal.curves[2].fitHbmBwBytesPerSec, 0);
    // A fit knows its GPU without a name to look up.
    HardwareSpec own = kH100;
    own.name = "not a preset";
    own.hbmBwBytesPerSec = 2e12;
    KernelTable t;
    t.op = KernelOp::Gemm;
    t.device = "d";
    for (int i = 0; i < 4; ++i)
    {
        t.gemm.push_back({"bfloat16", 1, 4096, 4096, 0.02 + 0.001 * i});
    }
    CalibrationFitOptions fo;
    fo.minRows = 1;
    const ComputeCalibration fit = FitComputeCalibration({t}, own, fo);
    ASSERT_EQ(fit.curves.size(), 1u);
    EXPECT_EQ(fit.curves[0].fitHbmBwBytesPerSec, 2e12);
}

TEST(ComputeCalibration, FileRoundTripsAndBadFilesNameTheField)
{
    ComputeCalibration cal;
    cal.device = "NVIDIA H100 80GB HBM3";
    cal.hardware = "H100";
    CalibrationCurve c = TwoPointCurve();
    c.dtype = "bfloat16";
    cal.curves.push_back(c);
    const nlohmann::json j = cal.ToJson();
    const ComputeCalibration back = ComputeCalibration::FromJson(j, "c.json");
    ASSERT_EQ(back.curves.size(), 1u);
    EXPECT_EQ(back.curves[0].points.size(), 2u);
    EXPECT_DOUBLE_EQ(back.curves[0].points[1].overheadNs, 3000);
    EXPECT_EQ(back.ToJson(), j);
    ASSERT_NE(back.Find(KernelOp::Gemm, "bfloat16"), nullptr);
    EXPECT_EQ(back.Find(KernelOp::Gemm, "fp8"), nullptr);

    auto expectError = [](nlohmann::json bad, const std::string& field)
    {
        try
        {
            ComputeCalibration::FromJson(bad, "c.json");
            ADD_FAILURE() << "accepted " << bad.dump();
        }
        catch (const InputError& e)
        {
            EXPECT_EQ(e.File(), "c.json");
            EXPECT_NE(e.Field().find(field), std::string::npos) << e.what();
        }
    };
    nlohmann::json bad = j;
    bad["format"] = "something-else";
    expectError(bad, "format");
    bad = j;
    bad["curves"][0]["points"][1]["log2_size"] = 1;
    expectError(bad, "curves[0].points[1].log2_size");
    bad = j;
    bad["curves"][0]["points"][0]["eta_memory"] = 0;
    expectError(bad, "eta_memory");
    bad = j;
    bad["curves"][0]["op"] = "conv";
    expectError(bad, "curves[0].op");
    bad = j;
    bad["curves"].push_back(bad["curves"][0]);
    expectError(bad, "curves[1]");
    bad = j;
    bad["curves"][0]["points"] = nlohmann::json::array();
    expectError(bad, "points");
    // Levels of n: on every point or none, not decreasing, GEMM only.
    nlohmann::json byN = j;
    byN["curves"][0]["points"][0]["log2_n"] = 10;
    byN["curves"][0]["points"][1]["log2_n"] = 12;
    byN["curves"][0]["points"][1]["log2_size"] = 1; // a new level starts its own line
    EXPECT_TRUE(ComputeCalibration::FromJson(byN, "c.json").curves[0].byN);
    bad = byN;
    bad["curves"][0]["points"][1].erase("log2_n");
    expectError(bad, "curves[0].points[1].log2_n");
    bad = byN;
    bad["curves"][0]["points"][1]["log2_n"] = 9;
    expectError(bad, "curves[0].points[1].log2_n");
    bad = byN;
    bad["curves"][0]["op"] = "context_attention";
    expectError(bad, "curves[0].points[0].log2_n");
    // MoE curves may have levels (of inter / tp).
    bad["curves"][0]["op"] = "moe";
    EXPECT_TRUE(ComputeCalibration::FromJson(bad, "c.json").curves[0].byN);
}

/// A GEMM table whose times come from known parameters: overhead 4 us, eta_memory 0.8 and
/// eta_compute rising from 0.1 at m = 1 to 0.8 at m = 4096 (linear in log2 m).
KernelTable
ConstructedGemmTable(const HardwareSpec& hw)
{
    KernelTable t;
    t.file = "constructed.csv";
    t.op = KernelOp::Gemm;
    t.device = "constructed";
    for (uint64_t m = 1; m <= 4096; m *= 2)
    {
        for (uint64_t n : {512, 1024, 2048, 4096, 8192, 16384})
        {
            for (uint64_t k : {512, 1024, 4096, 8192})
            {
                GemmTime g{"bfloat16", m, n, k, 0};
                const ComputeOp op = KernelRooflineOp(hw, g);
                const double etaC = 0.1 + 0.7 * std::log2(double(m)) / 12;
                const double ns = 4000
                                  + std::max(op.flops / (989e12 * etaC) * 1e9,
                                             op.Bytes() / (3.35e12 * 0.8) * 1e9);
                g.ms = ns * 1e-6;
                t.gemm.push_back(g);
            }
        }
    }
    return t;
}

TEST(ComputeCalibration, FitRecoversTheParametersOfAConstructedTable)
{
    const KernelTable t = ConstructedGemmTable(kH100);
    CalibrationFitOptions byM;
    byM.gemmByN = false;
    const ComputeCalibration cal = FitComputeCalibration({t}, kH100, byM);
    ASSERT_EQ(cal.curves.size(), 1u);
    const CalibrationCurve& c = cal.curves[0];
    EXPECT_FALSE(c.byN);
    ASSERT_EQ(c.points.size(), 13u); // m = 2^0 ... 2^12
    for (const CalibrationPoint& p : c.points)
    {
        EXPECT_LT(p.fitMape, 0.5) << "m = 2^" << p.log2Size;
        EXPECT_NEAR(p.overheadNs, 4000, 200) << "m = 2^" << p.log2Size;
        if (p.log2Size <= 8) // above, (almost) every row is compute-bound
        {
            EXPECT_NEAR(p.etaMemory, 0.8, 0.02) << "m = 2^" << p.log2Size;
        }
    }
    // Where the rows are compute-bound the fit finds the compute efficiency that made them.
    EXPECT_NEAR(c.points.back().etaCompute, 0.8, 0.02);
    EXPECT_NEAR(c.points[10].etaCompute, 0.1 + 0.7 * 10 / 12, 0.02);
    for (const KernelErrorClass& e : KernelErrors(t,
                                                  [&](const KernelTable&tt, size_t row)
                                                  { return CalibratedRowOp(cal, kH100, tt, row); }))
    {
        EXPECT_LT(e.mape, 0.5);
    }
    // Fitted on even rows only, the odd ones (never seen) come out as well.
    CalibrationFitOptions even;
    even.use = [](size_t row)
    {
        return row % 2 == 0;
    };
    const ComputeCalibration half = FitComputeCalibration({t}, kH100, even);
    for (const KernelErrorClass& e : KernelErrors(
             t,
             [&](const KernelTable&tt, size_t row)
             { return CalibratedRowOp(half, kH100, tt, row); },
             [](size_t row) { return row % 2 == 1; }))
    {
        EXPECT_LT(e.mape, 1.0);
    }
}

TEST(ComputeCalibration, GemmLinesPerNLevelFollowAnEfficiencyThatDependsOnN)
{
    // Overhead 3 us, eta_memory 0.7, eta_compute 0.2 at n = 512 rising to 0.8 at n = 16384
    // (linear in log2 n) whatever m: one line of m cannot hold it, a line per n level can.
    KernelTable t;
    t.file = "by-n.csv";
    t.op = KernelOp::Gemm;
    t.device = "constructed";
    auto etaC = [](uint64_t n)
    {
        return 0.2 + 0.6 * (std::log2(double(n)) - 9) / 5;
    };
    for (uint64_t n : {512, 1024, 2048, 4096, 8192, 16384})
    {
        for (uint64_t m = 256; m <= 8192; m *= 2)
        {
            for (uint64_t k : {1024, 2048, 4096, 8192})
            {
                GemmTime g{"bfloat16", m, n, k, 0};
                const ComputeOp op = KernelRooflineOp(kH100, g);
                g.ms = (3000
                        + std::max(op.flops / (989e12 * etaC(n)) * 1e9,
                                   op.Bytes() / (3.35e12 * 0.7) * 1e9))
                       * 1e-6;
                t.gemm.push_back(g);
            }
        }
    }
    const ComputeCalibration byN = FitComputeCalibration({t}, kH100);
    ASSERT_EQ(byN.curves.size(), 1u);
    const CalibrationCurve& c = byN.curves[0];
    EXPECT_TRUE(c.byN);
    ASSERT_EQ(c.points.size(), 36u); // 6 levels x m = 2^8 ... 2^13
    for (const CalibrationPoint& p : c.points)
    {
        // (Where every row is compute-bound and the bytes grow with k as the FLOPs do, a
        // memory-bound reading fits almost as well and the grid may settle near it.)
        EXPECT_LT(p.fitMape, 3.0) << p.log2N << " " << p.log2Size;
    }
    // The compute-bound end of each level finds that level's efficiency, and between levels
    // (n = 2^11.5) the parameters are linear in log2 n.
    EXPECT_NEAR(c.At(8192, 512).etaCompute, 0.2, 0.01);
    EXPECT_NEAR(c.At(8192, 16384).etaCompute, 0.8, 0.02);
    EXPECT_NEAR(c.At(8192, 1 << 20).etaCompute, c.At(8192, 16384).etaCompute, 1e-12);
    const double mid = std::pow(2, 11.5);
    EXPECT_NEAR(c.At(8192, mid).etaCompute,
                (c.At(8192, 2048).etaCompute + c.At(8192, 4096).etaCompute) / 2,
                1e-12);
    auto mape = [&](const ComputeCalibration& cal)
    {
        const auto e = KernelErrors(t,
                                    [&](const KernelTable& tt, size_t row)
                                    { return CalibratedRowOp(cal, kH100, tt, row); });
        return e.at(0).mape;
    };
    CalibrationFitOptions mOnly;
    mOnly.gemmByN = false;
    const double byMError = mape(FitComputeCalibration({t}, kH100, mOnly));
    EXPECT_LT(mape(byN), 0.5);
    EXPECT_GT(byMError, 10.0);
    // The file keeps the levels.
    const nlohmann::json j = byN.ToJson();
    EXPECT_EQ(j["curves"][0]["size"], "m by n");
    const ComputeCalibration back = ComputeCalibration::FromJson(j, "c.json");
    EXPECT_TRUE(back.curves[0].byN);
    EXPECT_EQ(back.ToJson(), j);
    EXPECT_DOUBLE_EQ(back.curves[0].At(3000, 3000).etaCompute, c.At(3000, 3000).etaCompute);
}

TEST(ComputeCalibration, MoeLinesPerWidthLevelFollowAnEfficiencyThatDependsOnTheWidth)
{
    // Fused MoE layers of 128 experts, top-8, hidden 2048, whose experts are 512 to 4096 wide:
    // overhead 20 us, eta_memory 0.3 for the narrowest rising to 0.8 for the widest (linear in
    // log2 width), eta_compute 0.5, at 1 to 4096 tokens.
    KernelTable t;
    t.file = "moe.csv";
    t.op = KernelOp::Moe;
    t.device = "constructed";
    auto etaM = [](double width)
    {
        return 0.3 + 0.5 * (std::log2(width) - 9) / 3;
    };
    for (uint32_t inter : {512u, 1024u, 2048u, 4096u})
    {
        for (uint32_t tp : {1u, 2u})
        {
            for (uint64_t tokens = 1; tokens <= 4096; tokens *= 2)
            {
                for (uint32_t ep : {1u, 2u, 4u, 8u})
                {
                    MoeTime m{"bfloat16", tokens, 2048, inter, 8, 128, tp, 1, "balanced", 0};
                    m.ep = ep;
                    if (tp > 1 && ep > 1)
                    {
                        continue; // TP or EP, as the tables hold them
                    }
                    const ComputeOp op = KernelRooflineOp(kH100, m);
                    const double width = double(inter) / tp;
                    m.ms = (20000
                            + std::max(op.flops / (989e12 * 0.5) * 1e9,
                                       op.Bytes() / (3.35e12 * etaM(width)) * 1e9))
                           * 1e-6;
                    t.moe.push_back(m);
                }
            }
        }
    }
    const ComputeCalibration byWidth = FitComputeCalibration({t}, kH100);
    ASSERT_EQ(byWidth.curves.size(), 1u);
    const CalibrationCurve& c = byWidth.curves[0];
    EXPECT_TRUE(c.byN);
    EXPECT_EQ(byWidth.ToJson()["curves"][0]["size"], "num_tokens by inter / tp");
    // Widths 512 to 4096 (four EP layouts and one TP 2 layout a size: 4-5 rows); 256 (512 over
    // TP 2) has one row a size, too few for a line of its own.
    EXPECT_EQ(c.points.front().log2N, 9);
    EXPECT_EQ(c.points.back().log2N, 12);
    // Where a level's rows are memory-bound it finds that width's efficiency.
    EXPECT_NEAR(c.At(1, 512).etaMemory, etaM(512), 0.02);
    EXPECT_NEAR(c.At(1, 4096).etaMemory, etaM(4096), 0.02);
    // On the widths it has lines for (a width below the first level reads that level's line).
    auto mape = [&](const ComputeCalibration& cal)
    {
        return KernelErrors(
                   t,
                   [&](const KernelTable& tt, size_t row)
                   { return CalibratedRowOp(cal, kH100, tt, row); },
                   [&](size_t row) { return KernelRowN(t, row) >= 512; })
            .at(0)
            .mape;
    };
    CalibrationFitOptions tokensOnly;
    tokensOnly.moeByWidth = false;
    EXPECT_LT(mape(byWidth), 1.0);
    EXPECT_GT(mape(FitComputeCalibration({t}, kH100, tokensOnly)), 10.0);
}

TEST(ComputeCalibration, FitsOfExtremeTablesReadBack)
{
    // The constructed table slowed 10^5 x (kernels of 0.4 s to minutes) and sped up 10^5 x
    // (tens of picoseconds): the fit stays finite and its file reads back as written.
    for (double scale : {1e5, 1e-5})
    {
        KernelTable t = ConstructedGemmTable(kH100);
        for (GemmTime& g : t.gemm)
        {
            g.ms *= scale;
        }
        const ComputeCalibration cal = FitComputeCalibration({t}, kH100);
        const nlohmann::json j = cal.ToJson();
        EXPECT_EQ(ComputeCalibration::FromJson(j, "c.json").ToJson(), j) << scale;
        for (const KernelErrorClass& e :
             KernelErrors(t,
                          [&](const KernelTable&tt, size_t row)
                          { return CalibratedRowOp(cal, kH100, tt, row); }))
        {
            EXPECT_TRUE(std::isfinite(e.mape)) << scale;
        }
    }
}

TEST(ComputeCalibration, FitRejectsTablesOfDifferentDevices)
{
    KernelTable a = ConstructedGemmTable(kH100);
    KernelTable b = a;
    b.device = "another";
    b.file = "b.csv";
    EXPECT_THROW(FitComputeCalibration({a, b}, kH100), InputError);
    EXPECT_THROW(FitComputeCalibration({}, kH100), InputError);
}

std::vector<KernelTable>
CorpusTables(const std::string& sys)
{
    std::vector<KernelTable> tables;
    for (const char* op : {"gemm", "context_attention", "generation_attention", "moe"})
    {
        const std::string path = test::SharedCorpusFile("compute/" + sys + "/" + sys
                                                        + "-vllm-0.24.0-" + op + ".csv.gz");
        if (path.empty())
        {
            return {};
        }
        tables.push_back(ReadKernelTable(path));
    }
    return tables;
}

ComputeCalibration
CorpusFit(const std::vector<KernelTable>& tables, const HardwareSpec& hw = kH100)
{
    CalibrationFitOptions half;
    half.use = CalibrationFitRow;
    ComputeCalibration cal = FitComputeCalibration(tables, hw, half);
    cal.rows = "the fixed pseudo-random half of each table's rows (CalibrationFitRow)";
    return cal;
}

TEST(ComputeCalibration, CorpusFitOnH100HeldOutOnItsOtherRowsAndOnH200)
{
    REQUIRE_SHARED_CORPUS(probe, "compute/h100_sxm/h100_sxm-vllm-0.24.0-gemm.csv.gz");
    const std::vector<KernelTable> h100 = CorpusTables("h100_sxm");
    const std::vector<KernelTable> h200 = CorpusTables("h200_sxm");
    ASSERT_EQ(h100.size(), 4u);
    ASSERT_EQ(h200.size(), 4u);
    const ComputeCalibration cal = CorpusFit(h100);
    const HardwareSpec h200Hw = HardwareSpec::Preset("H200");
    for (size_t i = 0; i < h100.size(); ++i)
    {
        const auto left = KernelErrors(
            h100[i],
            [&](const KernelTable& t, size_t row) { return CalibratedRowOp(cal, kH100, t, row); },
            [](size_t row) { return !CalibrationFitRow(row); });
        const auto base = KernelRooflineErrors(h100[i], kH100);
        const auto held = KernelErrors(h200[i],
                                       [&](const KernelTable& t, size_t row)
                                       { return CalibratedRowOp(cal, h200Hw, t, row); });
        const auto heldBase = KernelRooflineErrors(h200[i], h200Hw);
        ASSERT_EQ(left.size(), base.size());
        ASSERT_EQ(held.size(), heldBase.size());
        for (size_t c = 0; c < left.size(); ++c)
        {
            std::cout << "H100 left out " << ToJson(left[c]).dump() << "\nH200 held out "
                      << ToJson(held[c]).dump() << "\n";
            // On rows the fit never saw, the calibration removes most of the roofline's error
            // and leaves no large bias.
            EXPECT_LT(left[c].mape, base[c].mape / 2) << left[c].op << " " << left[c].dtype;
            EXPECT_LT(std::fabs(left[c].medianError), 6) << left[c].op << " " << left[c].dtype;
            // Carried to H200 by its peaks and bandwidth alone, it still beats the roofline.
            EXPECT_LT(held[c].mape, heldBase[c].mape / 2) << held[c].op << " " << held[c].dtype;
        }
    }
}

// Each shipped calibration of a corpus GPU is what scripts/fit-compute makes of its tables.
TEST(ComputeCalibration, ShippedH100AndH200CalibrationsAreTheCorpusFits)
{
    REQUIRE_SHARED_CORPUS(probe, "compute/h100_sxm/h100_sxm-vllm-0.24.0-gemm.csv.gz");
    for (const auto& [sys, preset] : {std::pair<std::string, std::string>{"h100", "H100"},
                                      std::pair<std::string, std::string>{"h200", "H200"}})
    {
        SCOPED_TRACE(sys);
        const std::string shipped = std::string(FABRICSIM_SOURCE_DIR) + "/scenarios/compute/" + sys
                                    + "-sxm-vllm-0.24.0.json";
        const nlohmann::json file = ComputeCalibration::Read(shipped).ToJson();
        const nlohmann::json fresh
            = CorpusFit(CorpusTables(sys + "_sxm"), HardwareSpec::Preset(preset)).ToJson();
        EXPECT_EQ(file["fitted_on"], fresh["fitted_on"]);
        ASSERT_EQ(file["curves"].size(), fresh["curves"].size());
        for (size_t i = 0; i < fresh["curves"].size(); ++i)
        {
            const auto& a = file["curves"][i];
            const auto& b = fresh["curves"][i];
            ASSERT_EQ(a["op"], b["op"]);
            ASSERT_EQ(a["dtype"], b["dtype"]);
            ASSERT_EQ(a["points"].size(), b["points"].size()) << a["op"] << " " << a["dtype"];
            for (size_t k = 0; k < a["points"].size(); ++k)
            {
                for (const char* f : {"log2_size", "overhead_us", "eta_compute", "eta_memory"})
                {
                    const double x = a["points"][k][f];
                    const double y = b["points"][k][f];
                    EXPECT_NEAR(x, y, 1e-6 * std::max(1.0, std::fabs(y)))
                        << a["op"] << " " << a["dtype"] << " point " << k << " " << f
                        << ": regenerate with scripts/fit-compute";
                }
            }
        }
    }
}

TEST(ComputeCalibration, ShippedRtxCalibrationPricesHeldOutKernelsMeasuredOnThatGpu)
{
    const std::string dir = std::string(FABRICSIM_SOURCE_DIR) + "/scenarios/compute/";
    const ComputeCalibration rtx
        = ComputeCalibration::Read(dir + "rtx-pro-6000-server-vllm-0.19.0.json");
    const ComputeCalibration h100 = ComputeCalibration::Read(dir + "h100-sxm-vllm-0.24.0.json");
    EXPECT_EQ(rtx.hardware, "RTX-PRO-6000-Server");
    // bf16 GEMMs and attention and the elementwise kernels (which the H100 tables do not time)
    // are fitted on the RTX PRO 6000; every other class is the H100 file's curve, marked as
    // fitted there.
    ASSERT_EQ(rtx.curves.size(), h100.curves.size() + 1);
    for (const CalibrationCurve& c : rtx.curves)
    {
        if (c.dtype == "bfloat16" && c.op != KernelOp::Moe)
        {
            EXPECT_TRUE(c.fittedOn.empty()) << KernelOpName(c.op);
            continue;
        }
        const CalibrationCurve* h = h100.Find(c.op, c.dtype);
        ASSERT_NE(h, nullptr) << c.dtype;
        EXPECT_EQ(c.fittedOn.at("hardware"), "H100") << c.dtype;
        ASSERT_EQ(c.points.size(), h->points.size());
        for (size_t i = 0; i < c.points.size(); ++i)
        {
            EXPECT_DOUBLE_EQ(c.points[i].etaMemory, h->points[i].etaMemory);
            EXPECT_DOUBLE_EQ(c.points[i].overheadNs, h->points[i].overheadNs);
        }
    }
    // Qwen3-32B's GEMMs at TP 2 (held out: the fit saw Llama-3.1-8B's), measured on the RTX PRO
    // 6000 Server Edition (LLMServingSim profiler/perf/RTXPRO6000, vLLM 0.19.0, us per call).
    const HardwareSpec gpu = HardwareSpec::Preset("RTX-PRO-6000-Server");
    struct Point
    {
        const char* name;
        uint64_t m, n, k;
        double measuredUs;
    };
    for (const Point& p : {Point{"qkv_proj", 1024, 5120, 5120, 151.91},
                           Point{"o_proj", 512, 5120, 4096, 69.78},
                           Point{"gate_up", 128, 25600, 5120, 206.17},
                           Point{"down", 2048, 5120, 12800, 706.09}})
    {
        KernelShape s;
        s.op = KernelOp::Gemm;
        s.m = p.m;
        s.n = p.n;
        s.k = p.k;
        auto price = [&](const ComputeCalibration& cal)
        {
            ComputeOp op = KernelShapeOp(gpu, s);
            ComputeCalibration::Cost(gpu,
                                     *cal.Find(KernelOp::Gemm, "bfloat16"),
                                     double(p.m),
                                     DType::Bf16,
                                     op,
                                     double(p.n));
            return op.timeNs / 1e3;
        };
        EXPECT_NEAR(price(rtx), p.measuredUs, 0.1 * p.measuredUs) << p.name;
        std::cout << p.name << " m " << p.m << ": measured " << p.measuredUs << " us, RTX fit "
                  << price(rtx) << ", H100 carried " << price(h100) << "\n";
    }
    // Its attention (32 query and 4 KV heads of 128 a rank): 64 decodes reading 1024 tokens
    // each, and one 1024-token prompt.
    KernelShape decode;
    decode.op = KernelOp::GenerationAttention;
    decode.batch = 64;
    decode.isl = 1;
    decode.cached = 1023;
    decode.heads = 32;
    decode.kvHeads = 4;
    decode.headDim = 128;
    KernelShape prompt = decode;
    prompt.op = KernelOp::ContextAttention;
    prompt.batch = 1;
    prompt.isl = 1024;
    prompt.cached = 0;
    for (const auto& [shape, measuredUs] :
         {std::pair<KernelShape, double>{decode, 125.42}, {prompt, 60.459}})
    {
        ComputeOp op = KernelShapeOp(gpu, shape);
        ComputeCalibration::Cost(
            gpu, *rtx.Find(shape.op, "bfloat16"), KernelShapeSize(shape), DType::Bf16, op);
        EXPECT_NEAR(op.timeNs / 1e3, measuredUs, 0.1 * measuredUs) << KernelOpName(shape.op);
    }
    // The same layer's memory-bound kernels (RMSNorm with the residual, SiLU-and-mul, rotary
    // on 32 q and 4 KV heads), summed, at a 128-token decode and a 2048-token prompt.
    for (const auto& [tokens, measuredUs] :
         {std::pair<double, double>{128, 3.32 + 3.22 + 2.88}, {2048, 20.43 + 85.19 + 11.89}})
    {
        double us = 0;
        for (double bytesPerToken : {4.0 * 5120 * 2, 3.0 * 12800 * 2, 2.0 * 36 * 128 * 2})
        {
            KernelShape s;
            s.op = KernelOp::Elementwise;
            s.tokens = uint64_t(tokens);
            s.bytes = tokens * bytesPerToken;
            ComputeOp op = KernelShapeOp(gpu, s);
            ComputeCalibration::Cost(
                gpu, *rtx.Find(KernelOp::Elementwise, "bfloat16"), s.bytes, DType::Bf16, op);
            us += op.timeNs / 1e3;
        }
        std::cout << "elementwise " << tokens << " tokens: measured " << measuredUs << " us, fit "
                  << us << "\n";
        EXPECT_NEAR(us, measuredUs, 0.15 * measuredUs) << tokens;
    }
}

} // namespace
} // namespace fabricsim
