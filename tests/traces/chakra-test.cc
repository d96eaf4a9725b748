#include "chakra-import.h"
#include "compressed-file.h"
#include "file-reader.h"
#include "input-error.h"
#include "trace-test-util.h"

#include <gtest/gtest.h>

#include <map>

namespace fabricsim
{
namespace
{

TEST(ChakraCorpus, TheRealTraceDecodesNodeForNode)
{
    REQUIRE_SHARED_CORPUS(path, "traces/chakra/chakra.0.et");
    const std::string bytes
        = ReadFileBounded(path, "Chakra trace", fabricsim::kBinaryDataFileLimits);
    ChakraTrace t = ParseChakra(bytes, path);
    EXPECT_EQ(t.version, "");
    std::map<std::string, std::string> meta;
    for (const ChakraAttr& a : t.metadataAttrs)
    {
        meta[a.name] = a.stringValue;
    }
    EXPECT_EQ(meta["schema"], "1.0.1");
    EXPECT_EQ(meta["time"], "2023-12-14 11:55:01");
    ASSERT_EQ(t.nodes.size(), 3664u);
    std::map<uint32_t, int> types;
    std::map<uint64_t, int64_t> sizes;
    int withDuration = 0;
    for (const ChakraNode& n : t.nodes)
    {
        types[n.type]++;
        withDuration += n.durationMicros != 0;
        EXPECT_EQ(n.ctrlDeps.size(), 1u) << n.id;
        EXPECT_EQ(n.startTimeMicros, 0u);
        if (const ChakraAttr* s = n.Attr("comm_size"))
        {
            sizes[n.id] = s->intValue;
            EXPECT_EQ(n.Attr("involved_dim")->intList, std::vector<int64_t>{1});
        }
    }
    EXPECT_EQ(types[4], 3643);
    EXPECT_EQ(types[7], 21);
    EXPECT_EQ(withDuration, 3507);
    EXPECT_EQ(t.nodes.front().id, 216u);
    EXPECT_EQ(t.nodes.back().id, 7022u);
    const std::map<uint64_t, int64_t> expected = {{435, 212480},
                                                  {622, 424},
                                                  {3256, 8196000},
                                                  {3512, 31502336},
                                                  {3686, 26255360},
                                                  {4486, 26550272},
                                                  {5700, 9724160}};
    EXPECT_EQ(sizes, expected);
    // Re-encoding what was read reproduces the file byte for byte.
    EXPECT_EQ(SerializeChakra(t), bytes);
}

TEST(ChakraCorpus, ImportKeepsEveryNodeAndSizesTheGpuCollectives)
{
    REQUIRE_SHARED_CORPUS(path, "traces/chakra/chakra.0.et");
    ImportedTrace tr = ImportChakra({path});
    ASSERT_EQ(tr.ranks.size(), 1u);
    const RankTrace& r = tr.ranks[0];
    EXPECT_EQ(r.ops.size(), 3664u);
    EXPECT_EQ(tr.counts["chakra_nodes"], 3664u);
    EXPECT_EQ(tr.counts["comp_nodes"], 3643u);
    EXPECT_EQ(tr.counts["comm_coll_nodes"], 21u);
    EXPECT_EQ(tr.counts["sized_collectives"], 7u);
    EXPECT_EQ(tr.counts["comm_coll_cpu_side"], 14u);
    std::vector<uint64_t> sized;
    size_t deps = 0;
    for (const TraceOp& op : r.ops)
    {
        deps += op.deps.size();
        if (op.kind == TraceOpKind::kCollective)
        {
            EXPECT_TRUE(op.sized) << op.name;
            sized.push_back(op.bytes);
            EXPECT_EQ(op.collective,
                      op.bytes < 300000 ? CollectiveKind::kBroadcast : CollectiveKind::kAllReduce);
        }
    }
    EXPECT_EQ(sized,
              (std::vector<uint64_t>{212480, 424, 8196000, 31502336, 26255360, 26550272, 9724160}));
    // Each node has one control dependency; the data dependencies (median 13) are the edges.
    EXPECT_EQ(tr.counts["ctrl_deps"], 3664u);
    EXPECT_GT(tr.counts["data_deps"], 13u * 3664 / 2);
    EXPECT_EQ(deps + tr.counts["unresolved_deps"] <= tr.counts["data_deps"], true);
    EXPECT_GT(deps, 0u);
}

TEST(ChakraCorpus, TheTwoRankJobReplaysWithItsCollectivesOnTheFabric)
{
    REQUIRE_SHARED_CORPUS(path, "traces/chakra/chakra.0.et");
    ChakraImportOptions opt;
    opt.worldSize = 2; // the job had two ranks; the trace does not say so
    ImportedTrace tr = ImportChakra({path}, opt);
    ASSERT_EQ(tr.ranks.size(), 2u);
    EXPECT_EQ(tr.ranks[1].mirrorOf, 0);
    TestFabric fabric(2, 300);
    ReplayRun run = fabric.Replay(tr, {});
    ASSERT_TRUE(run.complete) << (run.stuck.empty() ? "" : run.stuck[0]);
    int simulated = 0;
    for (const ReplayedComm& c : run.comms)
    {
        simulated += c.simulated;
        EXPECT_EQ(c.members, 2u);
    }
    EXPECT_EQ(simulated, 7);
    // The GPU work alone (CPU ops take no time) bounds the replayed step from below.
    int64_t gpu = 0;
    for (const TraceOp& op : tr.ranks[0].ops)
    {
        gpu += op.kind == TraceOpKind::kCompute && op.lane == 0 ? op.durationPs : 0;
    }
    EXPECT_GE(run.spanPs, gpu);
}

TEST(ChakraCorpus, ControlDependenciesOfPyTorchTracesFormCyclesAndAreRefused)
{
    REQUIRE_SHARED_CORPUS(path, "traces/chakra/chakra.0.et");
    ChakraImportOptions opt;
    opt.ctrlDeps = true; // aten::mul(0) (node 3317) and its kernel (3318) depend on each other
    try
    {
        ImportChakra({path}, opt);
        FAIL() << "no error";
    }
    catch (const fabricsim::InputError& e)
    {
        EXPECT_EQ(e.Expected(), "an acyclic dependency graph");
        EXPECT_NE(e.Found().find("3317"), std::string::npos) << e.what();
    }
}

TEST(ChakraCorpus, AstraMicrobenchmarksImportAsOneCollectivePerRank)
{
    struct Case
    {
        const char* dir;
        const char* name;
        int ranks;
        CollectiveKind kind;
    };
    const Case cases[]
        = {{"all_reduce/8npus_1MB", "all_reduce", 8, CollectiveKind::kAllReduce},
           {"all_reduce/4npus_1MB", "all_reduce", 4, CollectiveKind::kAllReduce},
           {"all_gather/8npus_1MB", "all_gather", 8, CollectiveKind::kAllGather},
           {"reduce_scatter/8npus_1MB", "reduce_scatter", 8, CollectiveKind::kReduceScatter},
           {"all_to_all/8npus_1MB", "all_to_all", 8, CollectiveKind::kAllToAll}};
    for (const Case& c : cases)
    {
        std::vector<std::string> files;
        for (int r = c.ranks - 1; r >= 0; --r) // any order: the file names carry the ranks
        {
            REQUIRE_SHARED_CORPUS(f,
                                  std::string("traces/chakra/astra-microbench/") + c.dir + "/"
                                      + c.name + "." + std::to_string(r) + ".et");
            files.push_back(f);
        }
        ImportedTrace tr = ImportChakra(files);
        ASSERT_EQ(tr.ranks.size(), size_t(c.ranks)) << c.dir;
        for (const RankTrace& r : tr.ranks)
        {
            EXPECT_EQ(r.mirrorOf, -1);
            ASSERT_EQ(r.ops.size(), 1u);
            EXPECT_EQ(r.ops[0].kind, TraceOpKind::kCollective);
            EXPECT_EQ(r.ops[0].collective, c.kind);
            EXPECT_EQ(r.ops[0].bytes, 1048576u);
            EXPECT_EQ(r.ops[0].sourceId, r.rank); // the node id is the rank, 0 left out of rank 0
        }
        // Replayed on an 8-GPU NVSwitch-like fabric, all ranks finish one collective.
        TestFabric fabric(8);
        ReplayRun run = fabric.Replay(tr, {});
        ASSERT_TRUE(run.complete) << c.dir;
        ASSERT_EQ(run.comms.size(), 1u);
        EXPECT_EQ(run.comms[0].members, uint32_t(c.ranks));
        EXPECT_GT(run.comms[0].replayedUs, 2.0); // 1 MiB over 450 GB/s links plus latency
        EXPECT_LT(run.comms[0].replayedUs, 60.0);
    }
}

TEST(ChakraExport, AnExportedTraceImportsToTheSameOpsAndTimes)
{
    ImportedTrace tr;
    tr.format = "test";
    tr.worldSize = 2;
    RankTrace r;
    TraceOp c;
    c.name = "gemm";
    c.opClass = OpClass::kGemm;
    c.durationPs = 1234567; // not whole microseconds: kept exactly by the fabricsim_* attributes
    TraceOp ar;
    ar.name = "allreduce";
    ar.kind = TraceOpKind::kCollective;
    ar.collective = CollectiveKind::kAllReduce;
    ar.collectiveName = "allreduce";
    ar.sized = true;
    ar.bytes = 4 << 20;
    ar.groupRanks = {0, 1};
    ar.group = "pg0";
    ar.opClass = OpClass::kComm;
    ar.deps = {{0, 500000}};
    TraceOp after = c;
    after.deps = {{1, 0}};
    after.lane = 3;
    r.ops = {c, ar, after};
    r.ops[0].releasePs = 7000;
    tr.ranks.push_back(r);
    tr.ranks.push_back(r);
    tr.ranks[1].rank = 1;

    ImportedTrace back;
    for (uint32_t k = 0; k < 2; ++k)
    {
        const std::string bytes = SerializeChakra(ExportChakra(tr, k));
        ImportChakraTrace(ParseChakra(bytes, "x"), "x." + std::to_string(k) + ".et", k, {}, back);
        // A plain Chakra reader sees whole microseconds and the standard attributes.
        ChakraTrace plain = ParseChakra(bytes, "x");
        EXPECT_EQ(plain.nodes[0].durationMicros, 1u);
        EXPECT_EQ(plain.nodes[1].type, uint32_t(ChakraNodeType::kCommColl));
        EXPECT_EQ(plain.nodes[1].Attr("comm_size")->intValue, 4 << 20);
        EXPECT_EQ(plain.nodes[1].dataDeps, std::vector<uint64_t>{1});
    }
    CompleteRanks(back);
    ASSERT_EQ(back.ranks.size(), 2u);
    for (const RankTrace& rt : back.ranks)
    {
        ASSERT_EQ(rt.ops.size(), 3u);
        EXPECT_EQ(rt.ops[0].durationPs, 1234567);
        EXPECT_EQ(rt.ops[0].releasePs, 7000);
        EXPECT_EQ(rt.ops[1].bytes, uint64_t(4 << 20));
        EXPECT_EQ(rt.ops[1].groupRanks, (std::vector<uint32_t>{0, 1}));
        EXPECT_EQ(rt.ops[1].deps[0].lagPs, 500000);
        EXPECT_EQ(rt.ops[2].lane, 3u);
    }
    TestFabric f1(2);
    TestFabric f2(2);
    ReplayRun a = f1.Replay(tr, {});
    ReplayRun b = f2.Replay(back, {});
    ASSERT_TRUE(a.complete);
    EXPECT_EQ(a.spanPs, b.spanPs);
    // 7 ns release + 1.234567 us compute + 0.5 us gap + the all-reduce + 1.234567 us.
    EXPECT_GT(a.spanPs, 7000 + 2 * 1234567 + 500000);
}

TEST(ChakraImport, BadFilesAreInputErrors)
{
    EXPECT_THROW(ImportChakra({"/nonexistent/x.0.et"}), fabricsim::InputError);
    ChakraTrace t;
    ChakraNode n;
    n.id = 5;
    n.type = uint32_t(ChakraNodeType::kCommSend);
    n.attrs.push_back(ChakraAttr::Int64("comm_size", 10));
    t.nodes = {n};
    ImportedTrace out;
    // A send without a destination cannot be replayed.
    EXPECT_THROW(ImportChakraTrace(t, "s.et", 0, {}, out), fabricsim::InputError);
    t.nodes = {n, n};
    t.nodes[0].type = 4;
    EXPECT_THROW(ImportChakraTrace(t, "dup.et", 0, {}, out), fabricsim::InputError);
    // Start times are epoch microseconds (1.7e15 today): fine, and only their offset becomes
    // ps; an offset past 2^40 us (12.7 days) is named as the start time, not the duration.
    ChakraNode c;
    c.id = 1;
    c.type = uint32_t(ChakraNodeType::kComp);
    c.durationMicros = 5;
    c.startTimeMicros = 1700000000000000;
    ChakraNode late = c;
    late.id = 2;
    late.startTimeMicros = c.startTimeMicros + (uint64_t(1) << 40);
    t.nodes = {c, late};
    ImportedTrace ok;
    EXPECT_NO_THROW(ImportChakraTrace(t, "epoch.et", 0, {}, ok));
    t.nodes[1].startTimeMicros += 1;
    try
    {
        ImportedTrace bad;
        ImportChakraTrace(t, "late.et", 0, {}, bad);
        FAIL() << "a start 2^40 + 1 us after the first was accepted";
    }
    catch (const fabricsim::InputError& e)
    {
        EXPECT_EQ(e.Field(), "node 2 start_time_micros");
    }
    EXPECT_EQ(RankFromChakraName("dir/all_reduce.7.et"), 7);
    EXPECT_EQ(RankFromChakraName("chakra.et"), -1);
}

} // namespace
} // namespace fabricsim
