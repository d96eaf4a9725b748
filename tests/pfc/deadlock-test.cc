// PFC deadlock detection: a ring with cyclic routes deadlocks and the run ends with the cycle
// named; the same traffic on shortest paths, and PFC incasts, are not flagged.
#include "pfc-scenarios.h"
#include "scenario-runner.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

using nlohmann::json;
using namespace fabricsim::test;

namespace
{

/// Ring ports (see docs/topology.md numbering): switch i's port toward switch i+1, and the
/// port of switch i+1 facing switch i.
struct RingHop
{
    int port;
    std::string pausedBy;
};

const std::map<std::string, RingHop> kClockwise
    = {{"sw0", {1, "sw1 port 1"}}, {"sw1", {2, "sw2 port 1"}}, {"sw2", {2, "sw0 port 2"}}};

} // namespace

TEST(Deadlock, RingWithCyclicRoutesIsDetectedAndEndsTheRun)
{
    auto dir = TempDir("ring-deadlock");
    json s = RunScenario(RingDeadlock(20000000), dir);
    const json& d = s["deadlock"];
    ASSERT_TRUE(d["detected"].get<bool>()) << d.dump(2);
    // The figures docs/validation.md quotes (ctest --output-junit, or --gtest_output=json).
    RecordProperty("detected_ns", d["time_ns"].dump());
    RecordProperty("cycle", d["cycle"].dump());
    EXPECT_EQ(d["kind"], "cycle");
    EXPECT_TRUE(d["run_stopped"].get<bool>());
    EXPECT_EQ(d["switches"].size(), 3u);
    ASSERT_EQ(d["cycle"].size(), 3u) << d.dump(2);
    std::set<std::string> seen;
    for (size_t i = 0; i < 3; ++i)
    {
        const json& h = d["cycle"][i];
        std::string sw = h["switch"];
        seen.insert(sw);
        ASSERT_TRUE(kClockwise.count(sw)) << sw;
        EXPECT_EQ(h["port"].get<int>(), kClockwise.at(sw).port) << h.dump();
        EXPECT_EQ(h["paused_by"], kClockwise.at(sw).pausedBy) << h.dump();
        EXPECT_EQ(h["priority"].get<int>(), 3);
        EXPECT_GT(h["queued_frames"].get<uint64_t>(), 0u);
        EXPECT_GT(h["paused_ns"].get<int64_t>(), 0);
        // Wait-for order: each queue waits for a queue of the switch that pauses it.
        std::string next = d["cycle"][(i + 1) % 3]["switch"];
        EXPECT_EQ(kClockwise.at(sw).pausedBy.substr(0, 3), next);
    }
    EXPECT_EQ(seen.size(), 3u);
    // 3 x 20 MB cannot finish; the run ends a few hundred microseconds into the deadlock, far
    // before stop_ns (100 ms).
    EXPECT_LT(s["flows_completed"].get<int>(), 3);
    EXPECT_LT(s["sim"]["simulated_ns"].get<uint64_t>(), 5000000u);
    // The check's snapshot names its time; the run stops one notice delay later (the largest
    // link delay, 1 us, and a picosecond), when every rank of a partitioned run has decided.
    EXPECT_EQ(d["time_ns"].get<uint64_t>() + 1000, s["sim"]["simulated_ns"].get<uint64_t>());
    EXPECT_TRUE(s["conservation"]["ok"].get<bool>());
    EXPECT_EQ(s["drops"]["total"].get<uint64_t>(), 0u);
}

TEST(Deadlock, CliExitsThreeWithTheDiagnosis)
{
    auto dir = TempDir("ring-deadlock-cli");
    std::ofstream(dir + "/ring.json") << RingDeadlock(20000000).dump(2);
    std::string out;
    int rc = RunCli("run " + dir + "/ring.json --out " + dir + "/out", out);
    EXPECT_EQ(rc, 3) << out;
    EXPECT_NE(out.find("PFC deadlock"), std::string::npos) << out;
    EXPECT_NE(out.find("sw0 port 1 prio 3 (paused by sw1 port 1"), std::string::npos) << out;
    ASSERT_TRUE(std::filesystem::exists(dir + "/out/summary.json"));
    json s = json::parse(ReadFile(dir + "/out/summary.json"));
    EXPECT_TRUE(s["deadlock"]["detected"].get<bool>());
}

TEST(Deadlock, SameTrafficOnShortestPathsCompletes)
{
    auto dir = TempDir("ring-minimal");
    json sc = RingDeadlock(2000000);
    sc.erase("routes");
    json s = RunScenario(sc, dir);
    EXPECT_FALSE(s["deadlock"]["detected"].get<bool>());
    EXPECT_TRUE(s["deadlock"]["enabled"].get<bool>());
    EXPECT_EQ(s["flows_completed"].get<int>(), 3);
}

TEST(Deadlock, PfcIncastIsNotFlagged)
{
    auto dir = TempDir("incast-no-deadlock");
    json s = RunScenario(Incast("none", 16, 1000000), dir);
    EXPECT_GT(s["pfc"]["pause_frames_sent"].get<uint64_t>(), 0u);
    EXPECT_FALSE(s["deadlock"]["detected"].get<bool>());
    EXPECT_EQ(s["flows_completed"].get<int>(), 16);
    EXPECT_EQ(s["drops"]["total"].get<uint64_t>(), 0u);
}

TEST(Deadlock, MultiHopPfcIncastIsNotFlagged)
{
    // Pauses propagate leaf -> spine -> leaf -> hosts; queues stay paused for long stretches
    // but every chain ends at a queue that drains.
    auto dir = TempDir("leafspine-no-deadlock");
    json sc
        = {{"seed", 2},
           {"stop_ns", 50000000},
           {"topology",
            {{"type", "leaf-spine"},
             {"leaves", 2},
             {"spines", 2},
             {"hosts_per_leaf", 8},
             {"host_link", {{"rate", "100Gbps"}, {"delay", "1us"}}}}},
           {"transport", {{"cc", "none"}, {"pfc", true}}},
           {"switch", {{"buffer_bytes", "2MiB"}}},
           {"traffic", {{"incast", {{"receiver", 0}, {"senders", 15}, {"size_bytes", 1000000}}}}}};
    json s = RunScenario(sc, dir);
    EXPECT_GT(s["pfc"]["pause_frames_received"].get<uint64_t>(), 0u);
    EXPECT_FALSE(s["deadlock"]["detected"].get<bool>()) << s["deadlock"].dump(2);
    EXPECT_EQ(s["flows_completed"].get<int>(), 15);
    EXPECT_EQ(s["drops"]["total"].get<uint64_t>(), 0u);
}

TEST(Deadlock, DetectorIsOffWithoutPfc)
{
    auto dir = TempDir("ring-lossy");
    json sc = RingDeadlock(500000);
    sc["transport"]["pfc"] = false;
    json s = RunScenario(sc, dir);
    EXPECT_FALSE(s["deadlock"]["enabled"].get<bool>());
    EXPECT_EQ(s["flows_completed"].get<int>(), 3);
    EXPECT_EQ(s["pfc"]["pause_frames_sent"].get<uint64_t>(), 0u);
}
