// `fabricsim run --memo on` (the collective memo, collectives/helper/collective-memo.h): on
// every serving layout the outputs are byte-identical to `--memo off`, the repeated
// collectives of a tensor-parallel server are replayed, KV handoffs keep the memo from
// replaying, and bad uses of the option are refused with exit 2.
#include "cli-test-util.h"

#include <gtest/gtest.h>

namespace
{

using fabricsim::test::ReadFile;
using fabricsim::test::RunCli;
using fabricsim::test::WriteScenario;
using nlohmann::json;

/// Runs \p sc with the memo off and on; expects every output but timing.json and
/// provenance.json (which holds the command line) byte-identical; returns the memo's figures.
json
OnEqualsOff(const json& sc, const std::string& tag)
{
    const std::string dir = fabricsim::test::TempDir("memo-" + tag);
    const std::string file = WriteScenario(dir, "scenario.json", sc);
    std::string log;
    for (const std::string memo : {"off", "on"})
    {
        EXPECT_EQ(RunCli("run " + file + " --memo " + memo + " --out " + dir + "/" + memo, log), 0)
            << log;
    }
    for (const std::string f : {"summary.json", "requests.csv", "steps.csv"})
    {
        const std::string off = ReadFile(dir + "/off/" + f);
        EXPECT_FALSE(off.empty()) << f;
        EXPECT_EQ(ReadFile(dir + "/on/" + f), off) << f << " differs with the memo on";
    }
    EXPECT_TRUE(json::parse(ReadFile(dir + "/off/timing.json"))["memo"].is_null());
    return json::parse(ReadFile(dir + "/on/timing.json"))["memo"];
}

json
Requests(int count, int prompt, int output)
{
    return {
        {"rate_per_s", 0}, {"count", count}, {"prompt_tokens", prompt}, {"output_tokens", output}};
}

/// One server of 8 H100s (scale-up switch) with a rail fabric beside it.
json
OneServer()
{
    json t = fabricsim::test::SmallRailTopology();
    t["servers"] = 1;
    t["accels_per_server"] = 8;
    return t;
}

// Tensor parallelism inside a server: every layer's all-reduce after the first few is a replay.
TEST(Memo, TensorParallelServerReplaysItsAllReducesWithIdenticalOutputs)
{
    json sc = {{"seed", 1},
               {"model", "Llama-3-8B"},
               {"hardware", "H100"},
               {"parallelism", {{"tp", 8}}},
               {"serving", {{"requests", Requests(2, 64, 6)}}},
               {"topology", OneServer()}};
    const json memo = OnEqualsOff(sc, "tp8");
    const uint64_t lookups = memo["lookups"].get<uint64_t>();
    const uint64_t hits = memo["hits"].get<uint64_t>();
    // 32 layers x 2 all-reduces a step: all but the first occurrences of each size replay.
    EXPECT_GT(lookups, 300u);
    EXPECT_GE(hits, lookups - 8) << memo.dump();
    EXPECT_EQ(memo["recorded"].get<uint64_t>() + memo["not_stored"].value("queue pairs opened", 0),
              memo["misses"].value("first of its kind", 0)
                  + memo["misses"].value("another fabric state", 0))
        << memo.dump();
    EXPECT_GT(memo["events_skipped_estimate"].get<uint64_t>(), 0u);

    // --memo verify=3: every third hit simulated and compared with its entry; all agree, and
    // the outputs are those of --memo off.
    const std::string dir = fabricsim::test::TempDir("memo-verify");
    const std::string file = WriteScenario(dir, "scenario.json", sc);
    std::string log;
    ASSERT_EQ(RunCli("run " + file + " --memo verify=3 --out " + dir + "/v", log), 0) << log;
    const json v = json::parse(ReadFile(dir + "/v/timing.json"))["memo"]["verify"];
    EXPECT_GT(v["checked"].get<uint64_t>(), 50u) << v.dump();
    EXPECT_EQ(v["mismatches"], 0) << v.dump();
    EXPECT_EQ(v["max_completion_deviation_ps"], 0);
    EXPECT_EQ(v["max_counter_deviation"], 0);
    ASSERT_EQ(RunCli("run " + file + " --memo off --out " + dir + "/off", log), 0) << log;
    EXPECT_EQ(ReadFile(dir + "/v/summary.json"), ReadFile(dir + "/off/summary.json"));
}

// Expert parallelism across two servers (all-to-alls over the rails and the spine), tensor
// parallelism across them, and a pipeline: identical outputs whatever the memo replays.
TEST(Memo, LayoutsAcrossServersGiveIdenticalOutputs)
{
    json ep = fabricsim::test::SmallInference(Requests(8, 32, 4));
    const json memoEp = OnEqualsOff(ep, "ep");
    EXPECT_GT(memoEp["lookups"].get<uint64_t>(), 0u);

    json tp = {{"seed", 1},
               {"model", "Llama-3-8B"},
               {"hardware", "H100"},
               {"parallelism", {{"tp", 8}}},
               {"serving", {{"requests", Requests(2, 32, 4)}}},
               {"topology", fabricsim::test::SmallRailTopology()}};
    OnEqualsOff(tp, "tp-across");

    json pp = tp;
    pp["parallelism"] = {{"tp", 4}, {"pp", 2}};
    OnEqualsOff(pp, "pp");
}

// Disaggregated prefill and decode: a KV handoff may start whenever a prefill ends, so no
// collective can be sure its span stays its own; the memo simulates everything.
TEST(Memo, KvHandoffsKeepItFromReplaying)
{
    json sc = {{"seed", 1},
               {"model", "Llama-3-8B"},
               {"hardware", "H100"},
               {"serving",
                {{"requests", Requests(3, 64, 4)},
                 {"disaggregation",
                  {{"prefill", {{"parallelism", {{"tp", 4}}}}},
                   {"decode", {{"parallelism", {{"tp", 4}}}}}}}}},
               {"topology", fabricsim::test::SmallRailTopology()}};
    const json memo = OnEqualsOff(sc, "disagg");
    EXPECT_EQ(memo["hits"].get<uint64_t>(), 0u) << memo.dump();
    EXPECT_EQ(memo["misses"].value("unpredictable caller", 0), memo["lookups"]) << memo.dump();
    EXPECT_EQ(memo["recorded"], 0) << memo.dump();
}

TEST(Memo, BadUsesAreRefused)
{
    const std::string dir = fabricsim::test::TempDir("memo-bad");
    const std::string inference
        = WriteScenario(dir, "inference.json", fabricsim::test::SmallInference(Requests(1, 8, 2)));
    std::string log;
    EXPECT_EQ(RunCli("run " + inference + " --memo maybe --out " + dir + "/a", log), 2);
    EXPECT_NE(log.find("'--memo': expected on, off, verify or verify=N (N >= 1), found maybe"),
              std::string::npos)
        << log;
    for (const std::string bad :
         {"verify=0", "verify=", "verify=x", "verifyx", "verify=99999999999"})
    {
        EXPECT_EQ(RunCli("run " + inference + " --memo " + bad + " --out " + dir + "/a", log), 2)
            << bad;
    }
    EXPECT_EQ(
        RunCli("run " + inference + " --memo on --backend analytical --out " + dir + "/b", log), 2);
    EXPECT_NE(log.find("--backend packet"), std::string::npos) << log;
    const std::string fabric
        = WriteScenario(dir,
                        "fabric.json",
                        {{"topology", fabricsim::test::SmallRailTopology()},
                         {"traffic", {{"flows", {{{"src", 0}, {"dst", 1}, {"bytes", 1000}}}}}}});
    EXPECT_EQ(RunCli("run " + fabric + " --memo on --out " + dir + "/c", log), 2);
    EXPECT_NE(log.find("--memo"), std::string::npos) << log;
    for (const std::string out : {"a", "b", "c"})
    {
        EXPECT_TRUE(ReadFile(dir + "/" + out + "/summary.json").empty()) << out;
    }
}

} // namespace
