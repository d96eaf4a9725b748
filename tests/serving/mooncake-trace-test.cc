// Mooncake's conversation trace (data/serving/mooncake-traces), read as is: each request's
// prompt becomes one run per hash id, and a replay whose requests never overlap finds in the
// cache exactly the blocks an earlier request's prompt computed.

#include "../unique-temp-path.h"
#include "input-error.h"
#include "serving-test-util.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>

namespace fabricsim
{
namespace
{

using nlohmann::json;

const std::string kTrace
    = std::string(FABRICSIM_SOURCE_DIR) + "/data/serving/mooncake-traces/conversation_trace.jsonl";

TraceFormat
Mooncake()
{
    TraceFormat f;
    f.mooncake = true;
    return f;
}

std::vector<json>
TraceLines(size_t n)
{
    std::ifstream in(kTrace);
    std::vector<json> out;
    std::string line;
    while (out.size() < n && std::getline(in, line))
    {
        out.push_back(json::parse(line));
    }
    return out;
}

} // namespace

TEST(MooncakeTrace, RowsBecomeRunsOfTheirHashIds)
{
    const auto requests = LoadRequestTrace(kTrace, 1, 12, Mooncake());
    ASSERT_EQ(requests.size(), 12u);
    // Line 1: 6,758 tokens in 14 ids, 13 of 512 and a last one of 102; line 11 at 3,000 ms.
    const Request& r = requests[0];
    EXPECT_EQ(r.promptTokens, 6758u);
    EXPECT_EQ(r.outputTokens, 500u);
    ASSERT_EQ(r.content.size(), 14u);
    EXPECT_EQ(r.content[0].content, ContentId(ContentKind::TraceBlock, 0));
    EXPECT_EQ(r.content[13].content, ContentId(ContentKind::TraceBlock, 13));
    EXPECT_EQ(r.content[13].tokens, 102u);
    EXPECT_EQ(requests[10].arrivalPs, 3000000000000);
    // Lines 1 and 2 share their first id only: their first 32 blocks of 16 tokens.
    const auto a = BlockHashes(requests[0].content, 16);
    const auto b = BlockHashes(requests[1].content, 16);
    EXPECT_EQ(a[31], b[31]);
    EXPECT_NE(a[32], b[32]);
}

TEST(MooncakeTrace, MisreadRowsAreRefused)
{
    const std::string dir = test::UniqueTempPath("mooncake");
    const std::string bad = dir + "-bad.jsonl";
    {
        std::ofstream(bad) << R"({"timestamp": 0, "input_length": 600, "output_length": 3, )"
                           << R"("hash_ids": [1]})"
                           << "\n";
    }
    // 600 tokens need 2 ids of 512.
    EXPECT_THROW(LoadRequestTrace(bad, 1, 0, Mooncake()), InputError);
    // Read as a generic trace, its ms would be taken for seconds: refused, naming hash_ids.
    EXPECT_THROW(LoadRequestTrace(kTrace), InputError);
    std::remove(bad.c_str());
}

// The first 40 requests, 1,000 times slower (every request done before the next arrives), in
// a cache too large to evict: a request's hit is its longest run of leading 16-token blocks
// that lie, with the same ids before them, inside an earlier request's prompt's full blocks,
// at most prompt - 1 tokens.
TEST(MooncakeTrace, ReplayHitsWhatEarlierPromptsComputed)
{
    const size_t n = 40;
    const InferenceScenario sc
        = MakeScenario({{"serving",
                         {{"requests",
                           {{"trace", kTrace},
                            {"format", "mooncake"},
                            {"limit", n},
                            {"time_scale", 1000},
                            {"rate_per_s", nullptr},
                            {"count", nullptr},
                            {"prompt_tokens", nullptr},
                            {"output_tokens", nullptr}}},
                          {"kv_cache", {{"prefix_caching", true}, {"num_blocks", 100000}}},
                          {"batching", {{"max_num_batched_tokens", 16384}}}}}});
    const ServingResult r = RunOnFake(sc);
    ASSERT_EQ(r.Completed(), n);

    std::set<std::pair<std::vector<uint64_t>, uint64_t>> computed; // (ids so far, sub-block)
    uint64_t prompt = 0;
    uint64_t cached = 0;
    const auto lines = TraceLines(n);
    for (size_t i = 0; i < n; ++i)
    {
        const auto ids = lines[i]["hash_ids"].get<std::vector<uint64_t>>();
        const uint64_t p = lines[i]["input_length"].get<uint64_t>();
        auto key = [&](uint64_t j)
        {
            return std::make_pair(std::vector<uint64_t>(ids.begin(), ids.begin() + j / 32 + 1),
                                  j % 32);
        };
        uint64_t hit = 0;
        while (hit < (p - 1) / 16 && computed.count(key(hit)))
        {
            ++hit;
        }
        EXPECT_EQ(r.requests[i].cachedPromptTokens, 16 * hit) << "line " << i + 1;
        for (uint64_t j = 0; j < p / 16; ++j)
        {
            computed.insert(key(j));
        }
        prompt += p;
        cached += 16 * hit;
    }
    EXPECT_GT(cached, 0u);
    const json pc = r.ToJson(false)["prefix_cache"];
    EXPECT_EQ(pc["prompt_tokens"], prompt);
    EXPECT_EQ(pc["cached_tokens"], cached);
}

} // namespace fabricsim
