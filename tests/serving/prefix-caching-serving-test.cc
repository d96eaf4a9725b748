// Prefix caching in the serving loop against closed forms: a system prompt shared by half the
// requests, 5-turn conversations; with nothing to share, or off, results do not move.

#include "input-error.h"
#include "serving-scheduler.h"
#include "serving-test-util.h"

#include <gtest/gtest.h>

#include <tuple>

namespace fabricsim
{
namespace
{

using nlohmann::json;

uint64_t
PrefillTokens(const ServingResult& r)
{
    uint64_t n = 0;
    for (const StepRecord& s : r.steps)
    {
        n += s.prefillTokens;
    }
    return n;
}

json
WithCaching(json requests, bool on = true)
{
    return {
        {"serving", {{"requests", std::move(requests)}, {"kv_cache", {{"prefix_caching", on}}}}}};
}

} // namespace

// 20 requests of 1,000 own tokens, every other one (10) after a 2,000-token system prompt
// (125 blocks of 16): the first of those computes it, the 9 others find it. Hit rate
// 9 x 2,000 / (10 x 3,000 + 10 x 1,000) = 45 %; prefill computes 40,000 - 18,000 tokens.
TEST(PrefixCachingServing, SharedSystemPromptHitsInClosedForm)
{
    const json requests = {{"rate_per_s", 2},
                           {"arrival", "uniform"},
                           {"count", 20},
                           {"prompt_tokens", 1000},
                           {"output_tokens", 10},
                           {"system_prompt", {{"tokens", 2000}, {"fraction", 0.5}}}};
    const ServingResult on = RunOnFake(MakeScenario(WithCaching(requests)));
    const ServingResult off = RunOnFake(MakeScenario(WithCaching(requests, false)));
    ASSERT_EQ(on.Completed(), 20u);
    ASSERT_EQ(off.Completed(), 20u);
    uint64_t prompt = 0;
    for (const RequestRecord& r : on.requests)
    {
        const bool shares = r.id % 2 == 1;
        EXPECT_EQ(r.promptTokens, shares ? 3000u : 1000u) << r.id;
        EXPECT_EQ(r.cachedPromptTokens, shares && r.id > 1 ? 2000u : 0u) << r.id;
        EXPECT_EQ(off.requests[r.id].cachedPromptTokens, 0u);
        prompt += r.promptTokens;
    }
    EXPECT_EQ(prompt, 40000u);
    EXPECT_EQ(PrefillTokens(on), 40000u - 9 * 2000);
    EXPECT_EQ(PrefillTokens(off), 40000u);
    const json pc = on.ToJson(false)["prefix_cache"];
    EXPECT_EQ(pc["prompt_tokens"], 40000u);
    EXPECT_EQ(pc["cached_tokens"], 18000u);
    EXPECT_DOUBLE_EQ(pc["hit_rate"].get<double>(), 0.45);
    EXPECT_EQ(pc["requests_with_hits"], 9u);
    EXPECT_FALSE(off.ToJson(false).contains("prefix_cache"));
    // A hit skips 2,000 tokens of prefill: that request's first token comes sooner.
    EXPECT_LT(on.requests[3].TtftMs(), off.requests[3].TtftMs());
    EXPECT_DOUBLE_EQ(on.requests[2].TtftMs(), off.requests[2].TtftMs());
}

// 4 conversations of 5 turns: 1,000 tokens, then 200 new tokens a turn, 100-token answers.
// Turn k + 1's prompt is turn k's prompt + answer + 200: 1,000, 1,300, 1,600, 1,900, 2,200.
// The cache holds turn k's full blocks of the tokens it computed (prompt + answer - 1, the last
// answer token is sampled, never computed): 1,088, 1,392, 1,696, 1,984 tokens.
TEST(PrefixCachingServing, MultiTurnConversationsHitTheirEarlierTurns)
{
    const json requests
        = {{"rate_per_s", 1},
           {"arrival", "uniform"},
           {"count", 4},
           {"prompt_tokens", 1000},
           {"output_tokens", 100},
           {"conversation", {{"turns", 5}, {"think_time_s", 0.5}, {"turn_tokens", 200}}}};
    const ServingResult r = RunOnFake(MakeScenario(WithCaching(requests)));
    ASSERT_EQ(r.requests.size(), 20u);
    ASSERT_EQ(r.Completed(), 20u);
    const uint64_t prompts[] = {1000, 1300, 1600, 1900, 2200};
    const uint64_t hits[] = {0, 1088, 1392, 1696, 1984};
    for (const RequestRecord& q : r.requests)
    {
        const uint64_t turn = q.id % 5;
        EXPECT_EQ(q.promptTokens, prompts[turn]) << q.id;
        EXPECT_EQ(q.cachedPromptTokens, hits[turn]) << q.id;
        if (turn > 0)
        {
            // Sent half a second after the previous turn's last token.
            const RequestRecord& prev = r.requests[q.id - 1];
            EXPECT_EQ(q.arrivalPs, prev.tokenPs.back() + 500000000000) << q.id;
        }
        else
        {
            EXPECT_EQ(q.arrivalPs, int64_t(q.id / 5) * 1000000000000) << q.id;
        }
    }
    const json pc = r.ToJson(false)["prefix_cache"];
    EXPECT_EQ(pc["prompt_tokens"], 4u * 8000);
    EXPECT_EQ(pc["cached_tokens"], 4u * 6160);
    EXPECT_DOUBLE_EQ(pc["hit_rate"].get<double>(), 6160.0 / 8000);
    EXPECT_EQ(PrefillTokens(r), 4u * (8000 - 6160));
}

// With nothing shared, caching changes no figure; off is the same run as without the key.
TEST(PrefixCachingServing, NothingSharedChangesNothing)
{
    const json requests = ScenarioJson()["serving"]["requests"];
    const ServingResult plain = RunOnFake(MakeScenario());
    const ServingResult off = RunOnFake(MakeScenario(WithCaching(requests, false)));
    const ServingResult on = RunOnFake(MakeScenario(WithCaching(requests)));
    EXPECT_EQ(plain.ToJson().dump(), off.ToJson().dump());
    json j = on.ToJson();
    EXPECT_EQ(j["prefix_cache"]["cached_tokens"], 0u);
    j.erase("prefix_cache");
    EXPECT_EQ(j.dump(), plain.ToJson().dump());
}

// A request preempted for room finds its own blocks again when readmitted, if no one took
// them meanwhile: 10 blocks of 16; A (64-token prompt, 2 tokens) and B (80, 4) fill 9. Step 2:
// A's second token needs a 5th block (the last free one), B's needs a 6th: B is preempted, its
// 5 blocks go to the free queue. A finishes; step 3 readmits B from its cached 80 tokens: one
// token to compute, not 81.
TEST(PrefixCachingServing, PreemptedRequestFindsItsOwnBlocks)
{
    auto run = [](bool caching)
    {
        BatchingSpec batching;
        ServingScheduler s(batching, 10, 16, KvCacheGroups(), caching);
        for (auto [id, prompt, out] :
             {std::tuple<uint64_t, uint64_t, uint64_t>{0, 64, 2}, {1, 80, 4}})
        {
            SequenceState q;
            q.id = id;
            q.promptTokens = prompt;
            q.targetTokens = out;
            q.blockHashes = std::make_shared<const std::vector<uint64_t>>(
                BlockHashes({{ContentId(ContentKind::Unique, id), prompt},
                             {ContentId(ContentKind::Answer, id), out}},
                            16));
            s.Enqueue(q);
        }
        s.Complete(s.Schedule());
        ScheduledBatch second = s.Schedule();
        EXPECT_EQ(second.preemptedIds, std::vector<uint64_t>{1});
        s.Complete(second);
        ScheduledBatch third = s.Schedule();
        EXPECT_EQ(third.sequences.size(), 1u);
        return third.sequences.at(0);
    };
    const ScheduledSequence on = run(true);
    EXPECT_EQ(on.id, 1u);
    EXPECT_EQ(on.cacheHit, 80u);
    EXPECT_EQ(on.cached, 80u);
    EXPECT_EQ(on.newTokens, 1u);
    EXPECT_TRUE(on.samples);
    const ScheduledSequence off = run(false);
    EXPECT_EQ(off.cacheHit, 0u);
    EXPECT_EQ(off.newTokens, 81u);
}

// Disaggregated, 2 conversations of 3 turns (prompts 1,000, 1,300, 1,600; 100-token answers):
// the prefill engine holds each turn's prompt (its full blocks: 992, then 1,296 tokens), the
// decode engine its prompt and answer (1,088, then 1,392: prompt + answer - 1, in full blocks),
// and only what the decode engine lacks moves: 1,000, then 212, then 208 tokens' KV.
TEST(PrefixCachingServing, DisaggregatedPoolsEachKeepTheirOwnCache)
{
    json patch = WithCaching(
        {{"rate_per_s", 1},
         {"arrival", "uniform"},
         {"count", 2},
         {"prompt_tokens", 1000},
         {"output_tokens", 100},
         {"conversation", {{"turns", 3}, {"think_time_s", 0.5}, {"turn_tokens", 200}}}});
    patch["serving"]["disaggregation"]
        = {{"prefill", {{"parallelism", {{"tp", 1}}}}}, {"decode", {{"parallelism", {{"tp", 1}}}}}};
    const ServingResult r = RunOnFake(MakeScenario(patch));
    ASSERT_EQ(r.Completed(), 6u);
    const uint64_t prefillHit[] = {0, 992, 1296};
    const uint64_t decodeHit[] = {0, 1088, 1392};
    const uint64_t moved[] = {1000, 1300 - 1088, 1600 - 1392};
    const double perToken = double(r.requests[0].kvTransferBytes) / 1000;
    for (const RequestRecord& q : r.requests)
    {
        const uint64_t turn = q.id % 3;
        EXPECT_EQ(q.cachedPromptTokens, prefillHit[turn]) << q.id;
        EXPECT_EQ(q.decodeCachedTokens, decodeHit[turn]) << q.id;
        EXPECT_DOUBLE_EQ(double(q.kvTransferBytes), perToken * double(moved[turn])) << q.id;
    }
    const json pc = r.ToJson(false)["prefix_cache"];
    EXPECT_EQ(pc["cached_tokens"], 2u * (992 + 1296));
    EXPECT_EQ(pc["decode_cached_tokens"], 2u * (1088 + 1392));
}

// Two engines (DP 2), 6 conversations of 3 turns starting together. Routed by load, a turn may
// land on the engine without its history; routed by cache (SGLang's gateway policy), each
// later turn goes where its earlier turns are and hits in closed form (1,088, then 1,392).
TEST(PrefixCachingServing, CacheAwareRouterSendsTurnsToTheirHistory)
{
    auto run = [](const std::string& policy)
    {
        json patch = WithCaching(
            {{"rate_per_s", 0},
             {"count", 6},
             {"prompt_tokens", 1000},
             {"output_tokens", 100},
             {"conversation", {{"turns", 3}, {"think_time_s", 0.5}, {"turn_tokens", 200}}}});
        patch["parallelism"] = {{"tp", 1}, {"dp", 2}};
        patch["serving"]["router"] = {{"policy", policy}};
        return RunOnFake(MakeScenario(patch));
    };
    const ServingResult aware = run("cache_aware");
    const ServingResult load = run("least_loaded");
    ASSERT_EQ(aware.Completed(), 18u);
    ASSERT_EQ(load.Completed(), 18u);
    const uint64_t hits[] = {0, 1088, 1392};
    for (const RequestRecord& q : aware.requests)
    {
        EXPECT_EQ(q.cachedPromptTokens, hits[q.id % 3]) << q.id;
    }
    EXPECT_EQ(aware.ToJson(false)["prefix_cache"]["cached_tokens"], 6u * (1088 + 1392));
    EXPECT_LT(load.ToJson(false)["prefix_cache"]["cached_tokens"].get<uint64_t>(),
              6u * (1088 + 1392));
    // A cache-aware router needs a cache.
    json plain = ScenarioJson();
    plain["serving"]["router"] = {{"policy", "cache_aware"}};
    EXPECT_THROW(InferenceScenario::FromJson(plain, "router.json"), InputError);
}

TEST(PrefixCachingServing, WhatIsNotModelledIsRefused)
{
    json disagg = WithCaching(ScenarioJson()["serving"]["requests"]);
    disagg["serving"]["disaggregation"] = {{"prefill", {{"parallelism", {{"tp", 1}}}}},
                                           {"decode", {{"parallelism", {{"tp", 1}}}}},
                                           {"kv_transfer", "layerwise"}};
    EXPECT_THROW(RunOnFake(MakeScenario(disagg)), InputError);
    json sliding = WithCaching(ScenarioJson()["serving"]["requests"]);
    sliding["model"] = {{"preset", "Llama-3-8B"}, {"sliding_window", 256}};
    EXPECT_THROW(RunOnFake(MakeScenario(sliding)), InputError);
    json client = {{"rate_per_s", 1},
                   {"count", 2},
                   {"prompt_tokens", 10},
                   {"output_tokens", 2},
                   {"concurrency", 1},
                   {"conversation", {{"turns", 2}}}};
    EXPECT_THROW(MakeScenario(WithCaching(client)), InputError);
    client.erase("concurrency");
    client["images"] = 1; // later turns would repeat it
    EXPECT_THROW(MakeScenario(WithCaching(client)), InputError);
    client["images"] = 0;
    EXPECT_NO_THROW(MakeScenario(WithCaching(client)));
    // A million turns: turn k repeats 2k runs, 16 TB of them, refused before generating.
    json endless = {{"rate_per_s", 1},
                    {"count", 1},
                    {"prompt_tokens", 10},
                    {"output_tokens", 2},
                    {"conversation", {{"turns", 1000000}}}};
    EXPECT_THROW(MakeScenario(WithCaching(endless)), InputError);
}

} // namespace fabricsim
