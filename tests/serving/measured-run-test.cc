// Measured vLLM serving runs (data/serving/llmservingsim-vllm): the metrics computed
// from requests.jsonl in upstream's definitions reproduce the vLLM column of its summary.txt.
#include "input-error.h"
#include "measured-run.h"
#include "serving-comparison.h"
#include "serving-simulation.h"
#include "shared-corpus.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace fabricsim
{
namespace
{

const char* const kRuns[] = {"Llama-3.1-8B", "Qwen3-32B", "Qwen3-30B-A3B-Instruct-2507"};

TEST(MeasuredRun, RequestLogsReproduceTheVllmColumnOfSummaryTxt)
{
    for (const char* run : kRuns)
    {
        const std::string dir = std::string("serving/llmservingsim-vllm/RTXPRO6000/") + run;
        REQUIRE_SHARED_CORPUS(requests, dir + "/vllm/requests.jsonl");
        REQUIRE_SHARED_CORPUS(summary, dir + "/validation/summary.txt");
        const std::vector<MeasuredRequest> reqs = ReadMeasuredRequests(requests);
        ASSERT_EQ(reqs.size(), 300u) << run;
        const ServingLatencies l = LatenciesOf(reqs);
        const auto figures = ReadUpstreamSummary(summary);
        EXPECT_EQ(figures.size(), 15u) << run;
        for (const auto& [name, fig] : figures)
        {
            const std::string kind = name.substr(0, name.find(' '));
            const std::string stat = name.substr(name.find(' ') + 1);
            const std::vector<double>& v = kind == "TTFT"   ? l.ttftMs
                                           : kind == "TPOT" ? l.tpotMs
                                                            : l.e2eMs;
            ASSERT_TRUE(kind == "TTFT" || kind == "TPOT" || kind == "Latency") << name;
            // summary.txt prints 0.1 ms: the computed value rounds to the printed one.
            EXPECT_NEAR(SummaryStatistic(v, stat), fig.measured, 0.05 + 1e-9) << run << " " << name;
        }
        EXPECT_GT(l.outputTokensPerSec, 0) << run;
    }
}

TEST(MeasuredRun, ThroughputAndBadLogs)
{
    const std::string dir = ::testing::TempDir();
    const std::string good = dir + "/measured-good.jsonl";
    std::ofstream(good) << "{\"input_toks\": 10, \"output_toks\": 5, \"queued_ts\": 100.0, "
                           "\"first_token_ts\": 100.5, \"last_token_ts\": 101.5}\n"
                           "{\"input_toks\": 20, \"output_toks\": 1, \"queued_ts\": 100.25, "
                           "\"first_token_ts\": 100.75, \"last_token_ts\": 100.75}\n";
    const ServingLatencies l = LatenciesOf(ReadMeasuredRequests(good));
    EXPECT_DOUBLE_EQ(l.ttftMs[0], 500);
    EXPECT_DOUBLE_EQ(l.tpotMs[0], 250); // 1 s over 4 gaps
    EXPECT_DOUBLE_EQ(l.tpotMs[1], 0);   // one token: max(1, 0) gaps
    EXPECT_DOUBLE_EQ(l.e2eMs[1], 500);
    EXPECT_DOUBLE_EQ(l.outputTokensPerSec, 6 / 1.5); // 6 tokens from 100.0 to 101.5
    EXPECT_DOUBLE_EQ(SummaryStatistic({1, 2, 3, 4}, "P50"), 2.5);
    EXPECT_DOUBLE_EQ(SummaryStatistic({1, 2, 3, 4}, "Median"), 2.5);
    EXPECT_THROW(SummaryStatistic({1}, "Pmax"), InputError);
    const std::string bad = dir + "/measured-bad.jsonl";
    std::ofstream(bad) << "{\"input_toks\": 10, \"output_toks\": 0, \"queued_ts\": 1, "
                          "\"first_token_ts\": 2, \"last_token_ts\": 3}\n";
    try
    {
        ReadMeasuredRequests(bad);
        FAIL() << "no error";
    }
    catch (const InputError& e)
    {
        EXPECT_EQ(e.Field(), "line 1.output_toks");
    }
    std::ofstream(bad) << "{\"input_toks\": 10, \"output_toks\": 2, \"queued_ts\": 5, "
                          "\"first_token_ts\": 2, \"last_token_ts\": 3}\n";
    EXPECT_THROW(ReadMeasuredRequests(bad), InputError);
}

// The engine takes a request only between steps, so queued_ts lags the arrival by up to a
// step: a replay's arrivals are the arrival_time offsets where every request has one.
TEST(MeasuredRun, ReplayArrivalsAreArrivalTimesWhereRecorded)
{
    const std::string dir = ::testing::TempDir();
    const std::string path = dir + "/measured-arrivals.jsonl";
    std::ofstream(path)
        << "{\"input_toks\": 10, \"output_toks\": 3, \"arrival_time\": 1777000000.5, "
           "\"queued_ts\": 50.0, \"scheduled_ts\": 50.0, \"first_token_ts\": 50.2, "
           "\"last_token_ts\": 50.6}\n"
           "{\"input_toks\": 20, \"output_toks\": 1, \"arrival_time\": 1777000000.55, "
           "\"queued_ts\": 50.08, \"scheduled_ts\": 50.3, \"first_token_ts\": 50.4, "
           "\"last_token_ts\": 50.4}\n";
    std::vector<MeasuredRequest> reqs = ReadMeasuredRequests(path);
    ASSERT_EQ(reqs.size(), 2u);
    EXPECT_DOUBLE_EQ(reqs[1].scheduledS, 50.3);
    std::vector<double> t = ReplayArrivals(reqs);
    EXPECT_DOUBLE_EQ(t[0], 0);
    EXPECT_NEAR(t[1], 0.05, 1e-6); // epoch seconds: 2e-7 s resolution at 1.8e9
    reqs[1].arrivalS = -1;         // one not recorded: the queued offsets for all
    t = ReplayArrivals(reqs);
    EXPECT_NEAR(t[1], 0.08, 1e-12);

    // Each request beside its replay, in the measured definitions: the replay's first request
    // was taken 1 ms after it arrived, scheduled at once and gave its tokens at 101 and 201 ms.
    ServingResult sim;
    RequestRecord a;
    a.id = 0;
    a.arrivalPs = 0;
    a.outputTokens = 3;
    a.queuedPs = 1000000000;
    a.scheduledPs = 1000000000;
    a.tokenPs = {101000000000, 151000000000, 201000000000};
    RequestRecord b; // not finished
    b.id = 1;
    b.arrivalPs = 50000000000;
    b.outputTokens = 1;
    sim.requests = {a, b};
    const std::string csv = PerRequestCsv(ReadMeasuredRequests(path), sim);
    std::istringstream lines(csv);
    std::string header, first, second;
    std::getline(lines, header);
    std::getline(lines, first);
    std::getline(lines, second);
    EXPECT_EQ(header,
              "line,input_tokens,output_tokens,arrival_s,measured_wait_ms,measured_ttft_ms,"
              "measured_tpot_ms,measured_e2e_ms,fabricsim_wait_ms,fabricsim_ttft_ms,"
              "fabricsim_tpot_ms,fabricsim_e2e_ms");
    EXPECT_EQ(first, "1,10,3,0.000000,0.000,200.000,200.000,600.000,0.000,100.000,50.000,200.000");
    EXPECT_EQ(second.substr(0, second.find(",,")), "2,20,1,0.050000,220.000,320.000,0.000,320.000");
    EXPECT_EQ(second.substr(second.find(",,")), ",,,,");

    std::ofstream(path)
        << "{\"input_toks\": 10, \"output_toks\": 3, \"queued_ts\": 50.0, "
           "\"scheduled_ts\": 49.0, \"first_token_ts\": 50.2, \"last_token_ts\": 50.6}\n";
    try
    {
        ReadMeasuredRequests(path);
        FAIL() << "no error";
    }
    catch (const InputError& e)
    {
        EXPECT_EQ(e.Field(), "line 1.scheduled_ts");
    }
}

} // namespace
} // namespace fabricsim
