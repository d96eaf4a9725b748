// A captured pcap decodes in tshark as RoCE (BTH) and PFC (target 6).
#include "scenario-runner.h"

#include <gtest/gtest.h>

#include <cstdlib>

using nlohmann::json;

TEST(Pcap, TsharkDecodesRoceAndPfc)
{
    if (std::system("command -v tshark >/dev/null 2>&1") != 0)
    {
        GTEST_SKIP() << "tshark not installed (scripts/setup installs it)";
    }
    auto dir = fabricsim::test::TempDir("pcap");
    json sc
        = {{"seed", 1},
           {"stop_ns", 100000000},
           {"topology", {{"type", "single-switch"}, {"hosts", 9}}},
           {"transport", {{"cc", "none"}}},
           {"switch", {{"buffer_bytes", 2000000}}},
           {"monitor", {{"interval_ns", 0}}},
           {"pcap", {{"hosts", {0}}, {"switches", {"sw0"}}}},
           {"traffic", {{"incast", {{"receiver", 8}, {"senders", 8}, {"size_bytes", 1000000}}}}}};
    json s = fabricsim::test::RunScenario(sc, dir);
    ASSERT_GT(s["pfc"]["pause_frames_sent"].get<int>(), 0);
    std::string out;
    // Host 0 sends RoCE data and receives PFC pauses from the switch.
    std::string cmd = "tshark -r " + dir
                      + "/host0-0.pcap -T fields -e infiniband.bth.opcode -e macc.opcode "
                        "2>/dev/null | sort | uniq -c > "
                      + dir + "/decoded.txt";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
    std::string decoded = fabricsim::test::ReadFile(dir + "/decoded.txt");
    EXPECT_NE(decoded.find("\t"), std::string::npos) << decoded;
    EXPECT_NE(decoded.find(" 6\t"), std::string::npos) << "RDMA WRITE First (opcode 6) missing:\n"
                                                       << decoded;
    EXPECT_NE(decoded.find(" 7\t"), std::string::npos) << "RDMA WRITE Middle (7) missing:\n"
                                                       << decoded;
    EXPECT_NE(decoded.find(" 8\t"), std::string::npos) << "RDMA WRITE Last (8) missing:\n"
                                                       << decoded;
    EXPECT_NE(decoded.find(" 17\t"), std::string::npos) << "RC Acknowledge (17) missing:\n"
                                                        << decoded;
    EXPECT_NE(decoded.find("0x0101"), std::string::npos) << "PFC (MAC control 0x0101) missing:\n"
                                                         << decoded;
    // Frame count in the switch port capture matches what the port saw.
    ASSERT_EQ(
        std::system(("tshark -r " + dir + "/sw0-8.pcap -Y infiniband.bth 2>/dev/null | wc -l > "
                     + dir + "/n.txt")
                        .c_str()),
        0);
    EXPECT_GT(std::stoi(fabricsim::test::ReadFile(dir + "/n.txt")), 8000);
}
