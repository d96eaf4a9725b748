// 16-to-1 incast: lossless with PFC (reference target 5), lossy but complete without it.
#include "scenario-runner.h"

#include <gtest/gtest.h>

using nlohmann::json;

namespace
{

json
Incast(bool pfc, uint64_t bufferBytes)
{
    return json{
        {"seed", 3},
        {"stop_ns", 200000000},
        {"topology",
         {{"type", "single-switch"},
          {"hosts", 17},
          {"host_link", {{"rate", "100Gbps"}, {"delay", "1us"}}}}},
        {"transport", {{"cc", "none"}, {"pfc", pfc}, {"rto_ns", 200000}}},
        {"switch", {{"buffer_bytes", bufferBytes}}},
        {"monitor", {{"interval_ns", 0}}},
        {"traffic", {{"incast", {{"receiver", 16}, {"senders", 16}, {"size_bytes", 2000000}}}}}};
}

} // namespace

TEST(Incast, PfcOnIsLosslessAndPauses)
{
    auto dir = fabricsim::test::TempDir("incast-pfc");
    json s = fabricsim::test::RunScenario(Incast(true, 4u << 20), dir);
    EXPECT_EQ(s["flows_completed"].get<int>(), 16);
    EXPECT_EQ(s["drops"]["total"].get<uint64_t>(), 0u);
    EXPECT_GT(s["pfc"]["pause_frames_sent"].get<uint64_t>(), 0u);
    EXPECT_EQ(s["pfc"]["pause_frames_sent"], s["pfc"]["pause_frames_received"]);
    EXPECT_TRUE(s["conservation"]["ok"].get<bool>());
    // 32 MB through one 100G port: the last flow cannot finish before 32e6*8/100e9 = 2.56 ms.
    double last = 0;
    for (auto& f : s["flows"])
    {
        last = std::max(last, f["start_ns"].get<double>() + f["fct_ns"].get<double>());
    }
    EXPECT_GT(last, 2.56e6);
    EXPECT_LT(last, 2.56e6 * 1.1);
}

TEST(Incast, PfcOffSmallBufferDropsButEveryFlowCompletes)
{
    auto dir = fabricsim::test::TempDir("incast-lossy");
    json s = fabricsim::test::RunScenario(Incast(false, 300000), dir);
    EXPECT_EQ(s["flows_completed"].get<int>(), 16);
    EXPECT_GT(s["drops"]["by_reason"]["buffer_overflow"].get<uint64_t>(), 0u);
    EXPECT_EQ(s["drops"]["total"], s["drops"]["by_reason"]["buffer_overflow"]);
    EXPECT_EQ(s["pfc"]["pause_frames_sent"].get<uint64_t>(), 0u);
    EXPECT_GT(s["nic"]["retransmitted_packets"].get<uint64_t>(), 0u);
    EXPECT_TRUE(s["conservation"]["ok"].get<bool>());
}

TEST(Incast, JumboFramesLargerThanTheDwrrQuantumNeverStall)
{
    // 4096-byte payloads exceed the switch's 1600-byte DWRR quantum: the scheduler must keep
    // adding quanta rather than give up with frames queued (that stalled ports until a timeout).
    json sc = Incast(true, 32u << 20);
    sc["transport"]["mtu_bytes"] = 4096;
    sc["traffic"]["incast"]["senders"] = 8;
    auto dir = fabricsim::test::TempDir("incast-jumbo");
    json s = fabricsim::test::RunScenario(sc, dir);
    EXPECT_EQ(s["flows_completed"].get<int>(), 8);
    EXPECT_EQ(s["nic"]["timeouts"].get<uint64_t>(), 0u);
    EXPECT_EQ(s["nic"]["retransmitted_packets"].get<uint64_t>(), 0u);
    double last = 0;
    for (auto& f : s["flows"])
    {
        last = std::max(last, f["start_ns"].get<double>() + f["fct_ns"].get<double>());
    }
    // 8 x 2 MB through one 100G port (4096 B payload + 82 B per frame on the wire).
    double wire = 8 * 2e6 * (4096.0 + 82) / 4096 * 8 / 100e9 * 1e9;
    EXPECT_LT(last, wire * 1.05);
}
