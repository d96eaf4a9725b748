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

// A lossy run's capture decodes whole: selective repeat's NAKs are standard AETH NAKs (PSN
// sequence error), no frame is malformed, data QPs are numbered from 2 (QPN 0 and 1 are the
// management QPs Wireshark would decode as such), and timestamps are in nanoseconds.
TEST(Pcap, ALossyRunDecodesWholeWithNaksAndNanosecondTimes)
{
    if (std::system("command -v tshark >/dev/null 2>&1") != 0)
    {
        GTEST_SKIP() << "tshark not installed (scripts/setup installs it)";
    }
    auto dir = fabricsim::test::TempDir("pcap-lossy");
    json sc
        = {{"seed", 1},
           {"stop_ns", 100000000},
           {"topology",
            {{"type", "single-switch"},
             {"hosts", 5},
             {"host_link", {{"rate", "100Gbps"}, {"delay", "1us"}}}}},
           {"transport",
            {{"cc", "none"},
             {"pfc", false},
             {"loss_recovery", "selective"},
             {"bdp_cap", true},
             {"rto_ns", 100000}}},
           {"switch", {{"buffer_bytes", 100000}, {"ecn", {{"enabled", false}}}}},
           {"pcap", {{"hosts", {4}}}},
           {"traffic", {{"incast", {{"receiver", 4}, {"senders", 4}, {"size_bytes", 300000}}}}}};
    json s = fabricsim::test::RunScenario(sc, dir);
    ASSERT_EQ(s["flows_completed"].get<int>(), 4);
    ASSERT_GT(s["nic"]["nacks_sent"].get<int>(), 0);
    const std::string pcap = dir + "/host4-0.pcap";
    auto count = [&](const std::string& filter)
    {
        const std::string out = dir + "/count.txt";
        EXPECT_EQ(
            std::system(("tshark -r " + pcap + " -Y '" + filter + "' 2>/dev/null | wc -l > " + out)
                            .c_str()),
            0);
        return std::stoi(fabricsim::test::ReadFile(out));
    };
    EXPECT_EQ(count("_ws.malformed || _ws.expert.severity >= error"), 0);
    // The receiver's NAKs: AETH syndrome 0x60 (NAK, PSN sequence error), one per packet it held.
    EXPECT_EQ(count("infiniband.aeth.syndrome == 0x60"), s["nic"]["nacks_sent"].get<int>());
    EXPECT_EQ(count("infiniband.bth.destqp < 2"), 0);
    EXPECT_GT(count("infiniband.bth.destqp >= 2"), 1000);
    // pcap's nanosecond magic number, 0xa1b23c4d, little-endian.
    const std::string head = fabricsim::test::ReadFile(pcap).substr(0, 4);
    EXPECT_EQ(head, std::string("\x4d\x3c\xb2\xa1", 4));
}
