// Standalone flows: FCT = base RTT + wire bytes / line rate, within 1% (reference target 2).
#include "scenario-runner.h"

#include <gtest/gtest.h>

using nlohmann::json;

namespace
{

json
OneFlow(const json& topology, uint32_t dst, uint64_t bytes, uint32_t mtu = 1000)
{
    return json{
        {"seed", 1},
        {"stop_ns", 1000000000},
        {"topology", topology},
        {"transport", {{"cc", "dcqcn"}, {"mtu_bytes", mtu}}},
        {"monitor", {{"interval_ns", 0}}},
        {"traffic", {{"flows", json::array({{{"src", 0}, {"dst", dst}, {"size_bytes", bytes}}})}}}};
}

/// Analytic FCT computed here from first principles (not from the simulator's ideal value).
double
AnalyticFctNs(uint64_t bytes,
              const std::vector<std::pair<double, double>>& hops /* (rate bps, delay ns) */,
              double mtu = 1000)
{
    double packets = std::ceil(double(bytes) / mtu);
    // frame = payload + Eth 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 + FCS 4; wire adds 20; RETH 16
    // once
    double wire = double(bytes) + packets * (62 + 20) + 16;
    double base = 0;
    double bottleneck = 1e30;
    for (auto& [rate, delay] : hops)
    {
        base += 2 * delay + (mtu + 82) * 8 / rate * 1e9 + (66 + 20) * 8 / rate * 1e9;
        bottleneck = std::min(bottleneck, rate);
    }
    return base + wire * 8 / bottleneck * 1e9;
}

} // namespace

TEST(Fct, SingleFlowOneMegabyteWithinOnePercent)
{
    auto dir = fabricsim::test::TempDir("fct1m");
    json topo = {{"type", "single-switch"},
                 {"hosts", 2},
                 {"host_link", {{"rate", "100Gbps"}, {"delay", "1us"}}}};
    json s = fabricsim::test::RunScenario(OneFlow(topo, 1, 1000000), dir);
    ASSERT_TRUE(s["complete"].get<bool>());
    double fct = s["flows"][0]["fct_ns"].get<double>();
    double expect = AnalyticFctNs(1000000, {{100e9, 1000}, {100e9, 1000}});
    EXPECT_NEAR(fct, expect, 0.01 * expect);
    EXPECT_NEAR(s["flows"][0]["ideal_fct_ns"].get<double>(), expect, 0.001 * expect);
    EXPECT_EQ(s["drops"]["total"].get<uint64_t>(), 0u);
}

TEST(Fct, SingleFlowHundredMegabytesWithinOnePercent)
{
    auto dir = fabricsim::test::TempDir("fct100m");
    json topo = {{"type", "single-switch"},
                 {"hosts", 2},
                 {"host_link", {{"rate", "100Gbps"}, {"delay", "1us"}}}};
    json s = fabricsim::test::RunScenario(OneFlow(topo, 1, 100000000), dir);
    ASSERT_TRUE(s["complete"].get<bool>());
    double fct = s["flows"][0]["fct_ns"].get<double>();
    double expect = AnalyticFctNs(100000000, {{100e9, 1000}, {100e9, 1000}});
    EXPECT_NEAR(fct, expect, 0.01 * expect);
    EXPECT_NEAR(s["flows"][0]["ideal_fct_ns"].get<double>(), expect, 0.001 * expect);
    EXPECT_TRUE(s["conservation"]["ok"].get<bool>());
}

TEST(Fct, ThreeMegabyteFlowAloneHasSlowdownOne)
{
    // Above 2.3 MB the ideal FCT wrapped in 64 bits: 75 us of transmission instead of 260 us, and
    // a slowdown of 3.3 for a flow alone on an idle switch.
    auto dir = fabricsim::test::TempDir("fct3m");
    json topo = {{"type", "single-switch"},
                 {"hosts", 2},
                 {"host_link", {{"rate", "100Gbps"}, {"delay", "1us"}}}};
    json s = fabricsim::test::RunScenario(OneFlow(topo, 1, 3000000), dir);
    ASSERT_TRUE(s["complete"].get<bool>());
    const double expect = AnalyticFctNs(3000000, {{100e9, 1000}, {100e9, 1000}});
    EXPECT_NEAR(s["flows"][0]["ideal_fct_ns"].get<double>(), expect, 0.001 * expect);
    EXPECT_NEAR(s["flows"][0]["slowdown"].get<double>(), 1.0, 0.01);
}

TEST(Fct, OneGigabyteFlowEndToEndWithinOnePercent)
{
    // 1 GB at 400 Gb/s with 4 KB frames: 245k frames, 20 ms of simulated time.
    auto dir = fabricsim::test::TempDir("fct1g");
    json topo = {{"type", "single-switch"},
                 {"hosts", 2},
                 {"host_link", {{"rate", "400Gbps"}, {"delay", "1us"}}}};
    json s = fabricsim::test::RunScenario(OneFlow(topo, 1, 1000000000, 4096), dir);
    ASSERT_TRUE(s["complete"].get<bool>());
    const double expect = AnalyticFctNs(1000000000, {{400e9, 1000}, {400e9, 1000}}, 4096);
    EXPECT_NEAR(s["flows"][0]["fct_ns"].get<double>(), expect, 0.01 * expect);
    EXPECT_NEAR(s["flows"][0]["ideal_fct_ns"].get<double>(), expect, 0.001 * expect);
    EXPECT_NEAR(s["flows"][0]["slowdown"].get<double>(), 1.0, 0.01);
    EXPECT_EQ(s["drops"]["total"].get<uint64_t>(), 0u);
    EXPECT_TRUE(s["conservation"]["ok"].get<bool>());
}

TEST(Fct, MultiHopMixedRatesWithinOnePercent)
{
    // host 0 -> leaf -> spine -> leaf -> host 2: 100G host links, 400G fabric links.
    auto dir = fabricsim::test::TempDir("fcths");
    json topo = {{"type", "leaf-spine"},
                 {"leaves", 2},
                 {"spines", 2},
                 {"hosts_per_leaf", 2},
                 {"host_link", {{"rate", "100Gbps"}, {"delay", "1us"}}},
                 {"fabric_link", {{"rate", "400Gbps"}, {"delay", "1us"}}}};
    json s = fabricsim::test::RunScenario(OneFlow(topo, 2, 1000000), dir);
    ASSERT_TRUE(s["complete"].get<bool>());
    double fct = s["flows"][0]["fct_ns"].get<double>();
    double expect
        = AnalyticFctNs(1000000, {{100e9, 1000}, {400e9, 1000}, {400e9, 1000}, {100e9, 1000}});
    EXPECT_NEAR(fct, expect, 0.01 * expect);
}
