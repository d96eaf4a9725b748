// Metric definitions on hand-made timelines: TTFT, TPOT, ITL, E2E, percentiles, goodput, cost,
// step breakdown.

#include "serving-metrics.h"

#include <gtest/gtest.h>

namespace fabricsim
{
namespace
{

constexpr int64_t kMs = 1000000000; // ps

RequestRecord
Req(uint64_t id, int64_t arrivalMs, std::vector<int64_t> tokensMs, uint64_t output = 0)
{
    RequestRecord r;
    r.id = id;
    r.arrivalPs = arrivalMs * kMs;
    r.promptTokens = 100;
    r.outputTokens = output ? output : tokensMs.size();
    for (int64_t t : tokensMs)
    {
        r.tokenPs.push_back(t * kMs);
    }
    return r;
}

TEST(ServingMetrics, RequestLatenciesFollowTheConsensusDefinitions)
{
    RequestRecord r = Req(0, 0, {100, 150, 210, 300});
    EXPECT_DOUBLE_EQ(r.TtftMs(), 100);
    EXPECT_DOUBLE_EQ(r.TpotMs(), 200.0 / 3);
    EXPECT_EQ(r.ItlMs(), (std::vector<double>{50, 60, 90}));
    EXPECT_DOUBLE_EQ(r.E2eMs(), 300);
    EXPECT_TRUE(r.Finished());
    RequestRecord one = Req(1, 10, {40});
    EXPECT_DOUBLE_EQ(one.TtftMs(), 30);
    EXPECT_DOUBLE_EQ(one.TpotMs(), 0);
    EXPECT_TRUE(one.ItlMs().empty());
    RequestRecord partial = Req(2, 0, {10, 20}, 5);
    EXPECT_FALSE(partial.Finished());
    // Disaggregated: prefill's first token at 100 ms, the KV on the decode pool at 180 ms; the
    // user sees the first token at 180 ms.
    RequestRecord d = Req(3, 0, {100, 200, 260});
    d.kvTransferStartPs = 100 * kMs;
    d.kvTransferEndPs = 180 * kMs;
    EXPECT_EQ(d.FirstTokenPs(), 180 * kMs);
    EXPECT_DOUBLE_EQ(d.TtftMs(), 180);
    EXPECT_DOUBLE_EQ(d.TpotMs(), 40);
    EXPECT_EQ(d.ItlMs(), (std::vector<double>{20, 60}));
    EXPECT_DOUBLE_EQ(d.E2eMs(), 260);
}

TEST(ServingMetrics, PercentilesInterpolateLinearly)
{
    std::vector<double> v;
    for (int i = 1; i <= 100; ++i)
    {
        v.push_back(101 - i); // unsorted on purpose
    }
    Distribution d = Distribution::Of(v);
    EXPECT_EQ(d.count, 100u);
    EXPECT_DOUBLE_EQ(d.mean, 50.5);
    EXPECT_DOUBLE_EQ(d.p50, 50.5);
    EXPECT_DOUBLE_EQ(d.p90, 90.1);
    EXPECT_DOUBLE_EQ(d.p99, 99.01);
    EXPECT_DOUBLE_EQ(d.max, 100);
    EXPECT_EQ(Distribution::Of({}).count, 0u);
    EXPECT_DOUBLE_EQ(Distribution::Of({7}).p99, 7);
}

ServingResult
HandMade()
{
    ServingResult r;
    r.requests = {Req(0, 0, {100, 150, 200}),   // TTFT 100, TPOT 50
                  Req(1, 100, {400, 420, 440}), // TTFT 300, TPOT 20
                  Req(2, 200, {300, 500, 700}), // TTFT 100, TPOT 200
                  Req(3, 300, {500, 900}, 3)};  // unfinished
    r.slo.enabled = true;
    r.slo.ttftMs = 150;
    r.slo.tpotMs = 60;
    r.accelerators = 8;
    r.pricePerHour = 3.6;
    r.peakFlops = 1e15;
    r.hbmBwBytesPerSec = 1e12;
    return r;
}

TEST(ServingMetrics, ThroughputGoodputAndCostOnAHandMadeRun)
{
    ServingResult r = HandMade();
    // Every figure is over the finished requests (0-2); request 3 stopped after 2 of 3 tokens.
    // Rates: from the first arrival (0) to the last finished token (700 ms); the work executed
    // spans to request 3's last token (900 ms).
    EXPECT_DOUBLE_EQ(r.DurationSec(), 0.7);
    EXPECT_DOUBLE_EQ(r.SpanSec(), 0.9);
    EXPECT_EQ(r.Completed(), 3u);
    EXPECT_DOUBLE_EQ(r.Ttft().mean, (100.0 + 300 + 100) / 3);
    EXPECT_DOUBLE_EQ(r.Tpot().mean, (50.0 + 20 + 200) / 3);
    EXPECT_DOUBLE_EQ(r.E2e().max, 700 - 200);
    EXPECT_EQ(r.Itl().count, 6u);
    // Only request 0 meets both SLOs (1: TTFT; 2: TPOT); 3 is not counted.
    EXPECT_DOUBLE_EQ(r.SloAttainment(), 1.0 / 3);
    EXPECT_DOUBLE_EQ(r.GoodputRequestsPerSec(), 1 / 0.7);
    EXPECT_DOUBLE_EQ(r.GenerationTokensPerSec(), 9 / 0.7);
    EXPECT_DOUBLE_EQ(r.PromptTokensPerSec(), 300 / 0.7);
    // 8 GPUs x $3.6/h x 0.7 s = $0.0056 for 9 tokens.
    EXPECT_NEAR(r.CostPerMillionTokens(), 8 * 3.6 * 0.7 / 3600 / 9e-6, 1e-9);

    nlohmann::json j = r.ToJson();
    EXPECT_FALSE(j["complete"].get<bool>());
    EXPECT_DOUBLE_EQ(j["ttft_ms"]["p50"].get<double>(), 100);
    EXPECT_DOUBLE_EQ(j["slo"]["attainment"].get<double>(), 1.0 / 3);
    for (const char* k : {"ttft_ms", "tpot_ms", "e2e_ms", "itl_ms"})
    {
        for (const char* f : {"mean", "p50", "p90", "p99"})
        {
            EXPECT_TRUE(j[k].contains(f)) << k << "/" << f;
        }
    }
    EXPECT_TRUE(j.contains("throughput_tokens_per_s"));
    EXPECT_TRUE(j.contains("cost_per_million_tokens"));
}

TEST(ServingMetrics, StepBreakdownAveragesRanksAndLeavesTheRestIdle)
{
    StepStats st;
    st.launchPs = 0;
    st.endPs = 100;
    RankStepStats a;
    a.computePs = 60;
    a.commPs["tp_allreduce"] = 30;
    a.syncPs = 10;
    a.flops = 5;
    RankStepStats b;
    b.computePs = 40;
    b.commPs["tp_allreduce"] = 30;
    b.commPs["ep_dispatch"] = 10;
    b.flops = 7;
    st.ranks = {a, b};
    StepRecord rec;
    rec.SetTiming(st);
    EXPECT_DOUBLE_EQ(rec.computePs, 50);
    EXPECT_DOUBLE_EQ(rec.commPs.at("tp_allreduce"), 30);
    EXPECT_DOUBLE_EQ(rec.commPs.at("ep_dispatch"), 5);
    EXPECT_DOUBLE_EQ(rec.syncPs, 5);
    EXPECT_DOUBLE_EQ(rec.idlePs, 10); // rank b: 100 - 80
    EXPECT_DOUBLE_EQ(rec.flops, 12);

    ServingResult r = HandMade();
    rec.flops = 0.9 * 8 * 1e15 * 0.25; // a quarter of peak over the run
    rec.hbmBytes = 0.9 * 8 * 1e12 * 0.5;
    r.steps = {rec};
    EXPECT_DOUBLE_EQ(r.Mfu(), 0.25);
    EXPECT_DOUBLE_EQ(r.Mbu(), 0.5);
    nlohmann::json bd = r.Breakdown();
    EXPECT_DOUBLE_EQ(bd["exposed_comm_ms"]["tp_allreduce"].get<double>(), 30e-9);
}

} // namespace
} // namespace fabricsim
