// The NCCL-like tuner through `fabricsim calibrate` (in process): the in-switch all-reduce where
// the switch reduces, low-latency protocols for small messages, fitted latencies carried to a
// slower-clocked GPU, and the own-share copy as a fittable parameter.
#include "calibration-parameters.h"
#include "calibration-test-util.h"
#include "in-process-cli.h"
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
