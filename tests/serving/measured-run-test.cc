// Measured vLLM serving runs (../shared/corpus/serving/llmservingsim-vllm): the metrics computed
// from requests.jsonl in upstream's definitions reproduce the vLLM column of its summary.txt.
#include "input-error.h"
#include "measured-run.h"
#include "shared-corpus.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>

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

} // namespace
} // namespace fabricsim
