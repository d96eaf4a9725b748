// The NCCL-like tuner of calibration: protocol candidates, the in-switch (NVLS) all-reduce on
// systems whose switch reduces, fitted GPU latencies carried across SM clocks, and the
// own-share copy of all-gather / reduce-scatter.
#include "calibration-parameters.h"
#include "calibration-test-util.h"
#include "input-error.h"
#include "nccl-tuner.h"

#include "ns3/config.h"
#include "ns3/nccl-tuner-attributes.h"
#include "ns3/string.h"

#include <fstream>
#include <map>

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

/// (collective, ranks, bytes) -> (predicted us, choice) of a calibrate run's points.csv.
std::map<std::tuple<std::string, int, uint64_t>, std::pair<double, std::string>>
ReadPoints(const std::string& path)
{
    std::map<std::tuple<std::string, int, uint64_t>, std::pair<double, std::string>> out;
    std::vector<std::string> header;
    const auto rows = ReadCsvRows(path, &header);
    EXPECT_EQ(header.back(), "choice");
    for (const std::vector<std::string>& f : rows)
    {
        out[{f[0], std::stoi(f[1]), std::stoull(f[2])}] = {std::stod(f[5]), f.back()};
    }
    return out;
}

/// `fabricsim calibrate TABLE --scenario SCENARIO [EXTRA...] --out OUT`.
CliResult
Calibrate(const std::string& table,
          const std::string& scenario,
          const std::string& out,
          const std::vector<std::string>& extra = {})
{
    std::vector<std::string> args = {"calibrate", table, "--scenario", scenario};
    args.insert(args.end(), extra.begin(), extra.end());
    args.insert(args.end(), {"--out", out});
    return RunCli(args);
}

using PointKey = std::tuple<std::string, int, uint64_t>;

PointKey
K(const std::string& coll, int ranks, uint64_t bytes)
{
    return {coll, ranks, bytes};
}

/// A small nccl-tests-like table (int8, so elements = bytes). Every measured latency is 0.1 ms:
/// these tests check the predicted times, which do not depend on the measurement.
std::string
WriteTable(const std::string& dir, const std::vector<std::string>& rows)
{
    // rows are "op,ranks,elements"; the dtype and latency columns are filled in
    std::string fixed = "op_name,nccl_dtype,num_gpus,message_size,latency\n";
    for (const std::string& r : rows)
    {
        const size_t a = r.find(',');
        const size_t b = r.find(',', a + 1);
        fixed += r.substr(0, a) + ",int8," + r.substr(a + 1, b - a - 1) + "," + r.substr(b + 1)
                 + ",0.1\n";
    }
    WriteFileAtomic(dir + "/m.csv", fixed);
    return dir + "/m.csv";
}

TEST(NcclTuner, ProtocolListsParseAndBadOnesAreInputErrors)
{
    EXPECT_EQ(ParseProtocolList("Simple,LL128,LL", "f"),
              (std::vector<Protocol>{Protocol::kSimple, Protocol::kLL128, Protocol::kLL}));
    EXPECT_EQ(ParseProtocolList("ll", "f"), std::vector<Protocol>{Protocol::kLL});
    EXPECT_THROW(ParseProtocolList("Simple,Simple", "f"), fabricsim::InputError);
    EXPECT_THROW(ParseProtocolList("Simple,LL256", "f"), fabricsim::InputError);
    EXPECT_THROW(ParseProtocolList("", "f"), fabricsim::InputError);
}

TEST(NcclTuner, AttributesDescribeTheConfiguration)
{
    ns3::Config::Reset();
    TunerConfig d = ns3::TunerConfigFromAttributes();
    EXPECT_FALSE(d.inNetworkReduction);
    EXPECT_EQ(d.protocols.size(), 3u);
    // NCCL's NVLink ring hop latencies: LL 0.6 us, LL128 1.9 us, Simple 3.4 us.
    EXPECT_DOUBLE_EQ(d.StepScale(Protocol::kLL), 0.6 / 3.4);
    EXPECT_DOUBLE_EQ(d.StepScale(Protocol::kLL128), 1.9 / 3.4);
    EXPECT_DOUBLE_EQ(d.StepScale(Protocol::kSimple), 1.0);
    // NCCL's whole ring latencies, base + steps x NVLink step (LL 6.6 + 0.6, LL128 14 + 1.9,
    // Simple 8.4 + 3.4 us): all-gather on 8 GPUs has 7 steps, all-reduce on 2 GPUs 2.
    EXPECT_DOUBLE_EQ(d.LaunchScale(Protocol::kLL, CollectiveKind::kAllGather, 8),
                     (6.6 + 7 * 0.6) / (8.4 + 7 * 3.4));
    EXPECT_DOUBLE_EQ(d.LaunchScale(Protocol::kLL128, CollectiveKind::kAllGather, 8),
                     (14.0 + 7 * 1.9) / (8.4 + 7 * 3.4));
    EXPECT_DOUBLE_EQ(d.LaunchScale(Protocol::kLL128, CollectiveKind::kAllReduce, 2),
                     (14.0 + 2 * 1.9) / (8.4 + 2 * 3.4));
    EXPECT_DOUBLE_EQ(d.LaunchScale(Protocol::kSimple, CollectiveKind::kAllReduce, 8), 1.0);
    // LL's fixed cost falls relative to Simple's as the ring gets longer; LL128 is dearer than
    // Simple on 2 GPUs and cheaper on 8.
    EXPECT_LT(d.LaunchScale(Protocol::kLL, CollectiveKind::kAllGather, 8),
              d.LaunchScale(Protocol::kLL, CollectiveKind::kAllGather, 2));
    EXPECT_GT(d.LaunchScale(Protocol::kLL128, CollectiveKind::kAllGather, 2), 1.0);
    EXPECT_LT(d.LaunchScale(Protocol::kLL128, CollectiveKind::kAllGather, 8), 1.0);
    EXPECT_DOUBLE_EQ(d.NvlsLaunchScale(8), 25.0 / 8.4);
    d.nvlsLaunchScale = 0; // over the whole ring latency: 14 steps on 8 GPUs
    EXPECT_DOUBLE_EQ(d.NvlsLaunchScale(8), 25.0 / (8.4 + 14 * 3.4));
    EXPECT_DOUBLE_EQ(d.nvlsBandwidthScale, 0.85);
    // LL: 1/2 of Simple's bandwidth (NCCL 2.28), all of it the executor's half payload.
    EXPECT_DOUBLE_EQ(d.RateScale(Protocol::kLL, CollectiveKind::kAllGather), 1.0);
    EXPECT_DOUBLE_EQ(d.RateScale(Protocol::kLL, CollectiveKind::kAllReduce), 1.0);
    EXPECT_DOUBLE_EQ(d.RateScale(Protocol::kLL128, CollectiveKind::kAllReduce), 1.0);
    // No cap by default; with NCCL's Hopper llMaxBw (141 GB/s) LL on 400 GB/s links carries
    // its payload at 141, not 200 GB/s, and the cap leaves slower links and Simple alone.
    EXPECT_DOUBLE_EQ(d.RateScale(Protocol::kLL, CollectiveKind::kAllGather, 400e9), 1.0);
    d.llMaxBytesPerSecond = 141e9;
    EXPECT_DOUBLE_EQ(d.RateScale(Protocol::kLL, CollectiveKind::kAllGather, 400e9), 141.0 / 200);
    EXPECT_DOUBLE_EQ(d.RateScale(Protocol::kLL, CollectiveKind::kAllGather, 250e9), 1.0);
    EXPECT_DOUBLE_EQ(d.RateScale(Protocol::kSimple, CollectiveKind::kAllGather, 400e9), 1.0);
    ns3::Config::SetDefault("ns3::NcclTuner::Protocols", ns3::StringValue("LL128"));
    ns3::Config::SetDefault("ns3::NcclTuner::InNetworkReduction", ns3::StringValue("true"));
    ns3::Config::SetDefault("ns3::NcclTuner::GpuClock", ns3::StringValue("1410"));
    ns3::Config::SetDefault("ns3::NcclTuner::LLMaxBandwidth", ns3::StringValue("87.7GBps"));
    TunerConfig c = ns3::TunerConfigFromAttributes();
    EXPECT_TRUE(c.inNetworkReduction);
    EXPECT_EQ(c.protocols, std::vector<Protocol>{Protocol::kLL128});
    EXPECT_DOUBLE_EQ(c.gpuClockMhz, 1410);
    EXPECT_DOUBLE_EQ(c.llMaxBytesPerSecond, 87.7e9);
    // A positive launch scale is used as given, whatever the collective and GPU count.
    ns3::Config::SetDefault("ns3::NcclTuner::LLLaunchScale", ns3::StringValue("0.5"));
    EXPECT_DOUBLE_EQ(
        ns3::TunerConfigFromAttributes().LaunchScale(Protocol::kLL, CollectiveKind::kAllReduce, 8),
        0.5);
    ns3::Config::SetDefault("ns3::NcclTuner::Protocols", ns3::StringValue("Fast"));
    EXPECT_THROW(ns3::TunerConfigFromAttributes(), fabricsim::InputError);
    ns3::Config::Reset();
}

TEST(NcclTuner, InSwitchAllReduceMovesLessThanARingAboveThreeGpus)
{
    const uint64_t s = 64 << 20;
    EXPECT_DOUBLE_EQ(InSwitchAllReduceLinkBytes(s, 8), 1.125 * s);
    for (int n : {4, 8})
    {
        EXPECT_LT(InSwitchAllReduceLinkBytes(s, n), 2.0 * (n - 1) / n * s) << n;
    }
    // 1 + 1/n against 2 (n - 1) / n: equal at 3 GPUs, worse below (a 2-GPU ring moves S once).
    EXPECT_DOUBLE_EQ(InSwitchAllReduceLinkBytes(s, 3), 4.0 / 3.0 * s);
    EXPECT_GT(InSwitchAllReduceLinkBytes(s, 2), 1.0 * s);
}

TEST(NcclTuner, GpuLatenciesCarryByTheClockRatio)
{
    const std::map<std::string, double> v = {{"link_efficiency", 0.7},
                                             {"hop_latency", 200},
                                             {"launch_overhead", 10},
                                             {"step_latency", 1},
                                             {"message_overhead", 0.5}};
    const auto c = CarryAcrossClocks(v, 1980, 1410);
    EXPECT_DOUBLE_EQ(c.at("launch_overhead"), 10 * 1980.0 / 1410);
    EXPECT_DOUBLE_EQ(c.at("step_latency"), 1980.0 / 1410);
    EXPECT_DOUBLE_EQ(c.at("link_efficiency"), 0.7);
    EXPECT_DOUBLE_EQ(c.at("hop_latency"), 200);
    EXPECT_DOUBLE_EQ(c.at("message_overhead"), 0.5);
    EXPECT_EQ(CarryAcrossClocks(v, 0, 1410), v); // an overlay without a clock carries as is
}

TEST(NcclTuner, AllReduceUsesTheSwitchWhereItReduces)
{
    const std::string dir = ScratchDir("nvls");
    const std::string m = WriteTable(dir,
                                     {"all_reduce,8,268435456",
                                      "all_gather,8,268435456",
                                      "all_reduce,2,268435456",
                                      "all_gather,2,268435456"});
    CliResult r = Calibrate(m, SystemScenario("h100-8gpu"), dir + "/on");
    ASSERT_EQ(r.code, 0) << r.err;
    r = Calibrate(m,
                  SystemScenario("h100-8gpu"),
                  dir + "/off",
                  {"--set", "attributes.ns3::NcclTuner::InNetworkReduction=false"});
    ASSERT_EQ(r.code, 0) << r.err;
    auto on = ReadPoints(dir + "/on/points.csv");
    auto off = ReadPoints(dir + "/off/points.csv");
    const uint64_t s = 268435456;
    EXPECT_EQ(on[K("allreduce", 8, s)].second, "nvls/Simple");
    EXPECT_EQ(off[K("allreduce", 8, s)].second.substr(0, 5), "ring/");
    // Bandwidth-bound: a ring all-reduce takes 2 x the all-gather, the switch (1 + 1/8) / (7/8)
    // at NCCL's NVLS efficiency, 0.85: 1.51 x (measured on 8 x H100 at 256 MiB: 1.50).
    const double ag = on[K("allgather", 8, s)].first;
    EXPECT_NEAR(off[K("allreduce", 8, s)].first / ag, 2.0, 0.1);
    EXPECT_NEAR(on[K("allreduce", 8, s)].first / ag, 9.0 / 7.0 / 0.85, 0.08);
    // On 2 GPUs the switch moves 1.5 S per link against the ring's S: the ring stays.
    EXPECT_EQ(on[K("allreduce", 2, s)].second.substr(0, 5), "ring/");
    nlohmann::json sum = ReadJson(dir + "/on/summary.json");
    EXPECT_TRUE(sum["tuner"]["in_network_reduction"].get<bool>());
    EXPECT_EQ(sum["tuner"]["chosen"]["nvls/Simple"].get<size_t>(), 1u);
}

TEST(NcclTuner, SmallMessagesTakeALowLatencyProtocol)
{
    const std::string dir = ScratchDir("proto");
    const std::string m = WriteTable(dir, {"all_gather,8,65536", "all_gather,8,268435456"});
    CliResult r = Calibrate(m, SystemScenario("a100-8gpu"), dir + "/auto");
    ASSERT_EQ(r.code, 0) << r.err;
    r = Calibrate(m,
                  SystemScenario("a100-8gpu"),
                  dir + "/simple",
                  {"--set", "attributes.ns3::NcclTuner::Protocols=Simple"});
    ASSERT_EQ(r.code, 0) << r.err;
    auto a = ReadPoints(dir + "/auto/points.csv");
    auto s = ReadPoints(dir + "/simple/points.csv");
    const auto small = std::make_tuple(std::string("allgather"), 8, uint64_t(65536));
    const auto large = std::make_tuple(std::string("allgather"), 8, uint64_t(268435456));
    EXPECT_NE(a[small].second.find("/LL"), std::string::npos) << a[small].second;
    EXPECT_LT(a[small].first, s[small].first);
    EXPECT_EQ(a[large].second.substr(a[large].second.find('/')), "/Simple");
    EXPECT_DOUBLE_EQ(a[large].first, s[large].first);
    r = Calibrate(m,
                  SystemScenario("a100-8gpu"),
                  dir + "/bad",
                  {"--set", "attributes.ns3::NcclTuner::Protocols=Simple,Turbo"});
    EXPECT_EQ(r.code, 2);
}

TEST(NcclTuner, ScenariosWithoutExplicitLinkRatesStillCalibrate)
{
    // LL's bandwidth scales explicit link rates; a topology on its default rates has none.
    const std::string dir = ScratchDir("norate");
    const std::string m = WriteTable(dir, {"all_gather,4,65536", "all_gather,4,16777216"});
    WriteFileAtomic(dir + "/s.json", R"({"topology": {"type": "single-switch", "hosts": 4}})");
    CliResult r = Calibrate(m, dir + "/s.json", dir + "/out");
    ASSERT_EQ(r.code, 0) << r.err;
    auto p = ReadPoints(dir + "/out/points.csv");
    EXPECT_EQ(p.size(), 2u);
    EXPECT_GT((p[K("allgather", 4, 16777216)].first), (p[K("allgather", 4, 65536)].first));
}

TEST(NcclTuner, FittedLatenciesCarryToASlowerClockedGpu)
{
    const std::string dir = ScratchDir("clock");
    const std::string m = WriteTable(dir, {"all_gather,8,4096"});
    WriteFileAtomic(dir + "/p.json",
                    R"({"fabricsim_overlay": 1, "gpu_clock_mhz": 1980,
                        "parameters": {"launch_overhead": 10, "step_latency": 1}, "set": []})");
    CliResult r
        = Calibrate(m, SystemScenario("a100-8gpu"), dir + "/out", {"--params", dir + "/p.json"});
    ASSERT_EQ(r.code, 0) << r.err;
    nlohmann::json s = ReadJson(dir + "/out/summary.json");
    EXPECT_DOUBLE_EQ(s["applied_parameters"]["launch_overhead"].get<double>(), 10);
    EXPECT_NEAR(s["carried_parameters"]["launch_overhead"].get<double>(), 14.04, 0.01);
    EXPECT_NEAR(s["carried_parameters"]["step_latency"].get<double>(), 1.404, 0.001);
    // A small all-gather is latency-bound: at least the carried launch overhead (LL's share on
    // 8 GPUs, 7 ring steps), and about the clock ratio slower than with the latencies as fitted.
    auto p = ReadPoints(dir + "/out/points.csv");
    const double carriedUs = p[K("allgather", 8, 4096)].first;
    EXPECT_GT(carriedUs, 14.04 * (6.6 + 7 * 0.6) / (8.4 + 7 * 3.4));
    WriteFileAtomic(dir + "/same.json",
                    R"({"fabricsim_overlay": 1,
                        "parameters": {"launch_overhead": 10, "step_latency": 1}, "set": []})");
    r = Calibrate(m, SystemScenario("a100-8gpu"), dir + "/same", {"--params", dir + "/same.json"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_FALSE(ReadJson(dir + "/same/summary.json").contains("carried_parameters"));
    const double asFittedUs = ReadPoints(dir + "/same/points.csv")[K("allgather", 8, 4096)].first;
    EXPECT_GT(carriedUs / asFittedUs, 1.3);
    EXPECT_LE(carriedUs / asFittedUs, 1980.0 / 1410 + 1e-9);
    WriteFileAtomic(
        dir + "/bad.json",
        R"({"fabricsim_overlay": 1, "gpu_clock_mhz": -5, "parameters": {}, "set": []})");
    r = Calibrate(m, SystemScenario("a100-8gpu"), dir + "/out2", {"--params", dir + "/bad.json"});
    EXPECT_EQ(r.code, 2);
}

TEST(NcclTuner, OwnShareCopyMakesBusBandwidthGrowWithTheGpuCount)
{
    TunerConfig c;
    const double hbm = 3.35e12;
    const uint64_t s = 512 << 20;
    EXPECT_EQ(c.OwnShareCopyUs(CollectiveKind::kAllGather, s, 8, hbm), 0.0); // off by default
    c.localCopyEfficiency = 0.29;
    const double copy8 = c.OwnShareCopyUs(CollectiveKind::kAllGather, s, 8, hbm);
    EXPECT_NEAR(copy8, double(s) / 8 / (0.29 * hbm) * 1e6, 1e-9);
    EXPECT_DOUBLE_EQ(c.OwnShareCopyUs(CollectiveKind::kReduceScatter, s, 8, hbm), copy8);
    EXPECT_DOUBLE_EQ(c.OwnShareCopyUs(CollectiveKind::kAllGather, s, 2, hbm), 4 * copy8);
    // All-reduce fuses the write into a sending step; all-to-all's self copy runs beside.
    EXPECT_EQ(c.OwnShareCopyUs(CollectiveKind::kAllReduce, s, 8, hbm), 0.0);
    EXPECT_EQ(c.OwnShareCopyUs(CollectiveKind::kAllToAll, s, 8, hbm), 0.0);
    EXPECT_EQ(c.OwnShareCopyUs(CollectiveKind::kAllGather, s, 1, hbm), 0.0);
    EXPECT_EQ(c.OwnShareCopyUs(CollectiveKind::kAllGather, s, 8, 0), 0.0);
    // A ring at 352 GB/s plus the copy at 0.29 x 3.35 TB/s: bus bandwidth (n - 1)/n S / t goes
    // from ~258 GB/s at 2 GPUs to ~335 at 8 (measured on H100: 258, 335), where the ring alone
    // gives 352 for both.
    auto busbw = [&](int n)
    {
        const double f = (n - 1.0) / n;
        const double us
            = f * double(s) / 352e9 * 1e6 + c.OwnShareCopyUs(CollectiveKind::kAllGather, s, n, hbm);
        return f * double(s) / (us * 1e-6) / 1e9;
    };
    EXPECT_NEAR(busbw(2), 258, 5);
    EXPECT_NEAR(busbw(8), 335, 5);
    EXPECT_NEAR(busbw(2) / busbw(8), 258.0 / 335, 0.02);
}

TEST(NcclTuner, LocalCopyEfficiencyIsAFittableParameterThatSlowsOnlyTheOwnShare)
{
    const nlohmann::json doc = ReadJson(SystemScenario("h100-8gpu"));
    EXPECT_EQ(CurrentParameterValue("local_copy_efficiency", doc), 0.0);
    const FitDimension d = CalibrationDimension("local_copy_efficiency", doc, "f");
    EXPECT_GT(d.start, d.lo);
    EXPECT_LE(d.hi, 1.0);
    EXPECT_EQ(ParameterAssignments({{"local_copy_efficiency", 0.3}}, doc, "f"),
              std::vector<std::string>{"attributes.ns3::NcclTuner::LocalCopyEfficiency=0.3"});

    const std::string dir = ScratchDir("owncopy");
    const uint64_t s = 268435456;
    const std::string m = WriteTable(dir,
                                     {"all_gather,2,268435456",
                                      "all_gather,8,268435456",
                                      "reduce_scatter,8,268435456",
                                      "all_reduce,8,268435456",
                                      "alltoall,8,268435456"});
    CliResult r = Calibrate(m, SystemScenario("h100-8gpu"), dir + "/off");
    ASSERT_EQ(r.code, 0) << r.err;
    r = Calibrate(m,
                  SystemScenario("h100-8gpu"),
                  dir + "/on",
                  {"--set", "attributes.ns3::NcclTuner::LocalCopyEfficiency=0.25"});
    ASSERT_EQ(r.code, 0) << r.err;
    auto off = ReadPoints(dir + "/off/points.csv");
    auto on = ReadPoints(dir + "/on/points.csv");
    // The scenario's memory bandwidth is 3350 GB/s: S / n at a quarter of it, added serially.
    for (int n : {2, 8})
    {
        const double addUs = double(s) / n / (0.25 * 3350e9) * 1e6;
        EXPECT_NEAR(on[K("allgather", n, s)].first - off[K("allgather", n, s)].first, addUs, 0.01)
            << n;
    }
    EXPECT_NEAR(on[K("reducescatter", 8, s)].first - off[K("reducescatter", 8, s)].first,
                double(s) / 8 / (0.25 * 3350e9) * 1e6,
                0.01);
    EXPECT_DOUBLE_EQ(on[K("allreduce", 8, s)].first, off[K("allreduce", 8, s)].first);
    EXPECT_DOUBLE_EQ(on[K("alltoall", 8, s)].first, off[K("alltoall", 8, s)].first);
    // Per byte moved over the links, 2 GPUs now pay more than 8 (bus bandwidth grows with n).
    const double ratioOff = off[K("allgather", 2, s)].first / off[K("allgather", 8, s)].first;
    const double ratioOn = on[K("allgather", 2, s)].first / on[K("allgather", 8, s)].first;
    EXPECT_GT(ratioOn, ratioOff * 1.05);
    EXPECT_DOUBLE_EQ(
        ReadJson(dir + "/on/summary.json")["tuner"]["local_copy_efficiency"].get<double>(), 0.25);
}

} // namespace
} // namespace fabricsim
