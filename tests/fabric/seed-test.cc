// Every 64-bit scenario seed is honoured: ns-3's seed is 32 bits, so seeds past 2^32 once
// truncated (2^32 + 1 ran as seed 1) or, at 2^32, reached ns-3 as the invalid seed 0. Seeds from
// 4294944443 (MRG32k3a's second modulus) to 2^32 - 1, and the multiples past them that folded
// there, then aborted inside ns-3 (SIGABRT, exit 134).
#include "scenario-runner.h"

#include "ns3/fabric-setup.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>

using nlohmann::json;

namespace
{

json
PoissonScenario(uint64_t seed)
{
    return json{{"seed", seed},
                {"stop_ns", 50000000},
                {"topology", {{"type", "single-switch"}, {"hosts", 4}}},
                {"transport", {{"cc", "dcqcn"}}},
                {"monitor", {{"interval_ns", 0}}},
                {"traffic",
                 {{"poisson",
                   {{"cdf", std::string(FABRICSIM_SOURCE_DIR) + "/scenarios/cdf/websearch.cdf"},
                    {"load", 0.3},
                    {"duration_ns", 200000}}}}}};
}

std::string
FlowsOf(uint64_t seed, const std::string& tag)
{
    const json s
        = fabricsim::test::RunScenario(PoissonScenario(seed), fabricsim::test::TempDir(tag));
    EXPECT_TRUE(s["complete"].get<bool>()) << seed;
    EXPECT_EQ(s["seed"].get<uint64_t>(), seed);
    return s["flows"].dump();
}

} // namespace

TEST(Seed, EverySixtyFourBitSeedIsItsOwnNs3SeedAndRun)
{
    using fabricsim::kNs3MaxSeed;
    using fabricsim::Ns3SeedAndRun;
    const uint64_t k = kNs3MaxSeed;
    EXPECT_EQ(k, 4294944442ULL);
    EXPECT_EQ(Ns3SeedAndRun(1), std::make_pair(uint32_t(1), uint64_t(1)));
    EXPECT_EQ(Ns3SeedAndRun(k), std::make_pair(uint32_t(k), uint64_t(1)));
    EXPECT_EQ(Ns3SeedAndRun(k + 1), std::make_pair(uint32_t(1), uint64_t(2)));
    std::set<std::pair<uint32_t, uint64_t>> seen;
    // Around each multiple of the valid range, the old 2^32 - 1 fold and both ends.
    for (uint64_t s : {uint64_t(1),
                       uint64_t(2),
                       k - 1,
                       k,
                       k + 1,
                       k + 2,
                       uint64_t(0xffffffffULL),
                       uint64_t(0x100000000ULL),
                       2 * k - 1,
                       2 * k,
                       2 * k + 1,
                       uint64_t(8589911737ULL),
                       UINT64_MAX - 1,
                       UINT64_MAX})
    {
        const auto p = Ns3SeedAndRun(s);
        EXPECT_GE(p.first, 1u) << s; // ns-3 seeds are never 0
        EXPECT_LE(p.first, k) << s;  // nor past MRG32k3a's range
        EXPECT_GE(p.second, 1u) << s;
        EXPECT_TRUE(seen.insert(p).second) << s << " shares its (seed, run) with another seed";
    }
}

// The band ns-3 refused, and a seed that folded into it, run to the end on every command that
// seeds ns-3: a fabric run, an inference run on both backends and a collective sweep.
TEST(Seed, SeedsAtTheEdgeOfNs3sRangeRunOnEveryCommand)
{
    const std::string dir = fabricsim::test::TempDir("seededge");
    const std::string src = FABRICSIM_SOURCE_DIR;
    json inference
        = {{"seed", 1},
           {"model", "Qwen3-30B-A3B"},
           {"hardware", "H100"},
           {"parallelism", {{"tp", 1}, {"dp", 8}, {"ep", 8}, {"dp_attention", true}}},
           {"serving",
            {{"requests",
              {{"rate_per_s", 100}, {"count", 2}, {"prompt_tokens", 16}, {"output_tokens", 2}}}}},
           {"topology", fabricsim::test::SmallRailTopology()}};
    const std::string inf = dir + "/inference.json";
    std::ofstream(inf) << inference.dump();
    const std::string fabric = dir + "/fabric.json";
    std::ofstream(fabric) << PoissonScenario(1).dump();
    for (const uint64_t seed : {uint64_t(4294944442ULL),
                                uint64_t(4294944443ULL),
                                uint64_t(4294967295ULL),
                                uint64_t(8589911737ULL),
                                uint64_t(UINT64_MAX)})
    {
        const std::string set = " --set seed=" + std::to_string(seed);
        const std::string o = dir + "/" + std::to_string(seed);
        for (const std::string& args :
             {"run " + fabric + set + " --out " + o + "-fabric",
              "run " + inf + set + " --backend analytical --out " + o + "-analytical",
              "run " + inf + set + " --backend packet --out " + o + "-packet",
              "collective " + fabric + set
                  + " --coll allreduce --algo ring -b 64K -e 64K -n 1 "
                    "-w 0 --out "
                  + o + "-collective"})
        {
            std::string log;
            EXPECT_EQ(fabricsim::test::RunCli(args, log), 0) << args << "\n" << log;
        }
        const json s = json::parse(fabricsim::test::ReadFile(o + "-fabric/summary.json"));
        EXPECT_EQ(s["seed"].get<uint64_t>(), seed);
    }
}

TEST(Seed, SeedsPastTwoToTheThirtyTwoGiveTheirOwnTraffic)
{
    const std::string one = FlowsOf(1, "seed1");
    EXPECT_NE(FlowsOf((uint64_t(1) << 32) + 1, "seed2p32p1"), one);
    EXPECT_NE(FlowsOf(uint64_t(1) << 32, "seed2p32"), one);
    EXPECT_EQ(FlowsOf(1, "seed1again"), one);
}

TEST(Seed, OutOfRangeSeedsAreRefused)
{
    std::string out;
    const std::string dir = fabricsim::test::TempDir("seedbad");
    for (const char* bad : {"seed=0", "seed=-1", "seed=1.5", "switch.ecmp_seed=4294967296"})
    {
        EXPECT_EQ(fabricsim::test::RunCli("run " + std::string(FABRICSIM_SOURCE_DIR)
                                              + "/scenarios/fabric-incast.json --set " + bad
                                              + " --out " + dir + "/o",
                                          out),
                  2)
            << bad << ": " << out;
    }
    EXPECT_NE(out.find("field 'switch.ecmp_seed': expected an integer from 0 to 4294967295"),
              std::string::npos)
        << out;
}
