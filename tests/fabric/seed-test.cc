// Every 64-bit scenario seed is honoured: ns-3's seed is 32 bits, so seeds past 2^32 once
// truncated (2^32 + 1 ran as seed 1) or, at 2^32, reached ns-3 as the invalid seed 0.
#include "fabric-setup.h"
#include "scenario-runner.h"

#include <gtest/gtest.h>

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
    using fabricsim::Ns3SeedAndRun;
    const uint64_t k = 0xffffffffULL;
    EXPECT_EQ(Ns3SeedAndRun(1), std::make_pair(uint32_t(1), uint64_t(1)));
    EXPECT_EQ(Ns3SeedAndRun(k), std::make_pair(uint32_t(k), uint64_t(1)));
    std::set<std::pair<uint32_t, uint64_t>> seen;
    // Around each multiple of 2^32 - 1 and at both ends of the range.
    for (uint64_t s : {uint64_t(1),
                       uint64_t(2),
                       k - 1,
                       k,
                       k + 1,
                       k + 2,
                       2 * k - 1,
                       2 * k,
                       2 * k + 1,
                       UINT64_MAX - 1,
                       UINT64_MAX})
    {
        const auto p = Ns3SeedAndRun(s);
        EXPECT_GE(p.first, 1u) << s; // ns-3 seeds are never 0
        EXPECT_GE(p.second, 1u) << s;
        EXPECT_TRUE(seen.insert(p).second) << s << " shares its (seed, run) with another seed";
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
