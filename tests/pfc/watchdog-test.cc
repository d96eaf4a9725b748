// PFC watchdog: on the ring deadlock, "drop" and "ignore-pause" unblock the fabric and every
// flow completes; "report" only counts. Drops carry the pfc_watchdog reason and conservation
// holds throughout.
#include "pfc-scenarios.h"
#include "scenario-runner.h"

#include <gtest/gtest.h>

using nlohmann::json;
using namespace fabricsim::test;

namespace
{

json
RingWithWatchdog(const std::string& action, uint64_t flowBytes)
{
    json sc = RingDeadlock(flowBytes);
    sc["switch"]["pfc_watchdog"] = {{"poll_interval_ns", 100000},
                                    {"detection_ns", 1000000},
                                    {"restoration_ns", 500000},
                                    {"action", action}};
    return sc;
}

} // namespace

TEST(Watchdog, DropUnblocksTheRingDeadlock)
{
    auto dir = TempDir("wd-drop");
    json s = RunScenario(RingWithWatchdog("drop", 2000000), dir);
    const json& wd = s["pfc_watchdog"];
    // The figures docs/validation.md quotes.
    RecordProperty("watchdog", wd.dump());
    RecordProperty("drops", s["drops"].dump());
    RecordProperty("simulated_ns", s["sim"]["simulated_ns"].dump());
    RecordProperty("retransmitted_packets", s["nic"]["retransmitted_packets"].dump());
    EXPECT_TRUE(wd["enabled"].get<bool>());
    EXPECT_EQ(wd["action"], "drop");
    EXPECT_GT(wd["triggers"].get<uint64_t>(), 0u);
    EXPECT_GT(wd["flushed_frames"].get<uint64_t>(), 0u);
    uint64_t wdDrops = s["drops"]["by_reason"]["pfc_watchdog"].get<uint64_t>();
    EXPECT_GE(wdDrops, wd["flushed_frames"].get<uint64_t>());
    EXPECT_EQ(s["drops"]["total"].get<uint64_t>(), wdDrops);
    // The detector saw the deadlock but left it to the watchdog.
    EXPECT_TRUE(s["deadlock"]["detected"].get<bool>());
    EXPECT_FALSE(s["deadlock"]["run_stopped"].get<bool>());
    EXPECT_EQ(s["flows_completed"].get<int>(), 3);
    EXPECT_GT(s["nic"]["retransmitted_packets"].get<uint64_t>(), 0u);
    EXPECT_TRUE(s["conservation"]["ok"].get<bool>());
    for (const json& q : wd["queues"])
    {
        // Only the clockwise ring ports can be stuck, and only after the detection time.
        EXPECT_NE(q["port"].get<int>(), 0) << q.dump();
        EXPECT_GE(q["paused_ns_at_first_trigger"].get<int64_t>(), 1000000) << q.dump();
        EXPECT_EQ(q["priority"].get<int>(), 3);
    }
}

TEST(Watchdog, IgnorePauseUnblocksTheRingDeadlock)
{
    auto dir = TempDir("wd-ignore");
    json s = RunScenario(RingWithWatchdog("ignore-pause", 2000000), dir);
    RecordProperty("triggers", s["pfc_watchdog"]["triggers"].dump());
    RecordProperty("simulated_ns", s["sim"]["simulated_ns"].dump());
    EXPECT_GT(s["pfc_watchdog"]["triggers"].get<uint64_t>(), 0u);
    EXPECT_EQ(s["pfc_watchdog"]["flushed_frames"].get<uint64_t>(), 0u);
    EXPECT_EQ(s["drops"]["by_reason"]["pfc_watchdog"].get<uint64_t>(), 0u);
    EXPECT_EQ(s["flows_completed"].get<int>(), 3);
    EXPECT_TRUE(s["conservation"]["ok"].get<bool>());
}

TEST(Watchdog, ReportCountsEachStuckQueueOnce)
{
    auto dir = TempDir("wd-report");
    json sc = RingWithWatchdog("report", 20000000);
    sc["stop_ns"] = 5000000;
    sc["deadlock"] = {{"on_detect", "report"}};
    json s = RunScenario(sc, dir);
    const json& wd = s["pfc_watchdog"];
    EXPECT_EQ(wd["triggers"].get<uint64_t>(), 3u) << wd.dump(2);
    ASSERT_EQ(wd["queues"].size(), 3u);
    for (const json& q : wd["queues"])
    {
        EXPECT_TRUE(q["active_at_end"].get<bool>());
        EXPECT_EQ(q["restorations"].get<uint64_t>(), 0u);
    }
    EXPECT_EQ(s["drops"]["total"].get<uint64_t>(), 0u);
    EXPECT_LT(s["flows_completed"].get<int>(), 3);
    EXPECT_EQ(s["sim"]["simulated_ns"].get<uint64_t>(), 5000000u);
    EXPECT_TRUE(s["deadlock"]["detected"].get<bool>());
    EXPECT_FALSE(s["deadlock"]["run_stopped"].get<bool>());
    EXPECT_TRUE(s["conservation"]["ok"].get<bool>());
}

TEST(Watchdog, OffByDefaultAndSilentOnANormalIncast)
{
    auto dir = TempDir("wd-off");
    json s = RunScenario(Incast("none", 8, 500000), dir);
    EXPECT_FALSE(s["pfc_watchdog"]["enabled"].get<bool>());
    EXPECT_EQ(s["pfc_watchdog"]["triggers"].get<uint64_t>(), 0u);
    json sc = Incast("none", 8, 500000);
    sc["switch"]["pfc_watchdog"] = {{"action", "drop"}}; // commodity defaults: 200 ms detection
    auto dir2 = TempDir("wd-default");
    json s2 = RunScenario(sc, dir2);
    EXPECT_TRUE(s2["pfc_watchdog"]["enabled"].get<bool>());
    EXPECT_EQ(s2["pfc_watchdog"]["triggers"].get<uint64_t>(), 0u);
    EXPECT_EQ(s2["drops"]["total"].get<uint64_t>(), 0u);
    EXPECT_EQ(s2["flows_completed"].get<int>(), 8);
}
