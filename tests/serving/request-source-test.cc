// Request sources: Poisson arrivals and length distributions, trace files, determinism, errors.

#include "../unique-temp-path.h"
#include "inference-scenario.h"
#include "input-error.h"
#include "memory-limit.h"
#include "request-source.h"
#include "serving-memory.h"
#include "shared-corpus.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <numeric>

namespace fabricsim
{
namespace
{

using nlohmann::json;

RequestSpec
Spec(const json& j)
{
    return RequestSpec::FromJson(j, "s.json", "serving.requests", 42);
}

/// The field the InputError for spec \p j names, or "no error".
std::string
FieldOf(const json& j)
{
    try
    {
        Spec(j);
    }
    catch (const fabricsim::InputError& e)
    {
        return e.Field();
    }
    return "no error";
}

std::string
WriteTemp(const std::string& name, const std::string& text)
{
    std::string path = test::UniqueTempPath(name);
    std::ofstream(path) << text;
    return path;
}

TEST(RequestSource, PoissonGapsHaveTheRequestedMean)
{
    auto reqs = GenerateRequests(Spec(
        {{"rate_per_s", 20}, {"count", 20000}, {"prompt_tokens", 100}, {"output_tokens", 10}}));
    ASSERT_EQ(reqs.size(), 20000u);
    EXPECT_EQ(reqs[0].arrivalPs, 0);
    double meanGapS = double(reqs.back().arrivalPs) / 1e12 / 19999.0;
    EXPECT_NEAR(meanGapS, 0.05, 0.05 * 0.03);
    // Exponential gaps: the coefficient of variation is 1.
    double sum = 0;
    double sq = 0;
    for (size_t i = 1; i < reqs.size(); ++i)
    {
        double g = double(reqs[i].arrivalPs - reqs[i - 1].arrivalPs) / 1e12;
        sum += g;
        sq += g * g;
        ASSERT_GE(reqs[i].arrivalPs, reqs[i - 1].arrivalPs);
        EXPECT_EQ(reqs[i].id, i);
    }
    double mean = sum / 19999;
    double cv = std::sqrt(sq / 19999 - mean * mean) / mean;
    EXPECT_NEAR(cv, 1.0, 0.05);
}

TEST(RequestSource, SameSeedSameRequestsOtherSeedOtherRequests)
{
    json j = {{"rate_per_s", 5},
              {"count", 50},
              {"prompt_tokens", {{"dist", "lognormal"}, {"mean", 1000}, {"std", 500}}},
              {"output_tokens", {{"dist", "uniform"}, {"min", 10}, {"max", 300}}}};
    auto a = GenerateRequests(Spec(j));
    auto b = GenerateRequests(Spec(j));
    j["seed"] = 43;
    auto c = GenerateRequests(Spec(j));
    bool differ = false;
    for (size_t i = 0; i < a.size(); ++i)
    {
        EXPECT_EQ(a[i].arrivalPs, b[i].arrivalPs);
        EXPECT_EQ(a[i].promptTokens, b[i].promptTokens);
        EXPECT_EQ(a[i].outputTokens, b[i].outputTokens);
        differ = differ || a[i].promptTokens != c[i].promptTokens;
        EXPECT_GE(a[i].outputTokens, 10u);
        EXPECT_LE(a[i].outputTokens, 300u);
    }
    EXPECT_TRUE(differ);
}

TEST(RequestSource, LengthDistributionsHaveTheirMeans)
{
    SeededStream rng(1, 1);
    for (const json& d : {json{{"dist", "lognormal"}, {"mean", 800}, {"std", 400}},
                          json{{"dist", "normal"}, {"mean", 300}, {"std", 30}},
                          json{{"dist", "exponential"}, {"mean", 200}},
                          json{{"dist", "uniform"}, {"min", 100}, {"max", 301}}})
    {
        LengthDistribution ld = LengthDistribution::FromJson(d, "s.json", "p");
        double sum = 0;
        for (int i = 0; i < 40000; ++i)
        {
            sum += double(ld.Sample(rng));
        }
        EXPECT_NEAR(sum / 40000, ld.Mean(), 0.03 * ld.Mean()) << d.dump();
    }
    LengthDistribution clamp = LengthDistribution::FromJson(
        {{"dist", "normal"}, {"mean", 10}, {"std", 100}, {"max", 50}}, "s.json", "p");
    for (int i = 0; i < 1000; ++i)
    {
        uint64_t x = clamp.Sample(rng);
        EXPECT_GE(x, 1u);
        EXPECT_LE(x, 50u);
    }
}

TEST(RequestSource, ZeroRateIsAnOfflineBatchAtTimeZero)
{
    auto reqs = GenerateRequests(
        Spec({{"rate_per_s", 0}, {"count", 5}, {"prompt_tokens", 7}, {"output_tokens", 3}}));
    for (const auto& r : reqs)
    {
        EXPECT_EQ(r.arrivalPs, 0);
        EXPECT_EQ(r.promptTokens, 7u);
    }
}

// A benchmark client's fields: warm-up requests come first, each phase's times from 0, and the
// measured requests are the ones an unwarmed spec would draw after the warm-up's draws.
TEST(RequestSource, WarmupRequestsComeFirstWithTheirOwnClock)
{
    const json base = {{"rate_per_s", 4},
                       {"count", 6},
                       {"prompt_tokens", {{"dist", "uniform"}, {"min", 10}, {"max", 1000}}},
                       {"output_tokens", 16},
                       {"concurrency", 2}};
    json warm = base;
    warm["warmup"] = 3;
    const RequestSpec s = Spec(warm);
    EXPECT_EQ(s.concurrency, 2u);
    EXPECT_EQ(s.warmup, 3u);
    const std::vector<Request> r = GenerateRequests(s);
    ASSERT_EQ(r.size(), 9u);
    EXPECT_EQ(r[0].arrivalPs, 0);
    EXPECT_EQ(r[3].arrivalPs, 0); // the measured phase's clock
    EXPECT_GT(r[4].arrivalPs, 0);
    for (size_t i = 0; i < r.size(); ++i)
    {
        EXPECT_EQ(r[i].id, i);
    }
    json nine = base;
    nine["count"] = 9;
    const std::vector<Request> plain = GenerateRequests(Spec(nine));
    for (size_t i = 0; i < r.size(); ++i)
    {
        EXPECT_EQ(r[i].promptTokens, plain[i].promptTokens) << i;
    }
    EXPECT_EQ(FieldOf({{"rate_per_s", 0},
                       {"count", 1},
                       {"prompt_tokens", 1},
                       {"output_tokens", 1},
                       {"concurrency", 0}}),
              "serving.requests.concurrency");
    EXPECT_EQ(FieldOf({{"rate_per_s", 0},
                       {"count", 1},
                       {"prompt_tokens", 1},
                       {"output_tokens", 1},
                       {"warmup", -1}}),
              "serving.requests.warmup");
}

TEST(RequestSource, ReadsCsvAndJsonLinesTraces)
{
    std::string csv = WriteTemp("trace.csv",
                                "# a comment\n"
                                "arrival_s,prompt_tokens,output_tokens,images\n"
                                "0.0,100,20,0\n"
                                "0.25,2000,5,1\n"
                                "\n"
                                "1.5,30,1,0\n");
    auto a = LoadRequestTrace(csv);
    ASSERT_EQ(a.size(), 3u);
    EXPECT_EQ(a[1].arrivalPs, 250000000000);
    EXPECT_EQ(a[1].promptTokens, 2000u);
    EXPECT_EQ(a[1].outputTokens, 5u);
    EXPECT_EQ(a[1].images, 1.0);
    EXPECT_EQ(a[2].id, 2u);

    std::string jl = WriteTemp("trace.jsonl",
                               "{\"arrival_ms\": 10, \"input_tokens\": 64, \"output_len\": 8}\n"
                               "{\"arrival_ms\": 20, \"input_tokens\": 32, \"output_len\": 4, "
                               "\"audio_seconds\": 2.5}\n");
    auto b = LoadRequestTrace(jl, 2.0);
    ASSERT_EQ(b.size(), 2u);
    EXPECT_EQ(b[0].arrivalPs, 20000000000); // time_scale 2
    EXPECT_EQ(b[1].promptTokens, 32u);
    EXPECT_EQ(b[1].audioSeconds, 2.5);

    RequestSpec s = Spec({{"trace", jl}, {"limit", 1}});
    EXPECT_EQ(GenerateRequests(s).size(), 1u);
    // "limit" stops reading: a bad line past it is never reached.
    std::string tail
        = WriteTemp("tail.csv", "arrival_s,prompt_tokens,output_tokens\n0,1,1\n1,1,1\nnot,a,row\n");
    EXPECT_EQ(LoadRequestTrace(tail, 1, 2).size(), 2u);
    EXPECT_THROW(LoadRequestTrace(tail), fabricsim::InputError);
}

// A trace is checked against the memory limit as it is read, at the line where its requests stop
// fitting (a billion-line trace once grew until the machine's memory ran out): 10^12 output
// tokens hold 32 TB of token timestamps alone.
TEST(RequestSource, TraceBeyondTheMemoryLimitStopsAtItsLine)
{
    const double limit = double(MemoryLimitBytes());
    ASSERT_LT(limit, 1e13);
    std::string huge = WriteTemp(
        "huge.csv", "arrival_s,prompt_tokens,output_tokens\n0,1,1\n1,1,1000000000000\n2,1,1\n");
    try
    {
        LoadRequestTrace(huge);
        FAIL() << "no error";
    }
    catch (const fabricsim::InputError& e)
    {
        EXPECT_EQ(e.Field(), "line 3");
        EXPECT_NE(std::string(e.what()).find("about 32.0 TB"), std::string::npos) << e.what();
    }
    // The closed form: per request, per output token and per step of max_num_seqs sequences.
    EXPECT_DOUBLE_EQ(EstimateServingBytes(1000, 20000, 4),
                     1000 * 320.0 + 20000 * 32.0 + 5000 * 3072.0);
    EXPECT_DOUBLE_EQ(EstimateServingBytes(1, 0, 0), 320.0);
}

// A synthetic source is estimated before a request is generated, naming "count".
TEST(RequestSource, CountBeyondTheMemoryLimitIsRefusedUpFront)
{
    json sc
        = {{"model", "Llama-3-8B"},
           {"hardware", "H100"},
           {"serving",
            {{"requests",
              {{"rate_per_s", 1e6}, {"count", 1e9}, {"prompt_tokens", 8}, {"output_tokens", 8}}},
             {"batching", {{"max_num_seqs", 16}}}}}};
    try
    {
        InferenceScenario::FromJson(sc, "s.json");
        FAIL() << "no error";
    }
    catch (const fabricsim::InputError& e)
    {
        EXPECT_EQ(e.Field(), "serving.requests.count");
        // 1e9 x 320 B + 8e9 x 32 B + 5e8 steps x 3072 B = 2.11 TB
        EXPECT_NE(std::string(e.what()).find("about 2.11 TB"), std::string::npos) << e.what();
    }
    sc["serving"]["requests"]["count"] = 1000;
    EXPECT_EQ(InferenceScenario::FromJson(sc, "s.json").requests.count, 1000u);
}

TEST(RequestSource, BadTracesNameTheLine)
{
    std::string missing = WriteTemp("bad1.csv", "arrival_s,prompt_tokens\n0,10\n");
    try
    {
        LoadRequestTrace(missing);
        FAIL() << "no error";
    }
    catch (const fabricsim::InputError& e)
    {
        EXPECT_EQ(e.Field(), "line 2");
        EXPECT_NE(std::string(e.what()).find("output_tokens"), std::string::npos) << e.what();
    }
    std::string back
        = WriteTemp("bad2.csv", "arrival_s,prompt_tokens,output_tokens\n1,1,1\n0.5,1,1\n");
    EXPECT_THROW(LoadRequestTrace(back), fabricsim::InputError);
    std::string frac = WriteTemp("bad3.csv", "arrival_s,prompt_tokens,output_tokens\n0,1.5,1\n");
    try
    {
        LoadRequestTrace(frac);
        FAIL() << "no error";
    }
    catch (const fabricsim::InputError& e)
    {
        EXPECT_EQ(e.Field(), "line 2.prompt_tokens");
    }
    std::string json = WriteTemp(
        "bad4.jsonl", "{\"arrival_s\": 0, \"prompt_tokens\": 1, \"output_tokens\": 1}\n{oops\n");
    EXPECT_THROW(LoadRequestTrace(json), fabricsim::InputError);
    EXPECT_THROW(LoadRequestTrace(::testing::TempDir() + "does-not-exist.csv"),
                 fabricsim::InputError);
}

TEST(RequestSource, ArrivalsPastTheClockAreRefusedNotWrapped)
{
    // rate_per_s 1e-300 once put the second arrival at 1e300 s, which wrapped int64 ps into a
    // negative arrival time (and a negative TTFT).
    for (double rate : {1e-300, 1e-9, 1e-6})
    {
        try
        {
            Spec({{"rate_per_s", rate}, {"count", 8}, {"prompt_tokens", 1}, {"output_tokens", 1}});
            ADD_FAILURE() << "rate " << rate << " accepted";
        }
        catch (const fabricsim::InputError& e)
        {
            EXPECT_EQ(e.Field(), "serving.requests.rate_per_s");
            EXPECT_NE(e.Expected().find("8 arrivals fit 106 days"), std::string::npos) << e.what();
        }
    }
    // The slowest accepted rate keeps every arrival a non-negative, non-decreasing time.
    for (const char* arrival : {"uniform", "poisson"})
    {
        const double rate = 7 / (9223372.036854775807 / 4);
        auto reqs = GenerateRequests(Spec({{"rate_per_s", rate * 1.000001},
                                           {"count", 8},
                                           {"arrival", arrival},
                                           {"prompt_tokens", 1},
                                           {"output_tokens", 1}}));
        ASSERT_EQ(reqs.size(), 8u);
        for (size_t i = 1; i < reqs.size(); ++i)
        {
            EXPECT_GE(reqs[i].arrivalPs, reqs[i - 1].arrivalPs) << arrival << " " << i;
        }
        if (std::string(arrival) == "uniform")
        {
            EXPECT_NEAR(double(reqs.back().arrivalPs), 9223372.036854775807e12 / 4, 1e13);
        }
    }
    // A trace arrival past 106 days (after time_scale) is named by its line.
    std::string far
        = WriteTemp("far.csv", "arrival_s,prompt_tokens,output_tokens\n0,1,1\n1e10,1,1\n");
    try
    {
        LoadRequestTrace(far);
        FAIL() << "no error";
    }
    catch (const fabricsim::InputError& e)
    {
        EXPECT_EQ(e.Field(), "line 3");
    }
    std::string scaled
        = WriteTemp("scaled.csv", "arrival_s,prompt_tokens,output_tokens\n5e6,1,1\n");
    EXPECT_THROW(LoadRequestTrace(scaled, 2.0), fabricsim::InputError);
    EXPECT_EQ(LoadRequestTrace(scaled, 1.0)[0].arrivalPs, 5000000000000000000);
}

TEST(RequestSource, BadSpecsNameTheField)
{
    EXPECT_EQ(FieldOf({{"count", 3}, {"prompt_tokens", 1}, {"output_tokens", 1}}),
              "serving.requests.rate_per_s");
    EXPECT_EQ(FieldOf({{"rate_per_s", 1}, {"count", 3}, {"prompt_tokens", 1}}),
              "serving.requests.output_tokens");
    EXPECT_EQ(FieldOf({{"rate_per_s", 1},
                       {"count", 3},
                       {"prompt_tokens", {{"dist", "zipf"}}},
                       {"output_tokens", 1}}),
              "serving.requests.prompt_tokens.dist");
    EXPECT_EQ(
        FieldOf({{"rate_per_s", -1}, {"count", 3}, {"prompt_tokens", 1}, {"output_tokens", 1}}),
        "serving.requests.rate_per_s");
    EXPECT_EQ(FieldOf({{"rate_per_s", 1},
                       {"count", 3},
                       {"prompt_tokens", 1},
                       {"output_tokens", 1},
                       {"prompt_len", 5}}),
              "serving.requests.prompt_len");
    EXPECT_EQ(FieldOf({{"trace", "x.csv"}, {"count", 3}}), "serving.requests.count");
    EXPECT_EQ(FieldOf({{"rate_per_s", 1},
                       {"count", 3},
                       {"prompt_tokens", {{"dist", "uniform"}, {"min", 10}, {"max", 5}}},
                       {"output_tokens", 1}}),
              "serving.requests.prompt_tokens.max");
}

// Token counts at their maximum (10^12) are accepted and beyond it refused, wherever they are
// given: 2^64 - 1 prompt tokens once passed the KV-cache check, prompt + output wrapping to 1.
TEST(RequestSource, TokenCountsStopAtTheirMaximum)
{
    const uint64_t max = LengthDistribution::kMaxTokens;
    auto reqs = GenerateRequests(
        Spec({{"rate_per_s", 0}, {"count", 2}, {"prompt_tokens", max}, {"output_tokens", max}}));
    ASSERT_EQ(reqs.size(), 2u);
    EXPECT_EQ(reqs[0].promptTokens, max);
    EXPECT_EQ(reqs[1].outputTokens, max);
    const json base = {{"rate_per_s", 1}, {"count", 3}, {"output_tokens", 1}};
    json j = base;
    j["prompt_tokens"] = std::numeric_limits<uint64_t>::max();
    EXPECT_EQ(FieldOf(j), "serving.requests.prompt_tokens");
    j["prompt_tokens"] = max + 1;
    EXPECT_EQ(FieldOf(j), "serving.requests.prompt_tokens");
    j["prompt_tokens"] = 0;
    EXPECT_EQ(FieldOf(j), "serving.requests.prompt_tokens"); // once "n"
    j["prompt_tokens"] = {{"dist", "constant"}, {"value", max + 1}};
    EXPECT_EQ(FieldOf(j), "serving.requests.prompt_tokens.value");
    j["prompt_tokens"] = {{"dist", "exponential"}, {"mean", 10}, {"max", max + 1}};
    EXPECT_EQ(FieldOf(j), "serving.requests.prompt_tokens.max");
    std::string big
        = WriteTemp("big.csv", "arrival_s,prompt_tokens,output_tokens\n0,1,1\n0,1,1000000000001\n");
    try
    {
        LoadRequestTrace(big);
        FAIL() << "no error";
    }
    catch (const fabricsim::InputError& e)
    {
        EXPECT_EQ(e.Field(), "line 3.output_tokens");
    }
}

} // namespace
} // namespace fabricsim

namespace fabricsim
{
namespace
{

// vLLM's requests.jsonl (the measured serving runs of data/serving/llmservingsim-vllm): input_toks,
// output_toks and arrival_time in wall-clock epoch seconds, rebased to the first request. An
// epoch second in picoseconds (1.8e21) once overflowed 64 bits; now the first arrives at 0.
TEST(RequestSource, ReadsVllmRequestLogsRebasedToTheFirstArrival)
{
    REQUIRE_SHARED_CORPUS(path,
                          "serving/llmservingsim-vllm/RTXPRO6000/Llama-3.1-8B/vllm/requests.jsonl");
    const auto reqs = LoadRequestTrace(path);
    ASSERT_EQ(reqs.size(), 300u);
    EXPECT_EQ(reqs[0].arrivalPs, 0);
    EXPECT_EQ(reqs[0].promptTokens, 2358u);
    EXPECT_EQ(reqs[0].outputTokens, 531u);
    EXPECT_EQ(reqs[1].promptTokens, 1034u);
    // 1777142838.6237123 - 1777142838.338653 s: doubles near 1.8e9 are 0.24 us apart.
    EXPECT_NEAR(double(reqs[1].arrivalPs), 0.2850593e12, 0.5e6);
    EXPECT_NEAR(double(reqs.back().arrivalPs), 29.121193e12, 0.5e6);
    double in = 0;
    double out = 0;
    for (const Request& r : reqs)
    {
        in += double(r.promptTokens);
        out += double(r.outputTokens);
    }
    EXPECT_EQ(in, 257239);  // mean 857.46 (the corpus README: 857)
    EXPECT_EQ(out, 195753); // mean 652.51 (653)
    // The same rebasing for any trace whose first arrival is past the clock's 106 days; a
    // time_scale applies to the offsets.
    const std::string epoch
        = WriteTemp("epoch.jsonl",
                    "{\"arrival_time\": 1777142838.5, \"input_toks\": 4, \"output_toks\": 2}\n"
                    "{\"arrival_time\": 1777142840.5, \"input_toks\": 4, \"output_toks\": 2}\n");
    const auto e = LoadRequestTrace(epoch, 0.5);
    EXPECT_EQ(e[0].arrivalPs, 0);
    EXPECT_EQ(e[1].arrivalPs, 1000000000000);
}

} // namespace
} // namespace fabricsim
