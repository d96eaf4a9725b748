// Loss recovery as RoCE NICs do it: go-back-N and selective repeat on the lossy incast (16 x 2 MB
// into one 100G port, 300 KB of buffer, no PFC, no congestion control), the retransmission
// timeout's backoff, and the retry limit that fails a QP instead of leaving it hanging.
#include "scenario-runner.h"

#include "ns3/config.h"
#include "ns3/double.h"
#include "ns3/rdma-nic.h"

#include <gtest/gtest.h>

#include <algorithm>

using nlohmann::json;

namespace
{

json
LossyIncast(const json& transport)
{
    json t = {{"cc", "none"}, {"pfc", false}, {"mtu_bytes", 1000}};
    t.update(transport);
    return json{
        {"seed", 1},
        {"stop_ns", 100000000},
        {"topology",
         {{"type", "single-switch"},
          {"hosts", 17},
          {"host_link", {{"rate", "100Gbps"}, {"delay", "1us"}}}}},
        {"transport", t},
        {"switch", {{"buffer_bytes", 300000}, {"ecn", {{"enabled", false}}}}},
        {"traffic", {{"incast", {{"receiver", 0}, {"senders", 16}, {"size_bytes", 2000000}}}}}};
}

/// When the last flow finished, as a multiple of the fair-share time: the 16 flows' wire bytes
/// through the one 100G port, plus one base RTT (16 ideal FCTs overcount that by 15 RTTs).
double
LastFinishOverFairShare(const json& s)
{
    double last = 0;
    double serialise = 0;
    double rtt = 0;
    for (const auto& f : s["flows"])
    {
        EXPECT_FALSE(f["fct_ns"].is_null()) << f.dump();
        if (f["fct_ns"].is_null())
        {
            return 1e9;
        }
        last = std::max(last, f["start_ns"].get<double>() + f["fct_ns"].get<double>());
        // ideal = base RTT + wire bytes at 100G; 2 MB in 2000 frames of 1000 B payload.
        const double wire = 2000.0 * (1000 + 78 + 20) * 8 / 100e9 * 1e9;
        serialise += wire;
        rtt = f["ideal_fct_ns"].get<double>() - wire;
    }
    return last / (serialise + rtt);
}

} // namespace

TEST(LossRecovery, SelectiveRepeatFinishesTheLossyIncastNearItsFairShare)
{
    // IRN's configuration: selective repeat, in-flight capped at the BDP, a 100 us timeout.
    auto dir = fabricsim::test::TempDir("lr-selective");
    json s = fabricsim::test::RunScenario(
        LossyIncast({{"loss_recovery", "selective"}, {"bdp_cap", true}, {"rto_ns", 100000}}), dir);
    EXPECT_EQ(s["flows_completed"].get<int>(), 16);
    EXPECT_EQ(s["flows_failed"].get<int>(), 0);
    EXPECT_TRUE(s["conservation"]["ok"].get<bool>());
    const uint64_t drops = s["drops"]["by_reason"]["buffer_overflow"].get<uint64_t>();
    const uint64_t resent = s["nic"]["retransmitted_packets"].get<uint64_t>();
    EXPECT_GT(drops, 1000u);
    // Only what was lost is sent again (a timeout may resend a packet still queued).
    EXPECT_GE(resent, drops);
    EXPECT_LE(double(resent), 1.05 * double(drops));
    EXPECT_GT(s["nic"]["out_of_order_buffered"].get<uint64_t>(), 0u);
    EXPECT_EQ(s["nic"]["nacks_sent"], s["nic"]["nacks_received"]);
    // Per flow too: the run's counters are the sums of the flows'.
    uint64_t nacks = 0;
    uint64_t held = 0;
    uint64_t resentBytes = 0;
    for (const auto& f : s["flows"])
    {
        EXPECT_EQ(f["nacks_sent"], f["nacks_received"]); // no control frame is lost here
        nacks += f["nacks_sent"].get<uint64_t>();
        held += f["out_of_order_buffered"].get<uint64_t>();
        resentBytes += f["retransmitted_bytes"].get<uint64_t>();
    }
    EXPECT_EQ(nacks, s["nic"]["nacks_sent"].get<uint64_t>());
    EXPECT_EQ(held, s["nic"]["out_of_order_buffered"].get<uint64_t>());
    EXPECT_EQ(resentBytes, s["nic"]["retransmitted_bytes"].get<uint64_t>());
    EXPECT_EQ(resentBytes, resent * 1000); // every resent packet a full 1000 B payload
    const double multiple = LastFinishOverFairShare(s);
    EXPECT_LT(multiple, 3.0); // measured 1.28 (docs/validation.md)
    EXPECT_GT(multiple, 1.0);
    EXPECT_EQ(s["transport"]["loss_recovery"], "selective");
}

TEST(LossRecovery, GoBackNWithBackoffCompletesTheLossyIncast)
{
    // Defaults: go-back-N, a 1 ms timeout doubling per retry, each drawn from [T, 2T]. (Without
    // the jitter the 16 senders time out in lock-step: one flow finished in 100 ms.) Go-back-N's
    // multiple varies with the seed: 5.4, 4.0, 6.2 for seeds 1-3.
    auto dir = fabricsim::test::TempDir("lr-gbn");
    json s = fabricsim::test::RunScenario(LossyIncast(json::object()), dir);
    EXPECT_EQ(s["flows_completed"].get<int>(), 16);
    EXPECT_TRUE(s["conservation"]["ok"].get<bool>());
    const uint64_t drops = s["drops"]["by_reason"]["buffer_overflow"].get<uint64_t>();
    // Go-back-N resends what had arrived behind a hole too.
    EXPECT_GT(s["nic"]["retransmitted_packets"].get<uint64_t>(), drops);
    EXPECT_EQ(s["nic"]["out_of_order_buffered"].get<uint64_t>(), 0u);
    const double multiple = LastFinishOverFairShare(s);
    EXPECT_LT(multiple, 10.0); // measured 5.4 (docs/validation.md)
    EXPECT_GT(multiple, 2.0);
    EXPECT_EQ(s["transport"]["loss_recovery"], "go-back-n");
}

TEST(LossRecovery, TheRetryLimitFailsAFlowInsteadOfLeavingItHanging)
{
    // The receiver's link goes down for good: 1 + 2 + ... + 128 ms of doubling timeouts (no
    // jitter) and the 8th timeout, past RetryLimit 7, fails the QP at 255 ms.
    json sc = {{"seed", 1},
               {"stop_ns", 10000000000},
               {"topology",
                {{"type", "single-switch"},
                 {"hosts", 2},
                 {"host_link", {{"rate", "100Gbps"}, {"delay", "1us"}}}}},
               {"transport", {{"cc", "none"}, {"rto_jitter", 0}}},
               {"link_events", {{{"link", 1}, {"at_ns", 0}, {"state", "down"}}}},
               {"traffic", {{"flows", {{{"src", 0}, {"dst", 1}, {"size_bytes", 100000}}}}}}};
    auto dir = fabricsim::test::TempDir("lr-retry");
    json s = fabricsim::test::RunScenario(sc, dir);
    EXPECT_EQ(s["flows_completed"].get<int>(), 0);
    EXPECT_EQ(s["flows_failed"].get<int>(), 1);
    EXPECT_EQ(s["nic"]["qp_failures"].get<int>(), 1);
    const json& f = s["flows"][0];
    EXPECT_EQ(
        f["failed"].get<std::string>(),
        "retry limit exceeded: 8 timeouts in a row without an acknowledgement (RetryLimit 7)");
    EXPECT_EQ(f["timeouts"].get<int>(), 8);
    EXPECT_EQ(f["pending_bytes"].get<int>(), 100000);
    // The run ends when the flow fails, not at stop_ns (10 s).
    EXPECT_EQ(s["sim"]["simulated_ns"].get<int64_t>(), 255000000);
}

TEST(LossRecovery, TimeoutsAtTheClocksEndDoNotWrap)
{
    // A first timeout of 2^63 ps - 1 (the largest rto_ns), doubled by the jitter: the deadline
    // stops at the clock's end instead of wrapping to the past (it would fire at once).
    json sc = {{"seed", 1},
               {"stop_ns", 1000000},
               {"topology", {{"type", "single-switch"}, {"hosts", 2}}},
               {"transport",
                {{"cc", "none"},
                 {"rto_ns", 9223372036854775},
                 {"rto_max_ns", 9223372036854775},
                 {"rto_jitter", 1}}},
               {"link_events", {{{"link", 1}, {"at_ns", 0}, {"state", "down"}}}},
               {"traffic", {{"flows", {{{"src", 0}, {"dst", 1}, {"size_bytes", 100000}}}}}}};
    json s = fabricsim::test::RunScenario(sc, fabricsim::test::TempDir("lr-clock"));
    EXPECT_EQ(s["nic"]["timeouts"].get<int>(), 0);
    EXPECT_EQ(s["flows"][0]["pending_bytes"].get<int>(), 100000);
    EXPECT_EQ(s["sim"]["simulated_ns"].get<int64_t>(), 1000000);
}

TEST(LossRecovery, TimeoutScheduleDoublesUpToItsCap)
{
    using namespace ns3;
    Config::Reset(); // the attribute defaults, not those a scenario run in this process set
    Ptr<RdmaNic> nic = CreateObject<RdmaNic>();
    EXPECT_EQ(nic->RetransmitTimeoutAfter(0), MilliSeconds(1));
    EXPECT_EQ(nic->RetransmitTimeoutAfter(3), MilliSeconds(8));
    // 1 ms x 2^12 = 4.096 s, below the cap of 4.096 us x 2^20 = 4.294967296 s; 2^13 is above.
    EXPECT_EQ(nic->RetransmitTimeoutAfter(12), MilliSeconds(4096));
    EXPECT_EQ(nic->RetransmitTimeoutAfter(13), NanoSeconds(4294967296));
    EXPECT_EQ(nic->RetransmitTimeoutAfter(1000000), NanoSeconds(4294967296)); // no overflow
    nic->SetAttribute("RetransmitBackoff", DoubleValue(1.0));
    EXPECT_EQ(nic->RetransmitTimeoutAfter(7), MilliSeconds(1)); // InfiniBand: fixed
    EXPECT_EQ(RdmaNic::kFirstQpn, 2u);
}

// Random loss on a link (loss_rate, both directions) at three rates: goodput falls with the loss
// rate for both modes, go-back-N's to near nothing at 1% (published measurements: near zero
// above about 1%), selective repeat keeping most of the line rate. Measured, seed 1 (goodput
// over the ideal): go-back-N 1.00 / 0.91 / 0.08, selective 1.00 / 1.00 / 0.77.
TEST(LossRecovery, RandomLossCostsGoBackNItsGoodputAndSelectiveRepeatLittle)
{
    auto goodput = [](double lossRate, const json& transport)
    {
        json t = {{"cc", "none"}, {"pfc", false}, {"mtu_bytes", 1000}};
        t.update(transport);
        json sc
            = {{"seed", 1},
               {"stop_ns", 2000000000},
               {"topology",
                {{"type", "single-switch"},
                 {"hosts", 2},
                 {"host_link", {{"rate", "100Gbps"}, {"delay", "1us"}, {"loss_rate", lossRate}}}}},
               {"transport", t},
               {"switch", {{"ecn", {{"enabled", false}}}}},
               {"traffic", {{"flows", {{{"src", 0}, {"dst", 1}, {"size_bytes", 20000000}}}}}}};
        json s = fabricsim::test::RunScenario(sc, fabricsim::test::TempDir("lr-random"));
        EXPECT_TRUE(s["conservation"]["ok"].get<bool>());
        EXPECT_GT(s["drops"]["by_reason"]["corruption"].get<int>(), 0);
        const json& f = s["flows"][0];
        EXPECT_FALSE(f["fct_ns"].is_null()) << f.dump();
        return f["fct_ns"].is_null() ? 0.0
                                     : f["ideal_fct_ns"].get<double>() / f["fct_ns"].get<double>();
    };
    const json gbn = json::object();
    const json selective = {{"loss_recovery", "selective"}, {"rto_ns", 100000}};
    std::vector<double> g;
    std::vector<double> sr;
    for (double p : {1e-4, 1e-3, 1e-2})
    {
        g.push_back(goodput(p, gbn));
        sr.push_back(goodput(p, selective));
    }
    EXPECT_GE(g[0], 0.95);
    EXPECT_GE(sr[0], 0.95);
    EXPECT_GE(g[0], g[1]);
    EXPECT_GT(g[1], g[2]);
    EXPECT_GE(sr[0], sr[1]);
    EXPECT_GT(sr[1], sr[2]);
    EXPECT_LT(g[2], 0.2);
    EXPECT_GT(sr[2], 0.6);
    EXPECT_GT(sr[2], 5 * g[2]);
}

// IRN's result in shape (Mittal et al., SIGCOMM'18: IRN without PFC beats RoCE with PFC): a k=4
// fat-tree of 16 x 100G hosts, web search at 50% load, DCQCN, 1 MiB of buffer per switch.
// Selective repeat with BDP-FC and a 100 us timeout, PFC off, against go-back-N with PFC: the
// median slowdown and the mean FCT are lower (seed 1, 3 ms of arrivals: 1.72 vs 2.59, 559 vs
// 645 us). The longer runs of docs/validation.md put the tail within +-20% either way.
TEST(LossRecovery, SelectiveRepeatWithoutPfcIsNoWorseThanGoBackNWithPfc)
{
    auto run = [](bool irn)
    {
        json sc = {{"seed", 1},
                   {"stop_ns", 200000000},
                   {"topology",
                    {{"type", "fat-tree"},
                     {"k", 4},
                     {"host_link", {{"rate", "100Gbps"}, {"delay", "1us"}}},
                     {"fabric_link", {{"rate", "100Gbps"}, {"delay", "1us"}}}}},
                   {"transport", {{"cc", "dcqcn"}, {"mtu_bytes", 1000}, {"pfc", !irn}}},
                   {"switch",
                    {{"buffer_bytes", "1MiB"},
                     {"ecn",
                      {{"kmin_bytes", "100KB"},
                       {"kmax_bytes", "400KB"},
                       {"pmax", 0.2},
                       {"per_rate", "25Gbps"}}}}},
                   {"traffic",
                    {{"poisson",
                      {{"cdf", std::string(FABRICSIM_SOURCE_DIR) + "/scenarios/cdf/websearch.cdf"},
                       {"load", 0.5},
                       {"duration_ns", 3000000}}}}}};
        if (irn)
        {
            sc["transport"].update(
                {{"loss_recovery", "selective"}, {"bdp_cap", true}, {"rto_ns", 100000}});
        }
        return fabricsim::test::RunScenario(sc, fabricsim::test::TempDir("lr-irn"));
    };
    auto meanFct = [](const json& s)
    {
        double sum = 0;
        for (const auto& f : s["flows"])
        {
            sum += f["fct_ns"].get<double>();
        }
        return sum / double(s["flows"].size());
    };
    const json roce = run(false);
    const json irn = run(true);
    ASSERT_TRUE(roce["complete"].get<bool>());
    ASSERT_TRUE(irn["complete"].get<bool>());
    EXPECT_EQ(roce["drops"]["total"].get<int>(), 0);
    EXPECT_GT(roce["pfc"]["pause_frames_sent"].get<int>(), 0);
    EXPECT_GT(irn["drops"]["total"].get<int>(), 0);
    EXPECT_EQ(irn["pfc"]["pause_frames_sent"].get<int>(), 0);
    EXPECT_TRUE(irn["conservation"]["ok"].get<bool>());
    EXPECT_LT(irn["slowdown"]["p50"].get<double>(), roce["slowdown"]["p50"].get<double>());
    EXPECT_LE(irn["slowdown"]["p95"].get<double>(), roce["slowdown"]["p95"].get<double>());
    EXPECT_LT(meanFct(irn), meanFct(roce));
}
