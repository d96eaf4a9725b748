// 8-to-1 incast on one 100G switch under each congestion control: every flow completes with no
// drop and the frame/byte books balance. HPCC, reacting to exact per-hop load, keeps the
// bottleneck queue far below DCQCN's (whose first cut waits for the queue to cross Kmin and for
// a CNP) and never needs PFC. DCTCP runs with its step marking at K = 30 KB x (100G / 10G).
#include "cc-scenario.h"

#include <gtest/gtest.h>

#include <iostream>

using nlohmann::json;

namespace
{

json
Incast(const std::string& cc)
{
    json link = {{"rate", "100Gbps"}, {"delay", "1us"}};
    json incast = {{"receiver", 8}, {"senders", 8}, {"size_bytes", 1000000}};
    json s = {{"seed", 5},
              {"stop_ns", 100000000},
              {"topology", {{"type", "single-switch"}, {"hosts", 9}, {"host_link", link}}},
              {"transport", {{"cc", cc}, {"pfc", true}}},
              {"monitor", {{"interval_ns", 0}}},
              {"traffic", {{"incast", incast}}}};
    if (cc == "dctcp")
    {
        // Step marking: Kmax just above Kmin with Pmax 1 marks every frame above K.
        json ecn
            = {{"kmin_bytes", 30000}, {"kmax_bytes", 30001}, {"pmax", 1.0}, {"per_rate", "10Gbps"}};
        s["switch"] = {{"ecn", ecn}};
    }
    return s;
}

struct Outcome
{
    uint64_t maxQueue = 0;
    uint64_t pauses = 0;
};

Outcome
RunAndCheck(const std::string& cc)
{
    json s = fabricsim::test::RunCcScenario(Incast(cc), "incast-" + cc);
    std::cout << cc << ": max queue " << s["queue"]["max_bytes"] << " B, p99 "
              << s["queue"]["p99_bytes"] << " B, pauses " << s["pfc"]["pause_frames_sent"]
              << ", ecn marked " << s["nic"]["ecn_marked"] << ", slowdown p50/p99 "
              << s["slowdown"]["p50"] << "/" << s["slowdown"]["p99"] << "\n";
    EXPECT_EQ(s["flows_completed"].get<int>(), 8) << cc;
    EXPECT_EQ(s["drops"]["total"].get<uint64_t>(), 0u) << cc;
    EXPECT_TRUE(s["conservation"]["ok"].get<bool>()) << cc;
    // 8 MB through one 100G port needs 0.64 ms at least: every CC must keep the port busy.
    double last = 0;
    for (auto& f : s["flows"])
    {
        last = std::max(last, f["start_ns"].get<double>() + f["fct_ns"].get<double>());
    }
    EXPECT_GT(last, 8e6 * 8 / 100e9 * 1e9) << cc;
    EXPECT_LT(last, 2 * 8e6 * 8 / 100e9 * 1e9) << cc;
    return {s["queue"]["max_bytes"].get<uint64_t>(), s["pfc"]["pause_frames_sent"].get<uint64_t>()};
}

} // namespace

class IncastUnderCc : public testing::TestWithParam<std::string>
{
};

TEST_P(IncastUnderCc, CompletesWithoutDrops)
{
    RunAndCheck(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Algorithms,
                         IncastUnderCc,
                         testing::Values("hpcc", "timely", "dctcp", "swift", "dcqcn"),
                         [](const testing::TestParamInfo<std::string>& i) { return i.param; });

TEST(IncastQueue, HpccQueueFarBelowDcqcnAndNoPause)
{
    Outcome h = RunAndCheck("hpcc");
    Outcome d = RunAndCheck("dcqcn");
    EXPECT_EQ(h.pauses, 0u);
    EXPECT_GE(d.maxQueue, 5 * h.maxQueue);
}
