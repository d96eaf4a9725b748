#include "calibration-test-util.h"
#include "chakra-trace.h"
#include "in-process-cli.h"

#include <filesystem>
#include <fstream>

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

TEST(ReplayCommand, ChakraMicrobenchmarkReplaysAndExportsAgain)
{
    std::vector<std::string> args = {"replay"};
    for (int r = 0; r < 8; ++r)
    {
        REQUIRE_SHARED_CORPUS(f,
                              "traces/chakra/astra-microbench/all_reduce/8npus_1MB/all_reduce."
                                  + std::to_string(r) + ".et");
        args.push_back(f);
    }
    const std::string out = ScratchDir("replay");
    args.insert(args.end(),
                {"--scenario", SystemScenario("h100-8gpu"), "--export-chakra", "--out", out});
    CliResult r = RunCli(args);
    ASSERT_EQ(r.code, 0) << r.err;
    nlohmann::json rep = ReadJson(out + "/replay.json");
    EXPECT_TRUE(rep["complete"].get<bool>());
    ASSERT_EQ(rep["communication"].size(), 1u);
    EXPECT_EQ(rep["communication"][0]["bytes"].get<uint64_t>(), 1048576u);
    EXPECT_EQ(rep["communication"][0]["members"].get<uint32_t>(), 8u);
    EXPECT_GT(rep["replayed_us"].get<double>(), 2.0);
    EXPECT_TRUE(rep["recorded_us"].is_null()); // these traces carry no times
    for (int k = 0; k < 8; ++k)
    {
        ChakraTrace t = ReadChakraFile(out + "/trace." + std::to_string(k) + ".et");
        ASSERT_EQ(t.nodes.size(), 1u);
        EXPECT_EQ(t.nodes[0].Attr("comm_size")->intValue, 1048576);
    }
}

TEST(ReplayCommand, KinetoTraceOnAFasterAcceleratorAttributesTheChange)
{
    REQUIRE_SHARED_CORPUS(trace, "traces/kineto/hta-nccl_data.json.gz");
    const std::string out = ScratchDir("kineto");
    CliResult r = RunCli({"replay",
                          trace,
                          "--scenario",
                          SystemScenario("a100-8gpu"),
                          "--step",
                          "5",
                          "--hw-to",
                          "H100",
                          "--out",
                          out});
    ASSERT_EQ(r.code, 0) << r.err;
    nlohmann::json rep = ReadJson(out + "/replay.json");
    EXPECT_EQ(rep["hw_from"], "A100");
    EXPECT_LT(rep["class_scale"]["gemm"].get<double>(), 0.35); // 312 / 989 TFLOPS
    const double recorded = rep["recorded_us"].get<double>();
    EXPECT_NEAR(rep["baseline_us"].get<double>() / recorded, 1.0, 0.01);
    // Faster compute and re-simulated (balanced, unwaited) communication shorten the step.
    EXPECT_LT(rep["change_us"]["compute"].get<double>(), 0);
    EXPECT_LT(rep["replayed_us"].get<double>(), recorded);
    EXPECT_EQ(rep["communication"].size(), 7u);
    EXPECT_NE(r.out.find("change"), std::string::npos);
}

TEST(ReplayCommand, OneRankOfAMultiRankJobNeedsRanks)
{
    // chakra.0.et is rank 0 of a 2-rank job; without --ranks its 8-31 MB all-reduces once
    // replayed as 0 us on a group of one and the report said "change 0.0".
    REQUIRE_SHARED_CORPUS(trace, "traces/chakra/chakra.0.et");
    const std::string dir = ScratchDir("oneRank");
    CliResult r = RunCli(
        {"replay", trace, "--scenario", SystemScenario("h100-8gpu"), "--out", dir + "/out"});
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find("chakra.0.et: field '--ranks': expected the number of ranks"),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("7 collectives in a 1-rank trace"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir + "/out/replay.json"));
}

TEST(ReplayCommand, BadTracesExitTwoWithoutOutput)
{
    const std::string dir = ScratchDir("badtrace");
    WriteFileAtomic(dir + "/t.json", "{\"traceEvents\": [{\"ph\": \"X\", \"ts\": 1}]}");
    CliResult r = RunCli({"replay",
                          dir + "/t.json",
                          "--scenario",
                          SystemScenario("h100-8gpu"),
                          "--out",
                          dir + "/out"});
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("traceEvents[0].dur"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir + "/out/replay.json"));
    WriteFileAtomic(dir + "/c.0.et", std::string("\x05\x0a\x03", 3));
    r = RunCli({"replay",
                dir + "/c.0.et",
                "--scenario",
                SystemScenario("h100-8gpu"),
                "--out",
                dir + "/out"});
    EXPECT_EQ(r.code, 2);
    EXPECT_FALSE(std::filesystem::exists(dir + "/out/replay.json"));
    r = RunCli({"replay", dir + "/t.json"});
    EXPECT_EQ(r.code, 2); // no scenario
}

} // namespace
} // namespace fabricsim
