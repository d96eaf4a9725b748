// End-to-end serving runs on the fake Collective API: request flow, preemption, disaggregated
// KV transfer, placement and bandwidth effects, determinism, bad input.

#include "input-error.h"
#include "kv-cache.h"
#include "serving-test-util.h"
#include "unit-conversions.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace fabricsim
{
namespace
{

using nlohmann::json;

double
Exposed(const ServingResult& r, std::initializer_list<const char*> cats)
{
    double ms = 0;
    json b = r.Breakdown()["exposed_comm_ms"];
    for (const char* c : cats)
    {
        ms += b.value(c, 0.0);
    }
    return ms;
}

TEST(ServingSimulation, EveryRequestGetsItsTokensInOrder)
{
    ServingResult r = RunOnFake(MakeScenario());
    ASSERT_EQ(r.requests.size(), 10u);
    EXPECT_TRUE(r.incomplete.empty());
    for (const auto& q : r.requests)
    {
        ASSERT_TRUE(q.Finished()) << q.id;
        EXPECT_EQ(q.tokenPs.size(), 32u);
        EXPECT_GT(q.tokenPs.front(), q.arrivalPs);
        for (size_t i = 1; i < q.tokenPs.size(); ++i)
        {
            EXPECT_GT(q.tokenPs[i], q.tokenPs[i - 1]);
        }
    }
    // Steps never overlap on one engine and never start before an arrival.
    for (size_t i = 1; i < r.steps.size(); ++i)
    {
        EXPECT_GE(r.steps[i].launchPs, r.steps[i - 1].endPs);
    }
    json j = r.ToJson();
    EXPECT_EQ(j["requests"]["completed"], 10);
    EXPECT_GT(j["throughput_tokens_per_s"].get<double>(), 0);
    EXPECT_GT(j["cost_per_million_tokens"].get<double>(), 0);
    EXPECT_GT(j["mbu"].get<double>(), 0);
    EXPECT_LT(j["mbu"].get<double>(), 1);
    EXPECT_EQ(j["per_step"].size(), r.steps.size());
}

// A prompt alone: TTFT is one prefill step (plus the scheduling instant), TPOT one decode step.
TEST(ServingSimulation, SingleRequestLatencyIsItsSteps)
{
    ServingResult r = RunOnFake(
        MakeScenario({{"serving", {{"requests", {{"count", 1}, {"output_tokens", 4}}}}}}));
    ASSERT_EQ(r.steps.size(), 4u);
    EXPECT_EQ(r.steps[0].prefillTokens, 512u);
    EXPECT_EQ(r.steps[1].decodeTokens, 1u);
    EXPECT_DOUBLE_EQ(r.requests[0].TtftMs(), double(r.steps[0].DurationPs()) / 1e9);
    double decode
        = double(r.steps[1].DurationPs() + r.steps[2].DurationPs() + r.steps[3].DurationPs()) / 3
          / 1e9;
    EXPECT_NEAR(r.requests[0].TpotMs(), decode, 1e-9);
    // Decode of an 8B model at TP 1 streams 16 GB of weights: about 5.6 ms on H100 at 85%,
    // after the engine's 2.5 ms + 10 us of host work for its one sequence.
    EXPECT_NEAR(decode, 16.06e9 / (3.35e12 * 0.85) * 1e3 + 2.51, 0.1 * decode);
}

// A benchmark client of concurrency 1 sends the next request when the last one finishes: every
// request runs alone, so each takes the lone request's TTFT and E2E, back to back, and the
// throughput is its output over that E2E.
TEST(ServingSimulation, ClosedLoopOfOneRunsRequestsBackToBack)
{
    const ServingResult lone = RunOnFake(MakeScenario(
        {{"serving", {{"requests", {{"rate_per_s", 0}, {"count", 1}, {"output_tokens", 4}}}}}}));
    const ServingResult r = RunOnFake(MakeScenario(
        {{"serving",
          {{"requests",
            {{"rate_per_s", 0}, {"count", 5}, {"output_tokens", 4}, {"concurrency", 1}}}}}}));
    ASSERT_EQ(r.requests.size(), 5u);
    ASSERT_TRUE(r.incomplete.empty());
    const RequestRecord& one = lone.requests[0];
    const double e2e = double(one.tokenPs.back() - one.arrivalPs);
    for (size_t i = 0; i < r.requests.size(); ++i)
    {
        const RequestRecord& q = r.requests[i];
        EXPECT_NEAR(q.TtftMs(), one.TtftMs(), 1e-6) << i;
        EXPECT_NEAR(double(q.tokenPs.back() - q.arrivalPs), e2e, 1.0) << i;
        if (i > 0)
        {
            EXPECT_EQ(q.arrivalPs, r.requests[i - 1].tokenPs.back()) << i;
        }
    }
    EXPECT_NEAR(r.ToJson()["throughput_tokens_per_s"].get<double>(),
                5 * (512 + 4) / (5 * e2e / 1e12),
                1e-6 * 5 * (512 + 4) / (5 * e2e / 1e12));
}

// Concurrency C with C requests is the offline batch (all sent at 0); with more, no more than C
// are ever in flight and the next goes out at the instant one finishes.
TEST(ServingSimulation, ClosedLoopKeepsAtMostItsConcurrencyInFlight)
{
    auto requests = [](const json& extra)
    {
        json r = {{"rate_per_s", 0}, {"count", 12}, {"output_tokens", 8}};
        r.merge_patch(extra);
        return MakeScenario({{"serving", {{"requests", r}}}});
    };
    const ServingResult batch = RunOnFake(requests({{"count", 3}}));
    const ServingResult three = RunOnFake(requests({{"count", 3}, {"concurrency", 3}}));
    ASSERT_EQ(three.requests.size(), 3u);
    for (size_t i = 0; i < 3; ++i)
    {
        EXPECT_EQ(three.requests[i].arrivalPs, 0);
        EXPECT_EQ(three.requests[i].tokenPs, batch.requests[i].tokenPs) << i;
    }
    const ServingResult r = RunOnFake(requests({{"concurrency", 3}}));
    ASSERT_EQ(r.requests.size(), 12u);
    ASSERT_TRUE(r.incomplete.empty());
    std::vector<int64_t> finishes;
    for (const RequestRecord& q : r.requests)
    {
        int64_t inFlight = 0;
        for (const RequestRecord& o : r.requests)
        {
            inFlight += o.arrivalPs <= q.arrivalPs && o.tokenPs.back() > q.arrivalPs;
        }
        EXPECT_LE(inFlight, 3) << q.id;
        finishes.push_back(q.tokenPs.back());
    }
    std::sort(finishes.begin(), finishes.end());
    // The 4th request is sent when the first finishes, the 5th when the second does, ...
    for (size_t i = 3; i < r.requests.size(); ++i)
    {
        EXPECT_EQ(r.requests[i].arrivalPs, finishes[i - 3]) << i;
    }
}

// Warm-up requests run first and are left out: the measured ones are sent once the last of them
// is done, and the figures are theirs alone.
TEST(ServingSimulation, WarmupRequestsRunFirstAndAreLeftOut)
{
    const ServingResult r = RunOnFake(MakeScenario({{"serving",
                                                     {{"requests",
                                                       {{"rate_per_s", 0},
                                                        {"count", 4},
                                                        {"output_tokens", 4},
                                                        {"concurrency", 2},
                                                        {"warmup", 2}}}}}}));
    ASSERT_EQ(r.requests.size(), 4u);
    ASSERT_TRUE(r.incomplete.empty());
    EXPECT_EQ(r.requests[0].id, 2u); // ids 0 and 1 were the warm-up
    const int64_t start = r.requests[0].arrivalPs;
    EXPECT_GT(start, 0);
    for (const RequestRecord& q : r.requests)
    {
        EXPECT_GE(q.arrivalPs, start);
    }
    for (const StepRecord& st : r.steps)
    {
        EXPECT_GE(st.launchPs, start);
    }
    const json j = r.ToJson();
    EXPECT_EQ(j["requests"]["count"], 4);
    EXPECT_EQ(j["requests"]["warmup"], 2);
    // The measured pair runs as the first pair did: the same TTFT as an unwarmed run of two.
    const ServingResult cold = RunOnFake(MakeScenario(
        {{"serving", {{"requests", {{"rate_per_s", 0}, {"count", 2}, {"output_tokens", 4}}}}}}));
    EXPECT_NEAR(r.requests[0].TtftMs(), cold.requests[0].TtftMs(), 1e-6);
}

// The frontend's time (HTTP, API server, tokeniser) delays the engine's queue by a fixed part and
// one per prompt token: a lone request's TTFT and E2E grow by exactly that, its steps do not.
TEST(ServingSimulation, FrontendOverheadDelaysTheEngineNotTheSteps)
{
    const json one = {{"rate_per_s", 0}, {"count", 1}, {"output_tokens", 4}};
    const ServingResult plain = RunOnFake(MakeScenario({{"serving", {{"requests", one}}}}));
    const ServingResult front = RunOnFake(MakeScenario(
        {{"serving",
          {{"requests", one},
           {"execution", {{"request_overhead", "5ms"}, {"prompt_token_overhead", "1us"}}}}}}));
    const double extraMs = 5 + 512 * 1e-3;
    ASSERT_TRUE(front.incomplete.empty());
    EXPECT_NEAR(front.requests[0].TtftMs(), plain.requests[0].TtftMs() + extraMs, 1e-6);
    EXPECT_NEAR(front.requests[0].E2eMs(), plain.requests[0].E2eMs() + extraMs, 1e-6);
    ASSERT_EQ(front.steps.size(), plain.steps.size());
    for (size_t i = 0; i < front.steps.size(); ++i)
    {
        EXPECT_EQ(front.steps[i].DurationPs(), plain.steps[i].DurationPs()) << i;
    }
    EXPECT_THROW(MakeScenario({{"serving", {{"execution", {{"request_overhead", "2h"}}}}}}),
                 InputError);
}

// One frontend server (vLLM's single API server process) takes requests one at a time, first
// come first served: of four sent together, the k-th reaches the engine at (k + 1) x its
// frontend time; as many servers as requests is the plain delay, byte for byte.
TEST(ServingSimulation, SerialFrontendQueuesRequestsInArrivalOrder)
{
    const json four = {{"rate_per_s", 0}, {"count", 4}, {"output_tokens", 4}};
    auto run = [&](uint32_t servers)
    {
        json exec = {{"request_overhead", "5ms"}, {"prompt_token_overhead", "1us"}};
        if (servers > 0)
        {
            exec["frontend_servers"] = servers;
        }
        return RunOnFake(MakeScenario({{"serving", {{"requests", four}, {"execution", exec}}}}));
    };
    const int64_t servicePs = int64_t(5.512e9); // 5 ms + 512 tokens x 1 us
    const ServingResult delay = run(0);
    const ServingResult serial = run(1);
    const ServingResult pairs = run(2);
    ASSERT_TRUE(serial.incomplete.empty());
    for (uint64_t k = 0; k < 4; ++k)
    {
        EXPECT_GE(delay.requests[k].prefillStartPs, servicePs) << k;
        EXPECT_LT(delay.requests[k].prefillStartPs, 2 * servicePs) << k;
        EXPECT_GE(serial.requests[k].prefillStartPs, int64_t(k + 1) * servicePs) << k;
        EXPECT_GE(pairs.requests[k].prefillStartPs, int64_t(k / 2 + 1) * servicePs) << k;
    }
    // Sent at 0, the last of the serial four cannot see its first token before four services.
    EXPECT_GT(serial.requests[3].TtftMs(), 4 * 5.512);
    EXPECT_EQ(run(4).ToJson().dump(), delay.ToJson().dump());
    EXPECT_THROW(MakeScenario({{"serving", {{"execution", {{"frontend_servers", -1}}}}}}),
                 InputError);
    // 4,000 requests of 3,000 s each through one server queue past the clock's 106 days: refused
    // by name rather than wrapped into negative times.
    const json many = {{"rate_per_s", 0}, {"count", 4000}, {"output_tokens", 4}};
    EXPECT_THROW(
        RunOnFake(MakeScenario(
            {{"serving",
              {{"requests", many},
               {"execution", {{"request_overhead", "3000s"}, {"frontend_servers", 1}}}}}})),
        fabricsim::UnitOverflow);
}

// A step with prompt work costs prefill_overhead once and prefill_token_overhead per prompt token
// it computes; decode-only steps do not move.
TEST(ServingSimulation, PrefillOverheadLengthensOnlyStepsWithPromptWork)
{
    const json one = {{"rate_per_s", 0}, {"count", 1}, {"output_tokens", 4}};
    const ServingResult plain = RunOnFake(MakeScenario({{"serving", {{"requests", one}}}}));
    const ServingResult slow = RunOnFake(MakeScenario(
        {{"serving",
          {{"requests", one},
           {"execution", {{"prefill_overhead", "3ms"}, {"prefill_token_overhead", "2us"}}}}}}));
    ASSERT_EQ(slow.steps.size(), plain.steps.size());
    uint32_t prompts = 0;
    for (size_t i = 0; i < slow.steps.size(); ++i)
    {
        const int64_t extraPs = slow.steps[i].DurationPs() - plain.steps[i].DurationPs();
        if (plain.steps[i].prefillTokens > 0)
        {
            ++prompts;
            EXPECT_NEAR(
                double(extraPs), (3e-3 + 2e-6 * double(plain.steps[i].prefillTokens)) * 1e12, 1.0)
                << i;
        }
        else
        {
            EXPECT_EQ(extraPs, 0) << i;
        }
    }
    EXPECT_EQ(prompts, 1u);
}

TEST(ServingSimulation, SmallKvCachePreemptsAndStillFinishes)
{
    InferenceScenario sc = MakeScenario(
        {{"serving",
          {{"requests",
            {{"rate_per_s", 0}, {"count", 8}, {"prompt_tokens", 200}, {"output_tokens", 100}}},
           {"kv_cache", {{"num_blocks", 60}}}}}});
    ServingResult r = RunOnFake(sc);
    EXPECT_EQ(r.Completed(), 8u);
    EXPECT_GT(r.ToJson()["requests"]["preemptions"].get<uint64_t>(), 0u);
    // The cache holds 960 tokens: at most 3 full requests (300 tokens each) at once.
    for (const auto& s : r.steps)
    {
        EXPECT_LE(s.sequences, 4u);
    }
}

TEST(ServingSimulation, SameSeedSameResultOtherSeedOtherResult)
{
    json patch = {{"serving",
                   {{"requests",
                     {{"rate_per_s", 20},
                      {"count", 30},
                      {"prompt_tokens", {{"dist", "uniform"}, {"min", 64}, {"max", 1024}}},
                      {"output_tokens", {{"dist", "uniform"}, {"min", 4}, {"max", 64}}}}}}}};
    json a = RunOnFake(MakeScenario(patch)).ToJson();
    json b = RunOnFake(MakeScenario(patch)).ToJson();
    EXPECT_EQ(a.dump(), b.dump());
    patch["seed"] = 8;
    json c = RunOnFake(MakeScenario(patch)).ToJson();
    EXPECT_NE(a.dump(), c.dump());
}

// Issue 5 (3): doubling the NIC bandwidth shortens the exposed expert-parallel communication of
// an EP group that spans two servers.
TEST(ServingSimulation, DoublingNicBandwidthShortensExposedEpCommunication)
{
    InferenceScenario sc = MakeScenario(
        {{"model", "Qwen3-30B-A3B"},
         {"parallelism", {{"tp", 4}, {"ep", 8}, {"dp", 2}, {"dp_attention", true}}},
         {"serving",
          {{"requests",
            {{"rate_per_s", 0}, {"count", 16}, {"prompt_tokens", 1024}, {"output_tokens", 16}}}}}});
    FakeCollectives::Params slow;
    slow.accelsPerServer = 4;
    slow.nicBw = 50e9;
    FakeCollectives::Params fast = slow;
    fast.nicBw = 100e9;
    ServingResult a = RunOnFake(sc, slow);
    ServingResult b = RunOnFake(sc, fast);
    double ea = Exposed(a, {"ep_dispatch", "ep_combine"});
    double eb = Exposed(b, {"ep_dispatch", "ep_combine"});
    EXPECT_GT(ea, 0);
    EXPECT_LT(eb, 0.7 * ea) << ea << " ms at 400 Gb/s, " << eb << " ms at 800 Gb/s";
    EXPECT_LT(b.E2e().mean, a.E2e().mean);
}

// Issue 5 (3): TP inside the scale-up domain (consecutive hosts of one server) versus one TP
// rank per server, where every all-reduce crosses the NICs.
TEST(ServingSimulation, TensorParallelAcrossServersLengthensExposedCommunication)
{
    json patch
        = {{"model", "Llama-3-70B"},
           {"parallelism", {{"tp", 8}}},
           {"serving",
            {{"requests",
              {{"rate_per_s", 0}, {"count", 8}, {"prompt_tokens", 256}, {"output_tokens", 8}}}}}};
    InferenceScenario inside = MakeScenario(patch);
    patch["serving"]["placement"] = {{"tp", "across_servers"}};
    InferenceScenario across = MakeScenario(patch);
    ServingResult a = RunOnFake(inside);
    ServingResult b = RunOnFake(across);
    EXPECT_EQ(a.ToJson()["pools"][0]["hosts"], json({0, 1, 2, 3, 4, 5, 6, 7}));
    EXPECT_EQ(b.ToJson()["pools"][0]["hosts"], json({0, 8, 16, 24, 32, 40, 48, 56}));
    double ea = Exposed(a, {"tp_allreduce"});
    double eb = Exposed(b, {"tp_allreduce"});
    EXPECT_GT(eb, 2 * ea) << ea << " ms inside, " << eb << " ms across";
    EXPECT_GT(b.Tpot().mean, a.Tpot().mean);
}

json
DisaggPatch(const std::string& mode, uint64_t prompt, uint64_t count)
{
    return {
        {"model", "Llama-3-70B"},
        {"serving",
         {{"requests",
           {{"rate_per_s", 1}, {"count", count}, {"prompt_tokens", prompt}, {"output_tokens", 8}}},
          {"disaggregation",
           {{"prefill", {{"parallelism", {{"tp", 8}}}}},
            {"decode", {{"parallelism", {{"tp", 8}}}}},
            {"kv_transfer", mode}}}}}};
}

// Issue 5 (4): on an idle fabric a disaggregated request's KV transfer takes its bytes over the
// bottleneck bandwidth: each of the eight decode ranks receives its 1/8 of the 4096-token prompt's
// KV (4096 x 327,680 B / 8 = 168 MB) from one prefill rank on another server, over one NIC.
TEST(ServingSimulation, DisaggregatedKvTransferTakesBytesOverBottleneckBandwidth)
{
    InferenceScenario sc = MakeScenario(DisaggPatch("bulk", 4096, 1));
    FakeCollectives::Params fp;
    fp.nicBw = 50e9;
    ServingResult r = RunOnFake(sc, fp);
    ASSERT_EQ(r.Completed(), 1u);
    const RequestRecord& q = r.requests[0];
    double total = 4096.0 * 327680;
    EXPECT_EQ(q.kvTransferBytes, uint64_t(total));
    EXPECT_NEAR(total, 1.25 * 1073741824, 1e6); // the reference's 1.25 GiB
    double expectMs = total / 8 / 50e9 * 1e3;
    double gotMs = double(q.kvTransferEndPs - q.kvTransferStartPs) / 1e9;
    EXPECT_NEAR(gotMs / expectMs, 1.0, 0.10) << gotMs << " ms vs " << expectMs << " ms";
    // First token from prefill, second only after the KV arrived on the decode pool.
    EXPECT_LE(q.tokenPs[0], q.kvTransferStartPs);
    EXPECT_GT(q.tokenPs[1], q.kvTransferEndPs);
    const nlohmann::json j = r.ToJson();
    EXPECT_GT(j["kv_transfer_ms"]["mean"].get<double>(), 0);
    // The first token reaches the user once the decode pool holds the KV (DistServe): TTFT
    // includes the transfer (it once stopped at prefill's first token), and splits into
    // queueing, prefill and transfer; TPOT runs from the delivered first token.
    EXPECT_EQ(q.FirstTokenPs(), q.kvTransferEndPs);
    EXPECT_DOUBLE_EQ(q.TtftMs(), double(q.kvTransferEndPs - q.arrivalPs) / 1e9);
    EXPECT_NEAR(j["ttft_ms"]["mean"].get<double>(),
                j["ttft_queue_ms"]["mean"].get<double>()
                    + j["ttft_prefill_ms"]["mean"].get<double>()
                    + j["kv_transfer_after_prefill_ms"]["mean"].get<double>(),
                1e-9);
    EXPECT_GT(q.TtftMs(), double(q.tokenPs[0] - q.arrivalPs) / 1e9 + 0.9 * expectMs);
    EXPECT_DOUBLE_EQ(q.TpotMs(), double(q.tokenPs.back() - q.kvTransferEndPs) / 1e9 / 7);
    EXPECT_EQ(r.accelerators, 16u);
}

// Disaggregated TTFT splits into queueing, prefill and transfer per request: two 4096-token
// prompts arrive together and the prefill pool takes 6000 tokens a step, so the second waits
// (queues) for the first's prefill before its own starts.
TEST(ServingSimulation, DisaggregatedTtftSplitsIntoQueueingPrefillAndTransfer)
{
    json patch = DisaggPatch("bulk", 4096, 2);
    patch["serving"]["requests"]["rate_per_s"] = 0;
    patch["serving"]["disaggregation"]["prefill"]["batching"]
        = {{"max_num_batched_tokens", 6000}, {"chunked_prefill", false}};
    FakeCollectives::Params fp;
    fp.nicBw = 50e9;
    ServingResult r = RunOnFake(MakeScenario(patch), fp);
    ASSERT_EQ(r.Completed(), 2u);
    const RequestRecord& a = r.requests[0];
    const RequestRecord& b = r.requests[1];
    EXPECT_EQ(a.prefillStartPs, a.arrivalPs);      // an idle pool starts it at once
    EXPECT_GT(b.prefillStartPs, a.tokenPs[0] - 1); // after the first prefill ended
    const double queueB = double(b.prefillStartPs - b.arrivalPs) / 1e9;
    const double prefillA = double(a.tokenPs[0] - a.prefillStartPs) / 1e9;
    EXPECT_NEAR(queueB, prefillA, 1e-9) << "the second queues for exactly the first's prefill";
    const json j = r.ToJson();
    for (const char* k : {"ttft_queue_ms", "ttft_prefill_ms", "kv_transfer_after_prefill_ms"})
    {
        ASSERT_TRUE(j.contains(k)) << k;
        EXPECT_EQ(j[k]["count"], 2) << k;
    }
    EXPECT_NEAR(j["ttft_queue_ms"]["max"].get<double>(), queueB, 1e-9);
    EXPECT_NEAR(j["ttft_ms"]["mean"].get<double>(),
                j["ttft_queue_ms"]["mean"].get<double>()
                    + j["ttft_prefill_ms"]["mean"].get<double>()
                    + j["kv_transfer_after_prefill_ms"]["mean"].get<double>(),
                1e-9);
}

// Layer-by-layer transfer overlaps prefill: the KV is complete soon after prefill ends, so the
// second token comes earlier than with a bulk transfer after prefill.
TEST(ServingSimulation, LayerwiseTransferOverlapsPrefill)
{
    FakeCollectives::Params fp;
    fp.nicBw = 50e9;
    ServingResult bulk = RunOnFake(MakeScenario(DisaggPatch("bulk", 4096, 1)), fp);
    ServingResult lw = RunOnFake(MakeScenario(DisaggPatch("layerwise", 4096, 1)), fp);
    const RequestRecord& b = bulk.requests[0];
    const RequestRecord& l = lw.requests[0];
    ASSERT_TRUE(l.Finished());
    EXPECT_EQ(l.kvTransferBytes, b.kvTransferBytes);
    EXPECT_EQ(l.tokenPs[0], b.tokenPs[0]); // same prefill
    int64_t bulkTail = b.kvTransferEndPs - b.tokenPs[0];
    int64_t lwTail = l.kvTransferEndPs - l.tokenPs[0];
    EXPECT_LT(lwTail, bulkTail / 4)
        << "after prefill: bulk " << bulkTail / 1e9 << " ms, layerwise " << lwTail / 1e9 << " ms";
    EXPECT_LT(l.tokenPs[1], b.tokenPs[1]);
}

TEST(ServingSimulation, DisaggregationWithSmallDecodePoolQueuesTransfers)
{
    json patch = DisaggPatch("bulk", 512, 12);
    patch["model"] = "Llama-3-8B";
    patch["serving"]["requests"]["rate_per_s"] = 0;
    patch["serving"]["requests"]["output_tokens"] = 64;
    patch["serving"]["disaggregation"]["prefill"]["parallelism"]["tp"] = 1;
    patch["serving"]["disaggregation"]["decode"]["parallelism"]["tp"] = 2;
    patch["serving"]["kv_cache"] = {{"num_blocks", 150}}; // 2400 tokens: 4 requests at a time
    for (const std::string mode : {"bulk", "layerwise"})
    {
        patch["serving"]["disaggregation"]["kv_transfer"] = mode;
        ServingResult r = RunOnFake(MakeScenario(patch));
        EXPECT_EQ(r.Completed(), 12u) << mode;
        EXPECT_TRUE(r.incomplete.empty()) << mode << ": " << r.ToJson()["incomplete"].dump();
        // tp 1 -> tp 2: each decode rank gets half the KV from the single prefill rank.
        EXPECT_EQ(r.requests[0].kvTransferBytes, 512u * 131072u) << mode;
    }
}

TEST(ServingSimulation, PipelineParallelVirtualEnginesOverlapSteps)
{
    InferenceScenario sc = MakeScenario(
        {{"parallelism", {{"tp", 1}, {"pp", 2}}},
         {"serving",
          {{"requests",
            {{"rate_per_s", 0}, {"count", 16}, {"prompt_tokens", 128}, {"output_tokens", 16}}}}}});
    ServingResult r = RunOnFake(sc);
    EXPECT_EQ(r.Completed(), 16u);
    bool overlap = false;
    for (size_t i = 0; i < r.steps.size(); ++i)
    {
        for (size_t j = 0; j < r.steps.size(); ++j)
        {
            overlap = overlap
                      || (r.steps[i].virtualEngine != r.steps[j].virtualEngine
                          && r.steps[i].launchPs < r.steps[j].endPs
                          && r.steps[j].launchPs < r.steps[i].endPs);
        }
    }
    EXPECT_TRUE(overlap) << "two virtual engines keep both stages busy";
    EXPECT_GT(Exposed(r, {"pp_send"}), 0);
}

TEST(ServingSimulation, RemoteKvPoolFetchesOverTheFabric)
{
    InferenceScenario sc = MakeScenario(
        {{"serving",
          {{"requests", {{"count", 2}, {"prompt_tokens", 4096}, {"output_tokens", 4}}},
           {"kv_cache", {{"placement", "remote"}, {"pool_hosts", {9}}}}}}});
    FakeCollectives api(FakeCollectives::Params{});
    ServingResult r = RunServing(sc, api, [&]() { api.Run(); });
    EXPECT_EQ(r.Completed(), 2u);
    size_t fromPool = 0;
    for (const auto& [src, dst, bytes] : api.sends)
    {
        fromPool += src == 9 && dst == 0 ? 1 : 0;
    }
    EXPECT_GE(fromPool, 32u * 4); // one fetch per layer per step
    EXPECT_GT(Exposed(r, {"kv_fetch"}), 0);
}

TEST(ServingSimulation, BadLayoutsAndRequestsAreInputErrors)
{
    auto field = [](const json& patch)
    {
        try
        {
            RunOnFake(MakeScenario(patch));
        }
        catch (const fabricsim::InputError& e)
        {
            return e.Field();
        }
        return std::string("no error");
    };
    // 70B weights do not fit one H100.
    EXPECT_EQ(field({{"model", "Llama-3-70B"}}), "parallelism");
    // A request larger than the KV cache.
    EXPECT_EQ(field({{"serving", {{"kv_cache", {{"num_blocks", 10}}}}}}), "serving.requests");
    // Whole prompts must fit the budget without chunked prefill.
    EXPECT_EQ(
        field({{"serving",
                {{"batching", {{"max_num_batched_tokens", 256}, {"chunked_prefill", false}}}}}}),
        "serving.batching.max_num_batched_tokens");
    // Images need an encoder.
    EXPECT_EQ(field({{"serving", {{"requests", {{"images", 1}}}}}}), "serving.requests.images");
    // Pools sharing hosts.
    json overlap = DisaggPatch("bulk", 128, 1);
    overlap["model"] = "Llama-3-8B";
    overlap["serving"]["disaggregation"]["decode"]["first_host"] = 4;
    EXPECT_EQ(field(overlap), "serving.disaggregation.decode.hosts");
    // Remote pool on an engine host.
    EXPECT_EQ(field({{"serving", {{"kv_cache", {{"placement", "remote"}, {"pool_hosts", {0}}}}}}}),
              "serving.kv_cache.pool_hosts");
    // More TP groups than accelerators per server for across_servers.
    EXPECT_EQ(field({{"parallelism", {{"tp", 1}, {"dp", 9}}},
                     {"serving", {{"placement", {{"tp", "across_servers"}}}}}}),
              "serving.placement");
    // Hosts beyond the topology.
    EXPECT_EQ(field({{"parallelism", {{"tp", 8}}},
                     {"topology",
                      {{"type", "rail-optimized"}, {"servers", 1}, {"accels_per_server", 4}}}}),
              "serving.placement");
}

// A request as large as the KV cache holds runs to completion; one token more is refused
// before anything runs, naming the requests and the capacity.
TEST(ServingSimulation, RequestsUpToTheKvCapacityRunAndOneTokenMoreIsRefused)
{
    // 60 blocks of 16 tokens: 960 tokens for prompt + output.
    auto scenario = [](uint64_t prompt)
    {
        return MakeScenario(
            {{"serving",
              {{"requests",
                {{"rate_per_s", 0}, {"count", 1}, {"prompt_tokens", prompt}, {"output_tokens", 4}}},
               {"kv_cache", {{"num_blocks", 60}}}}}});
    };
    ServingResult r = RunOnFake(scenario(956));
    ASSERT_EQ(r.Completed(), 1u);
    EXPECT_GT(r.requests[0].TtftMs(), 0);
    EXPECT_GT(r.requests[0].E2eMs(), r.requests[0].TtftMs());
    try
    {
        RunOnFake(scenario(957));
        FAIL() << "961 tokens ran in a 960-token cache";
    }
    catch (const fabricsim::InputError& e)
    {
        EXPECT_EQ(e.Field(), "serving.requests");
        EXPECT_NE(e.Expected().find("(960 tokens)"), std::string::npos) << e.what();
        EXPECT_EQ(e.Found(), "request 0 with 961 tokens");
    }
}

} // namespace
} // namespace fabricsim
