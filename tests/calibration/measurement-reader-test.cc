#include "calibration-metrics.h"
#include "calibration-test-util.h"
#include "input-error.h"
#include "measurement-reader.h"

#include <cmath>

namespace fabricsim
{
namespace
{

TEST(Measurements, CorpusCsvIsReadInElementsAndMilliseconds)
{
    REQUIRE_SHARED_CORPUS(path, "measurements/nccl/h200_sxm-nccl-2.29.2.csv");
    MeasurementSet s = ReadMeasurements(path);
    ASSERT_EQ(s.collectives.size(), 504u);
    EXPECT_TRUE(s.moe.empty());
    // README anchor: H200 all_reduce, 8 GPUs, 134,217,728 half elements (256 MiB): 1.05263 ms,
    // bus bandwidth about 446 GB/s.
    bool found = false;
    for (const MeasuredPoint& p : s.collectives)
    {
        if (p.kind == CollectiveKind::kAllReduce && p.ranks == 8 && p.dtype == "half"
            && p.bytes == 268435456ULL)
        {
            found = true;
            EXPECT_NEAR(p.timeUs, 1052.63, 1e-9);
            EXPECT_EQ(p.device, "NVIDIA H200");
            PredictedPoint pp{p, p.timeUs};
            EXPECT_NEAR(pp.MeasuredBusBw(), 446.2, 0.1);
        }
        if (p.dtype == "int8")
        {
            EXPECT_GE(p.bytes, 512u); // int8: 1 byte per element, 512 .. 512 MiB
        }
    }
    EXPECT_TRUE(found);
}

TEST(Measurements, DeepEpTablesKeepTheirShapes)
{
    REQUIRE_SHARED_CORPUS(ll, "measurements/deepep/h200_sxm-wideep_deepep_ll_perf.csv");
    REQUIRE_SHARED_CORPUS(normal, "measurements/deepep/h200_sxm-wideep_deepep_normal_perf.csv");
    MeasurementSet a = ReadMeasurements(ll);
    MeasurementSet b = ReadMeasurements(normal);
    ASSERT_EQ(a.moe.size(), 176u);
    ASSERT_EQ(b.moe.size(), 2484u);
    bool anchor = false;
    for (const MoePoint& p : a.moe)
    {
        if (p.hidden == 7168 && p.experts == 256 && p.topk == 8 && p.tokens == 128)
        {
            anchor = true;
            EXPECT_NEAR(p.dispatchUs, 35.119, 1e-9);
            EXPECT_NEAR(p.combineUs, 67.745, 1e-9);
        }
    }
    EXPECT_TRUE(anchor);
    EXPECT_EQ(b.moe.front().mode, "normal");
    EXPECT_EQ(b.moe.front().sms, 4u);
}

TEST(Measurements, NcclTestsLogsGiveOutOfPlaceTimes)
{
    const std::string log
        = "# Collective test starting: all_gather_perf\n"
          "# nThread 1 nGpus 1 minBytes 1024 maxBytes 4096 step: 2(factor) warmup iters: 5 iters: "
          "20\n"
          "#\n# Using devices\n"
          "#  Rank  0 Group  0 Pid   1 on node device  0 [0x18] NVIDIA H100 80GB HBM3\n"
          "#  Rank  1 Group  0 Pid   2 on node device  1 [0x2a] NVIDIA H100 80GB HBM3\n"
          "#                                      out-of-place                       in-place\n"
          "#       size         count      type   redop    root     time   algbw   busbw #wrong    "
          " time   algbw   busbw #wrong\n"
          "        1024           128     float    none      -1    10.50    0.10    0.05      0    "
          "10.20    0.10    0.05      0\n"
          "        4096           512     float    none      -1    12.25    0.33    0.17      0    "
          "12.00    0.34    0.17    N/A\n"
          "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 0.11\n";
    std::vector<MeasuredPoint> p = ParseNcclTestsLog(log, "h100.log");
    ASSERT_EQ(p.size(), 2u);
    EXPECT_EQ(p[0].kind, CollectiveKind::kAllGather);
    EXPECT_EQ(p[0].ranks, 2u); // from the Rank lines
    EXPECT_EQ(p[1].bytes, 4096u);
    EXPECT_DOUBLE_EQ(p[1].timeUs, 12.25);
    EXPECT_EQ(p[0].device, "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(p[0].source, "h100.log:9");
    // Without the banner, the file name or a hint names the collective.
    const std::string bare = log.substr(log.find('\n') + 1);
    EXPECT_EQ(ParseNcclTestsLog(bare, "runs/reduce_scatter_perf.txt")[0].kind,
              CollectiveKind::kReduceScatter);
    EXPECT_EQ(ParseNcclTestsLog(bare, "x.txt", "alltoall")[0].kind, CollectiveKind::kAllToAll);
    EXPECT_THROW(ParseNcclTestsLog(bare, "x.txt"), fabricsim::InputError);
}

TEST(Measurements, MalformedRowsNameFileLineAndColumn)
{
    auto field = [](const std::string& text)
    {
        try
        {
            ParseMeasurementCsv(text, "m.csv");
        }
        catch (const fabricsim::InputError& e)
        {
            EXPECT_EQ(e.File(), "m.csv");
            return e.Field();
        }
        return std::string("no error");
    };
    const std::string head = "op_name,nccl_dtype,num_gpus,message_size,latency\n";
    EXPECT_EQ(field(head + "all_reduce,half,8,1024,0.01\n"), "no error");
    EXPECT_EQ(field(head + "all_reduce,half,8,1024\n"), "line 2");
    EXPECT_EQ(field(head + "all_reduce,half,8,1024,-1\n"), "line 2 latency");
    EXPECT_EQ(field(head + "all_reduce,half,8,1e3,0.1\n"), "line 2 message_size");
    EXPECT_EQ(field(head + "all_reduce,quad,8,1024,0.1\n"), "line 2 nccl_dtype");
    EXPECT_EQ(field(head + "gossip,half,8,1024,0.1\n"), "line 2 op_name");
    EXPECT_EQ(field("op_name,latency\nall_reduce,1\n"), "line 1");
    EXPECT_EQ(field(""), "line 1");
    // A DeepEP table without the times of its mode (a fuzzing finding: map::at escaped).
    EXPECT_EQ(field("op_name,hidden_size,num_token,num_topk,num_experts,dispatch_avg_t_us\nll,7168,"
                    "1,8,256,11.9\n"),
              "line 1");
    const std::string log = "# Collective test starting: all_reduce_perf\n     1024   256  float  "
                            "sum  -1  abc  0 0 0\n";
    try
    {
        ParseNcclTestsLog(log, "l.txt");
        FAIL();
    }
    catch (const fabricsim::InputError& e)
    {
        EXPECT_EQ(e.Field(), "line 2 time");
    }
}

TEST(Metrics, MapeWorstPointAndSizeRanges)
{
    MeasuredPoint a;
    a.bytes = 1024;
    a.timeUs = 10;
    a.ranks = 8;
    a.source = "a";
    MeasuredPoint b = a;
    b.bytes = 4 << 20;
    b.timeUs = 100;
    b.source = "b";
    std::vector<PredictedPoint> pts = {{a, 12}, {b, 95}};
    ErrorSummary s = Summarize(pts);
    EXPECT_EQ(s.points, 2u);
    EXPECT_DOUBLE_EQ(s.mape, 12.5);
    EXPECT_DOUBLE_EQ(s.bias, 7.5);
    EXPECT_DOUBLE_EQ(s.worstPct, 20);
    EXPECT_NE(s.worstAt.find("(a)"), std::string::npos);
    EXPECT_EQ(SizeRange(1024), "< 64 KiB");
    EXPECT_EQ(SizeRange(64 * 1024), "64 KiB - 1 MiB");
    EXPECT_EQ(SizeRange(1 << 20), ">= 1 MiB");
    nlohmann::json r = ErrorReport(pts);
    EXPECT_DOUBLE_EQ(r["by_size"][">= 1 MiB"]["mape_pct"].get<double>(), 5.0);
    EXPECT_EQ(r["by_ranks"]["8"]["points"].get<size_t>(), 2u);
    const std::string csv = PointsCsv(pts);
    EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 3);
}

} // namespace
} // namespace fabricsim
