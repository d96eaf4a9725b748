// `fabricsim run --memo on` and `replay --memo on` (the collective memo,
// collectives/helper/collective-memo.h): on every serving layout, and replaying its recorded
// programs, the outputs are byte-identical to `--memo off`, the repeated collectives of a
// tensor-parallel server are replayed, KV handoffs keep the memo from replaying while one can
// start, and bad uses of the option are refused with exit 2.
#include "cli-test-util.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

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

// Disaggregated prefill and decode (bulk KV handoffs): a handoff starts only at the end of a
// step or after an arrival, so the memo replays what ends before any can start and simulates
// the rest (hits fall while KV traffic can flow). Every would-be hit simulated instead
// (verify=1) meets no other traffic in its scope; layer-wise handoffs, which start as a prefill
// computes, keep the memo from replaying at all.
TEST(Memo, KvHandoffsReplayOnlyWhileNoneCanStart)
{
    json sc = {{"seed", 1},
               {"model", "Llama-3-8B"},
               {"hardware", "H100"},
               {"serving",
                {{"requests", Requests(6, 64, 8)},
                 {"disaggregation",
                  {{"prefill", {{"parallelism", {{"tp", 4}}}}},
                   {"decode", {{"parallelism", {{"tp", 4}}}}}}}}},
               {"topology", fabricsim::test::SmallRailTopology()}};
    sc["serving"]["requests"]["rate_per_s"] = 200; // handoffs while others decode
    const json memo = OnEqualsOff(sc, "disagg");
    const uint64_t lookups = memo["lookups"].get<uint64_t>();
    EXPECT_GT(memo["hits"].get<uint64_t>(), lookups / 2) << memo.dump();
    EXPECT_GT(memo["misses"].value("horizon", 0), 0) << memo.dump();

    const std::string dir = fabricsim::test::TempDir("memo-disagg-verify");
    const std::string file = WriteScenario(dir, "scenario.json", sc);
    std::string log;
    ASSERT_EQ(RunCli("run " + file + " --memo verify=1 --out " + dir + "/v", log), 0) << log;
    const json v = json::parse(ReadFile(dir + "/v/timing.json"))["memo"]["verify"];
    EXPECT_EQ(v["checked"], memo["hits"]) << v.dump();
    EXPECT_EQ(v["inconclusive"], 0) << v.dump(); // no KV send entered a would-be replay
    EXPECT_EQ(v["mismatches"], 0) << v.dump();

    sc["serving"]["disaggregation"]["kv_transfer"] = "layerwise";
    sc["serving"]["requests"] = Requests(3, 64, 4);
    const json layerwise = OnEqualsOff(sc, "disagg-layerwise");
    EXPECT_EQ(layerwise["hits"].get<uint64_t>(), 0u) << layerwise.dump();
    EXPECT_EQ(layerwise["misses"].value("unpredictable caller", 0), layerwise["lookups"])
        << layerwise.dump();
}

/// Records \p sc's programs, replays them on its own fabric (packet backend) with the memo off
/// and with each of \p modes; expects the reports byte-identical and returns the memo's
/// figures per mode.
std::map<std::string, json>
ReplayOnEqualsOff(const json& sc, const std::string& tag, const std::vector<std::string>& modes)
{
    const std::string dir = fabricsim::test::TempDir("memo-replay-" + tag);
    const std::string file = WriteScenario(dir, "scenario.json", sc);
    std::string log;
    EXPECT_EQ(RunCli("run " + file + " --record --out " + dir + "/rec", log), 0) << log;
    std::vector<std::string> all{"off"};
    all.insert(all.end(), modes.begin(), modes.end());
    std::map<std::string, json> out;
    for (const std::string& m : all)
    {
        EXPECT_EQ(RunCli("replay " + dir + "/rec/programs.jsonl --scenario " + file
                             + " --backend packet --memo " + m + " --out " + dir + "/" + m,
                         log),
                  0)
            << log;
        for (const std::string f : {"replay.json", "communication.csv"})
        {
            const std::string off = ReadFile(dir + "/off/" + f);
            EXPECT_FALSE(off.empty()) << f;
            EXPECT_EQ(ReadFile(dir + "/" + m + "/" + f), off) << f << " differs with --memo " << m;
        }
        const std::string figures = ReadFile(dir + "/" + m + "/memo.json");
        EXPECT_EQ(figures.empty(), m == "off") << m;
        out[m] = figures.empty() ? json() : json::parse(figures);
    }
    return out;
}

// `replay --memo` on recorded programs: a tensor-parallel server's all-reduces replay, a
// pipeline's sends keep some from replaying (the trace's own horizon), verification agrees,
// and the reports are those of the memo off.
TEST(Memo, ReplayedProgramTracesGiveIdenticalReports)
{
    json tp = {{"seed", 1},
               {"model", "Llama-3-8B"},
               {"hardware", "H100"},
               {"parallelism", {{"tp", 8}}},
               {"serving", {{"requests", Requests(2, 64, 4)}}},
               {"topology", OneServer()}};
    const json memo = ReplayOnEqualsOff(tp, "tp8", {"on"})["on"];
    EXPECT_GT(memo["lookups"].get<uint64_t>(), 250u);
    EXPECT_GE(memo["hits"].get<uint64_t>(), memo["lookups"].get<uint64_t>() - 8) << memo.dump();

    json pp = tp;
    pp["parallelism"] = {{"tp", 4}, {"pp", 2}};
    pp["topology"] = fabricsim::test::SmallRailTopology();
    pp["serving"]["requests"] = Requests(4, 64, 4);
    std::map<std::string, json> ran = ReplayOnEqualsOff(pp, "pp", {"on", "verify=2"});
    const json memoPp = ran["on"];
    EXPECT_GT(memoPp["hits"].get<uint64_t>(), memoPp["lookups"].get<uint64_t>() / 2)
        << memoPp.dump();
    EXPECT_GT(memoPp["misses"].value("horizon", 0), 0) << memoPp.dump();

    const json v = ran["verify=2"]["verify"];
    EXPECT_GT(v["checked"].get<uint64_t>(), 20u) << v.dump();
    EXPECT_EQ(v["mismatches"], 0) << v.dump();
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
    // replay: the memo replays packet-level collectives only; nothing is written.
    EXPECT_EQ(RunCli("replay " + dir + "/none.jsonl --scenario " + inference + " --memo on --out "
                         + dir + "/d",
                     log),
              2);
    EXPECT_NE(log.find("'--memo': expected --backend packet"), std::string::npos) << log;
    EXPECT_EQ(RunCli("replay " + dir + "/none.jsonl --scenario " + inference
                         + " --backend packet --memo verify=0 --out " + dir + "/e",
                     log),
              2);
    for (const std::string out : {"a", "b", "c", "d", "e"})
    {
        EXPECT_TRUE(ReadFile(dir + "/" + out + "/summary.json").empty()) << out;
        EXPECT_TRUE(ReadFile(dir + "/" + out + "/replay.json").empty()) << out;
    }
}

} // namespace
