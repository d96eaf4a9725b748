// The shipped Mooncake replay scenario runs from the command line: prefix-cache figures in
// summary.json and requests.csv; off, neither appears.

#include "cli-test-util.h"

#include <gtest/gtest.h>

#include <filesystem>

using nlohmann::json;
namespace fs = std::filesystem;

TEST(Cli, MooncakeScenarioReportsPrefixCacheHits)
{
    auto dir = fabricsim::test::TempDir("mooncake-cli");
    const std::string sc
        = std::string(FABRICSIM_SOURCE_DIR) + "/scenarios/mooncake-conversation.json";
    std::string out;
    ASSERT_EQ(fabricsim::test::RunCli("run " + sc
                                          + " --backend analytical --no-progress --set "
                                            "serving.requests.limit=30 --out "
                                          + dir + "/on",
                                      out),
              0)
        << out;
    const json s = json::parse(fabricsim::test::ReadFile(dir + "/on/summary.json"));
    const json& pc = s["prefix_cache"];
    // Every line after the first shares at least its first 512-token id with line 1.
    EXPECT_EQ(pc["requests_with_hits"], 29u);
    EXPECT_GE(pc["cached_tokens"].get<uint64_t>(), 29u * 512);
    const std::string csv = fabricsim::test::ReadFile(dir + "/on/requests.csv");
    EXPECT_NE(csv.substr(0, csv.find('\n')).find(",cached_prompt_tokens"), std::string::npos);

    ASSERT_EQ(fabricsim::test::RunCli("run " + sc
                                          + " --backend analytical --no-progress --set "
                                            "serving.requests.limit=30 --set "
                                            "serving.kv_cache.prefix_caching=false --out "
                                          + dir + "/off",
                                      out),
              0)
        << out;
    const json o = json::parse(fabricsim::test::ReadFile(dir + "/off/summary.json"));
    EXPECT_FALSE(o.contains("prefix_cache"));
    EXPECT_EQ(fabricsim::test::ReadFile(dir + "/off/requests.csv").find("cached_prompt_tokens"),
              std::string::npos);
}
