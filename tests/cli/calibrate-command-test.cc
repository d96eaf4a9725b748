#include "calibration-test-util.h"
#include "in-process-cli.h"
#include "input-error.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <tuple>

namespace fabricsim
{

namespace
{

nlohmann::json
ReadJson(const std::string& path)
{
    std::ifstream in(path);
    return nlohmann::json::parse(in);
}

TEST(CalibrateCommand, FitsLinkEfficiencyAndWritesAnOverlayLaterRunsInclude)
{
    REQUIRE_SHARED_CORPUS(csv, "measurements/nccl/h100_sxm-nccl-2.29.2.csv");
    const std::string out = ScratchDir("fit");
    CliResult r = RunCli({"calibrate",
                          csv,
                          "--scenario",
                          SystemScenario("h100-8gpu"),
                          "--coll",
                          "allgather",
                          "--ranks",
                          "8",
                          "--dtype",
                          "half",
                          "--min-bytes",
                          "32M",
                          "--fit",
                          "link_efficiency",
                          "--max-evals",
                          "20",
                          "--out",
                          out});
    ASSERT_EQ(r.code, 0) << r.err;
    nlohmann::json s = ReadJson(out + "/summary.json");
    EXPECT_EQ(s["points"].get<size_t>(), 5u); // 32 MiB .. 512 MiB
    const double eff = s["fit"]["parameters"]["link_efficiency"].get<double>();
    // Measured all-gather bus bandwidth on 8 H100 is about 300-335 GB/s, of the 370.8 GB/s
    // NCCL plans with (450 nominal).
    EXPECT_GT(eff, 0.75);
    EXPECT_LT(eff, 0.95);
    EXPECT_LT(s["error"]["all"]["mape_pct"].get<double>(), 10.0);
    EXPECT_TRUE(std::filesystem::exists(out + "/busbw.svg"));
    EXPECT_TRUE(std::filesystem::exists(out + "/points.csv"));
    nlohmann::json overlay = ReadJson(out + "/overlay.json");
    EXPECT_DOUBLE_EQ(overlay["parameters"]["link_efficiency"].get<double>(), eff);

    // The overlay slows `fabricsim collective` down by the fitted efficiency.
    const std::string plain = ScratchDir("plain");
    const std::string fitted = ScratchDir("fitted");
    const std::vector<std::string> base = {"collective",
                                           SystemScenario("h100-8gpu"),
                                           "--coll",
                                           "allgather",
                                           "--algo",
                                           "ring",
                                           "-b",
                                           "256M",
                                           "-e",
                                           "256M",
                                           "--backend",
                                           "analytical"};
    std::vector<std::string> a = base;
    a.insert(a.end(), {"--out", plain});
    std::vector<std::string> b = base;
    b.insert(b.end(), {"--overlay", out + "/overlay.json", "--out", fitted});
    ASSERT_EQ(RunCli(a).code, 0);
    ASSERT_EQ(RunCli(b).code, 0);
    const double t0 = ReadJson(plain + "/collective.json")["rows"][0]["time_us"].get<double>();
    const double t1 = ReadJson(fitted + "/collective.json")["rows"][0]["time_us"].get<double>();
    EXPECT_NEAR(t0 / t1, eff, 0.03);
}

TEST(CalibrateCommand, FittedParametersCarryToAnotherSystem)
{
    REQUIRE_SHARED_CORPUS(csv, "measurements/nccl/a100_sxm-nccl-2.27.3.csv");
    const std::string dir = ScratchDir("carry");
    WriteFileAtomic(
        dir + "/p.json",
        R"({"fabricsim_overlay": 1, "parameters": {"link_efficiency": 0.85}, "set": []})");
    CliResult r = RunCli({"calibrate",
                          csv,
                          "--scenario",
                          SystemScenario("a100-8gpu"),
                          "--params",
                          dir + "/p.json",
                          "--coll",
                          "allreduce",
                          "--ranks",
                          "8",
                          "--dtype",
                          "half",
                          "--min-bytes",
                          "128M",
                          "--out",
                          dir + "/out"});
    ASSERT_EQ(r.code, 0) << r.err;
    nlohmann::json s = ReadJson(dir + "/out/summary.json");
    EXPECT_DOUBLE_EQ(s["applied_parameters"]["link_efficiency"].get<double>(), 0.85);
    // Ring all-reduce at 0.85 x 240 GB/s (NCCL's A100 NVLink figure) against the measured
    // ~215 GB/s bus bandwidth.
    EXPECT_LT(s["error"]["all"]["mape_pct"].get<double>(), 12.0);
    EXPECT_FALSE(std::filesystem::exists(dir + "/out/overlay.json"));
}

TEST(CalibrateCommand, DeepEpPointsAreComparedPerModeAndSmBudget)
{
    REQUIRE_SHARED_CORPUS(ll, "measurements/deepep/h200_sxm-wideep_deepep_ll_perf.csv");
    const std::string out = ScratchDir("deepep");
    CliResult r
        = RunCli({"calibrate", ll, "--scenario", SystemScenario("h200-8gpu"), "--out", out});
    ASSERT_EQ(r.code, 0) << r.err;
    nlohmann::json s = ReadJson(out + "/summary.json");
    EXPECT_EQ(s["moe"]["ll dispatch"]["points"].get<size_t>(), 176u);
    EXPECT_LT(s["moe"]["ll dispatch"]["mape_pct"].get<double>(), 100.0);
    // DeepSeek-V3-like shape: the predicted dispatch never falls as the tokens per rank grow
    // (flat while each of the kernel's 128 SMs sends one token, as measured: 12 us from 1 to 8
    // tokens), and at 1024 tokens (7.6 MB per rank at 8 x 7392 B per token) it is
    // bandwidth-bound.
    std::map<int, double> predicted;
    for (const std::vector<std::string>& f : ReadCsvRows(out + "/moe.csv"))
    {
        if (f[0] == "ll" && f[2] == "7168" && f[3] == "8" && f[4] == "256")
        {
            predicted[std::stoi(f[1])] = std::stod(f[7]);
        }
    }
    ASSERT_EQ(predicted.size(), 11u);
    double prev = 0;
    for (const auto& [tokens, us] : predicted)
    {
        EXPECT_GE(us, prev) << tokens;
        prev = us;
    }
    EXPECT_GT(predicted[1024], 2 * predicted[1]);
    EXPECT_GT(predicted[1024], 1024 * 8 * 7392.0 * 7 / 8 / 450e3); // at least the wire time
}

// The normal-mode corpus table on the simulated NVLink rate (313.3 GB/s: 0.845 x 370.8): six
// dispatch points its own table contradicts (slower by more than 15 % than a larger call of the
// same shape), flagged and left out of their own segment; past them, one dispatch and three
// combine points of 2484 beyond 15 % (fit rows included).
TEST(CalibrateCommand, DeepEpNormalTableWithThePointsItContradicts)
{
    REQUIRE_SHARED_CORPUS(normal, "measurements/deepep/h200_sxm-wideep_deepep_normal_perf.csv");
    const std::string out = ScratchDir("deepep-normal");
    CliResult r = RunCli({"calibrate",
                          normal,
                          "--scenario",
                          SystemScenario("h200-8gpu"),
                          "--set",
                          "topology.host_link.rate=313.3GBps",
                          "--out",
                          out});
    ASSERT_EQ(r.code, 0) << r.err;
    std::vector<std::string> flagged;
    int beyondD = 0;
    int beyondC = 0;
    for (const std::vector<std::string>& f : ReadCsvRows(out + "/moe.csv"))
    {
        ASSERT_EQ(f.size(), 16u);
        EXPECT_EQ(f[15], "0") << "combine contradicted";
        if (f[14] == "1")
        {
            flagged.push_back(f[2] + "/" + f[3] + "/" + f[4] + " sms " + f[5] + " tokens " + f[1]);
        }
        beyondD += f[14] == "0" && std::abs(std::stod(f[8])) > 15;
        beyondC += std::abs(std::stod(f[11])) > 15;
    }
    EXPECT_EQ(flagged,
              (std::vector<std::string>{"2048/8/256 sms 4 tokens 1",
                                        "4096/10/512 sms 4 tokens 1",
                                        "4096/10/512 sms 4 tokens 2",
                                        "4096/10/512 sms 4 tokens 4",
                                        "4096/10/512 sms 4 tokens 8",
                                        "4096/22/512 sms 12 tokens 32"}));
    EXPECT_LE(beyondD, 1);
    EXPECT_LE(beyondC, 3);
    const nlohmann::json s = ReadJson(out + "/summary.json");
    EXPECT_EQ(s["moe"]["normal dispatch"]["points"].get<size_t>(), 2484u);
    EXPECT_EQ(s["moe"]["normal dispatch but contradicted"]["points"].get<size_t>(), 2478u);
    EXPECT_LT(s["moe"]["normal dispatch but contradicted"]["mape_pct"].get<double>(), 4.5);
    EXPECT_LT(s["moe"]["normal combine"]["mape_pct"].get<double>(), 4.5);
}

// DeepEP's published intranode figures (H800, EP 8, 4096 tokens per rank, hidden 7168, top-8 of
// 256 experts, fp8 dispatch, bf16 combine, 24 SMs as its README's example sets): 153 GB/s
// dispatch and 158 GB/s combine, counted as the bytes a rank receives (its own share included)
// over the time. On the H800 system at the H100-fitted link efficiency, with the kernel costs
// fitted on H200, the predictions are within the issue's 20 %.
TEST(CalibrateCommand, DeepEpPublishedIntranodeFiguresOnH800)
{
    const std::string dir = ScratchDir("deepep-h800");
    // A rank receives a token from each of the 8 ranks (itself too) when it holds any of the
    // token's experts: 1 - C(224, 8) / C(256, 8).
    double miss = 1;
    for (int i = 0; i < 8; ++i)
    {
        miss *= (224.0 - i) / (256.0 - i);
    }
    const double received = 4096 * 8 * (1 - miss);
    const double dispatchUs = received * 7392 / 153e9 * 1e6;
    const double combineUs = received * 14336 / 158e9 * 1e6;
    std::ostringstream csv;
    csv << "framework,version,device,op_name,kernel_source,node_num,hidden_size,num_token,num_topk,"
           "num_experts,dispatch_sms,dispatch_transmit_us,dispatch_notify_us,combine_sms,"
           "combine_transmit_us,combine_notify_us\n"
        << "deepep,readme,H800,normal,deepep,1,7168,4096,8,256,24," << dispatchUs << ",0,24,"
        << combineUs << ",0\n";
    WriteFileAtomic(dir + "/published.csv", csv.str());
    CliResult r = RunCli({"calibrate",
                          dir + "/published.csv",
                          "--scenario",
                          SystemScenario("h800-8gpu"),
                          "--set",
                          "topology.host_link.rate=139.26GBps", // 0.845 x 164.8
                          "--out",
                          dir + "/out"});
    ASSERT_EQ(r.code, 0) << r.err;
    nlohmann::json s = ReadJson(dir + "/out/summary.json");
    const double d = s["moe"]["normal dispatch"]["mape_pct"].get<double>();
    const double c = s["moe"]["normal combine"]["mape_pct"].get<double>();
    EXPECT_LT(d, 20.0);
    EXPECT_LT(c, 20.0);
    // The wire bounds both at 24 SMs: a 139 GB/s link carries the 7/8 of the bytes that leave.
    EXPECT_GT(dispatchUs * (1 + d / 100), received * 7 / 8 * 7392 / 139.26e9 * 1e6);
}

// DeepEP's published internode and low-latency figures (H800, a 400 Gb/s NIC per GPU): normal
// kernels at EP 16 / 32 / 64 (4096 tokens, hidden 7168, top-8 of 256, 24 SMs) reach 43 / 58 / 51
// GB/s dispatch and 43 / 57 / 50 combine, counted over the (token, server) pairs, the sender's
// own server included; low latency at 128 tokens takes 77-194 us to dispatch and 114-369 us to
// combine for EP 8-256. On the H800 cluster (NVLink at the H100-fitted efficiency) the normal
// points are within 10 %, low latency within 17 %. The low-latency dispatch copies at its share
// of H800's 200 GB/s of NVLink, not at H200's rate (EP 8, all NVLink, was -21.4 % at H200's);
// across servers every NIC carries what the busiest does under the tests' drawn routing (EP 16
// was -20.6 % at the mean).
TEST(CalibrateCommand, DeepEpPublishedInternodeAndLowLatencyFiguresOnH800)
{
    const std::string dir = ScratchDir("deepep-h800-cluster");
    // DeepEP's test routes a token to min(servers, 4) servers (its best groups, one per
    // server): its (token, server) pairs are 4 / servers of the tokens past 4 servers.
    auto reachesServer = [](double servers)
    {
        if (servers > 4)
        {
            return 4 / servers;
        }
        double miss = 1;
        for (int i = 0; i < 8; ++i)
        {
            miss *= (256.0 - 256.0 / servers - i) / (256.0 - i);
        }
        return 1 - miss;
    };
    std::ostringstream normal;
    normal << "framework,version,device,op_name,kernel_source,node_num,hidden_size,num_token,"
              "num_topk,num_experts,dispatch_sms,dispatch_transmit_us,dispatch_notify_us,"
              "combine_sms,combine_transmit_us,combine_notify_us\n";
    for (auto [ep, d, c] :
         {std::tuple<int, double, double>{16, 43, 43}, {32, 58, 57}, {64, 51, 50}})
    {
        const double pairs = 4096.0 * (ep / 8) * reachesServer(ep / 8);
        normal << "deepep,readme,H800,normal,deepep," << ep / 8 << ",7168,4096,8,256,24,"
               << pairs * 7392 / d / 1e3 << ",0,24," << pairs * 14336 / c / 1e3 << ",0\n";
    }
    std::ostringstream ll;
    ll << "framework,version,device,op_name,kernel_source,node_num,hidden_size,num_token,num_topk,"
          "num_experts,combine_avg_t_us,combine_bandwidth_gbps,dispatch_avg_t_us,"
          "dispatch_bandwidth_gbps\n";
    // DeepEP's test_low_latency.py routes over 288 experts (its default when the figures were
    // published); 288 divides only EP 8-32, so EP 64-256 take DeepSeek-V3's 256.
    for (auto [ep, d, c] : {std::tuple<int, double, double>{8, 77, 114},
                            {16, 118, 195},
                            {32, 155, 273},
                            {64, 173, 314},
                            {128, 192, 369},
                            {256, 194, 360}})
    {
        ll << "deepep,readme,H800,ll,deepep," << ep / 8 << ",7168,128,8," << (ep <= 32 ? 288 : 256)
           << "," << c << ",0," << d << ",0\n";
    }
    WriteFileAtomic(dir + "/normal.csv", normal.str());
    WriteFileAtomic(dir + "/ll.csv", ll.str());
    CliResult r = RunCli({"calibrate",
                          dir + "/normal.csv",
                          dir + "/ll.csv",
                          "--scenario",
                          SystemScenario("h800-cluster"),
                          "--set",
                          "topology.scale_up.rate=139.26GBps", // 0.845 x 164.8
                          "--out",
                          dir + "/out"});
    ASSERT_EQ(r.code, 0) << r.err;
    int points = 0;
    for (const std::vector<std::string>& f : ReadCsvRows(dir + "/out/moe.csv"))
    {
        ASSERT_GE(f.size(), 13u);
        const int ep = 8 * std::stoi(f[12]);
        const double de = std::stod(f[8]);
        const double ce = std::stod(f[11]);
        std::cout << f[0] << " EP " << ep << ": dispatch " << f[7] << " (" << de << " %), combine "
                  << f[10] << " (" << ce << " %)\n";
        if (f[0] == "normal")
        {
            EXPECT_LT(std::abs(de), 10.0) << "EP " << ep;
            EXPECT_LT(std::abs(ce), 10.0) << "EP " << ep;
        }
        else
        {
            EXPECT_LT(std::abs(de), 17.0) << "EP " << ep;
            EXPECT_LT(std::abs(ce), 15.0) << "EP " << ep;
        }
        points++;
    }
    EXPECT_EQ(points, 9);
    // A point wider than the scenario's hosts is bad input naming it.
    WriteFileAtomic(dir + "/wide.csv",
                    "op_name,node_num,hidden_size,num_token,num_topk,num_experts,"
                    "combine_avg_t_us,dispatch_avg_t_us\nll,64,7168,128,8,512,1,1\n");
    r = RunCli({"calibrate",
                dir + "/wide.csv",
                "--scenario",
                SystemScenario("h800-cluster"),
                "--out",
                dir + "/wide"});
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("node_num"), std::string::npos) << r.err;
}

// DeepEP's low-latency kernels over NVLink on 8 x H20 (78 SMs, NVLink as H200's), as the pull
// request that let them use NVLink measured them (EP 8, 128 tokens, hidden 7168, top-8, its
// test's 288 experts): 37 us dispatch, 59 us combine. The H200-fitted kernel costs with H20's SMs.
TEST(CalibrateCommand, DeepEpLowLatencyOverNvlinkOnH20)
{
    const std::string dir = ScratchDir("deepep-h20");
    auto predict = [&dir](const std::string& gpu)
    {
        WriteFileAtomic(dir + "/" + gpu + ".csv",
                        "framework,version,device,op_name,kernel_source,node_num,hidden_size,"
                        "num_token,num_topk,num_experts,combine_avg_t_us,combine_bandwidth_gbps,"
                        "dispatch_avg_t_us,dispatch_bandwidth_gbps\n"
                        "deepep,pr173,"
                            + gpu + ",ll,deepep,1,7168,128,8,288,59,0,37,0\n");
        const CliResult r = RunCli({"calibrate",
                                    dir + "/" + gpu + ".csv",
                                    "--scenario",
                                    SystemScenario("h200-8gpu"),
                                    "--set",
                                    "topology.host_link.rate=313.3GBps", // 0.845 x 370.8
                                    "--out",
                                    dir + "/" + gpu});
        EXPECT_EQ(r.code, 0) << r.err;
        const auto rows = ReadCsvRows(dir + "/" + gpu + "/moe.csv");
        EXPECT_EQ(rows.size(), 1u);
        return rows.empty() ? std::vector<std::string>(12, "0") : rows[0];
    };
    const std::vector<std::string> h20 = predict("H20");
    EXPECT_LT(std::abs(std::stod(h20[8])), 10.0) << "dispatch";
    EXPECT_LT(std::abs(std::stod(h20[11])), 20.0) << "combine";
    // The same kernels on H200's 132 SMs dispatch faster: the SMs count, not only the link.
    EXPECT_LT(std::stod(predict("H200")[7]), std::stod(h20[7]) - 1);
}

TEST(CalibrateCommand, BadInputExitsTwoAndWritesNothing)
{
    const std::string dir = ScratchDir("bad");
    WriteFileAtomic(
        dir + "/m.csv",
        "op_name,nccl_dtype,num_gpus,message_size,latency\nall_reduce,half,8,1024,zero\n");
    CliResult r = RunCli({"calibrate",
                          dir + "/m.csv",
                          "--scenario",
                          SystemScenario("h100-8gpu"),
                          "--out",
                          dir + "/out"});
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("line 2 latency"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir + "/out/summary.json"));
    WriteFileAtomic(
        dir + "/n.csv",
        "op_name,nccl_dtype,num_gpus,message_size,latency\nall_reduce,half,16,1024,0.1\n");
    r = RunCli({"calibrate",
                dir + "/n.csv",
                "--scenario",
                SystemScenario("h100-8gpu"),
                "--out",
                dir + "/out"});
    EXPECT_EQ(r.code, 2); // 16 ranks on an 8-GPU system
    EXPECT_FALSE(std::filesystem::exists(dir + "/out/summary.json"));
    r = RunCli(
        {"calibrate", dir + "/n.csv", "--scenario", SystemScenario("h100-8gpu"), "--fit", "warp"});
    EXPECT_EQ(r.code, 2);
    r = RunCli({"calibrate", "--scenario", SystemScenario("h100-8gpu")});
    EXPECT_EQ(r.code, 2);
}

} // namespace
} // namespace fabricsim
