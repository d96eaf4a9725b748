// The comparison of a serving benchmark with its replay: the frontend-cost fit on constructed
// residuals, figures by vLLM bench serve's names, and the oddities the data holds.
#include "benchmark-comparison.h"

#include <gtest/gtest.h>

#include <cmath>

using nlohmann::json;

TEST(FrontendFit, RecoversALineAndKeepsCostsNonNegative)
{
    // residual = 0.2 s + 50 us x ISL, exactly.
    const std::vector<double> isl = {1024, 2048, 4096, 8192};
    std::vector<double> y;
    for (double x : isl)
    {
        y.push_back(0.2 + 50e-6 * x);
    }
    fabricsim::FrontendFit f = fabricsim::FitFrontend(isl, y);
    EXPECT_NEAR(f.requestS, 0.2, 1e-12);
    EXPECT_NEAR(f.perTokenS, 50e-6, 1e-15);
    EXPECT_FALSE(f.constantOnly);

    // One input length: the mean residual as the request cost, no per-token cost.
    f = fabricsim::FitFrontend({512, 512}, {0.1, 0.3});
    EXPECT_TRUE(f.constantOnly);
    EXPECT_NEAR(f.requestS, 0.2, 1e-12);
    EXPECT_EQ(f.perTokenS, 0.0);

    // A falling line has no per-token cost: the request cost is the mean residual.
    f = fabricsim::FitFrontend({1000, 2000}, {0.4, 0.2});
    EXPECT_EQ(f.perTokenS, 0.0);
    EXPECT_NEAR(f.requestS, 0.3, 1e-12);
    // A line through a negative intercept: the slope through the origin, no request cost.
    f = fabricsim::FitFrontend({1000, 2000}, {0.05, 0.25});
    EXPECT_EQ(f.requestS, 0.0);
    EXPECT_NEAR(f.perTokenS, (1000 * 0.05 + 2000 * 0.25) / (1000.0 * 1000 + 2000.0 * 2000), 1e-15);
    // Residuals all negative (the engine alone is already slower): no cost at all.
    f = fabricsim::FitFrontend({1000, 2000}, {-0.1, -0.2});
    EXPECT_EQ(f.requestS, 0.0);
    EXPECT_EQ(f.perTokenS, 0.0);
}

TEST(BenchmarkComparison, FiguresByBenchServeNames)
{
    const json summary = {{"generation_tokens_per_s", 1500.0},
                          {"requests_per_s", 3.0},
                          {"prompt_tokens_per_s", 9000.0},
                          {"ttft_ms", {{"p50", 120.0}, {"mean", 130.0}, {"p99", 400.0}}},
                          {"e2e_ms", {{"p50", 2000.0}}}};
    EXPECT_EQ(fabricsim::SimulatedFigure(summary, "output_throughput"), 1500.0);
    EXPECT_EQ(fabricsim::SimulatedFigure(summary, "request_throughput"), 3.0);
    EXPECT_EQ(fabricsim::SimulatedFigure(summary, "median_ttft_ms"), 120.0);
    EXPECT_EQ(fabricsim::SimulatedFigure(summary, "p99_ttft_ms"), 400.0);
    EXPECT_EQ(fabricsim::SimulatedFigure(summary, "median_e2el_ms"), 2000.0);
    EXPECT_FALSE(fabricsim::SimulatedFigure(summary, "total_input_tokens").has_value());
    EXPECT_DOUBLE_EQ(fabricsim::FigureErrorPct(100.0, 110.0), 10.0);
    EXPECT_EQ(fabricsim::FigureErrorPct(0.0, 0.0), 0.0);
    EXPECT_TRUE(std::isinf(fabricsim::FigureErrorPct(0.0, 1.0)));
    EXPECT_EQ(fabricsim::MedianOf({3, 1, 2}), 2.0);
    EXPECT_EQ(fabricsim::MedianOf({4, 1, 2, 3}), 2.5);
    EXPECT_TRUE(std::isnan(fabricsim::MedianOf({})));
}

TEST(BenchmarkComparison, OdditiesOfASweepAreCountedByKind)
{
    // One sweep (same ISL, OSL, no tag) at C = 4, 8: TPOT and throughput fall from 4 to 8, C 4
    // has the higher median TTFT (a cold first run), and C 8's request rate x median E2E is 2
    // requests in flight, a quarter of C (skewed latencies).
    fabricsim::BenchmarkResult a;
    a.concurrency = 4;
    a.inputTokens = 1024;
    a.outputTokens = 128;
    a.measured = {{"median_tpot_ms", 20.0},
                  {"output_throughput", 1000.0},
                  {"median_ttft_ms", 300.0},
                  {"request_throughput", 2.0},
                  {"median_e2el_ms", 2000.0}};
    fabricsim::BenchmarkResult b = a;
    b.concurrency = 8;
    b.measured = {{"median_tpot_ms", 18.0},
                  {"output_throughput", 900.0},
                  {"median_ttft_ms", 200.0},
                  {"request_throughput", 1.0},
                  {"median_e2el_ms", 2000.0}};
    json counts;
    const std::vector<std::string> lines = fabricsim::BenchmarkOddities({&b, &a}, counts);
    EXPECT_EQ(counts["sweeps"], 1);
    EXPECT_EQ(counts["tpot_falls_with_c"], 1);
    EXPECT_EQ(counts["throughput_falls_with_c"], 1);
    EXPECT_EQ(counts["cold_first_point"], 1);
    EXPECT_EQ(counts["skewed_latencies"], 1); // C 4: 2 x 2 s = 4 in flight = C, not skewed
    EXPECT_EQ(lines.size(), 4u);
}
