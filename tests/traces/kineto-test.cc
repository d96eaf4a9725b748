#include "compressed-file.h"
#include "file-reader.h"
#include "input-error.h"
#include "kineto-import.h"
#include "trace-test-util.h"

#include <gtest/gtest.h>

#include <map>

namespace fabricsim
{
namespace
{

/// Collectives of the traced rank, in start order.
std::vector<const TraceOp*>
Comms(const RankTrace& r)
{
    std::vector<const TraceOp*> out;
    for (const TraceOp& op : r.ops)
    {
        if (op.IsComm())
        {
            out.push_back(&op);
        }
    }
    return out;
}

TEST(KinetoCorpus, TwoRankTraceSizesEveryNcclKernelFromItsMetadata)
{
    REQUIRE_SHARED_CORPUS(path, "traces/kineto/hta-nccl_data.json.gz");
    ImportedTrace tr = ImportKineto({path});
    EXPECT_EQ(tr.worldSize, 2u);
    ASSERT_EQ(tr.ranks.size(), 2u);
    EXPECT_EQ(tr.ranks[0].mirrorOf, -1);
    EXPECT_EQ(tr.ranks[1].mirrorOf, 0); // rank 1 has no trace: a copy of rank 0
    EXPECT_EQ(tr.ranks[0].device, "NVIDIA A100-PG509-200");
    EXPECT_EQ(tr.counts["profiler_steps"], 3u);
    EXPECT_EQ(tr.counts["nccl_kernels"], 21u);
    EXPECT_EQ(tr.counts["sized_from_kernel_metadata"], 21u);
    EXPECT_EQ(tr.counts["unsized"], 0u);
    std::vector<const TraceOp*> c = Comms(tr.ranks[0]);
    ASSERT_EQ(c.size(), 21u);
    // Each step: 2 broadcasts then 5 all-reduces (README table), elements x element size.
    const uint64_t bytes[]
        = {53120 * 4, 53 * 8, 2049000 * 4, 7875584 * 4, 6563840 * 4, 6637568 * 4, 2431040 * 4};
    for (size_t i = 0; i < c.size(); ++i)
    {
        const TraceOp& op = *c[i];
        EXPECT_EQ(op.bytes, bytes[i % 7]) << i;
        EXPECT_EQ(op.collective,
                  i % 7 < 2 ? CollectiveKind::kBroadcast : CollectiveKind::kAllReduce);
        EXPECT_EQ(op.groupRanks, (std::vector<uint32_t>{0, 1}));
        EXPECT_EQ(op.group, "0");
        EXPECT_EQ(op.seq, i);
        EXPECT_EQ(op.lane, 40u);
    }
    EXPECT_EQ(c[0]->dtype, "Float");
    EXPECT_EQ(c[1]->dtype, "Long");
    // Recorded kernel times are in the README: AllReduce 2,049,000 in step 4 took 3306.963 us.
    EXPECT_EQ(c[2]->durationPs, 3306963000);
    EXPECT_EQ(c[7 + 2]->durationPs, 2520607000);
    // The three steps of about 220 ms each.
    EXPECT_GT(tr.ranks[0].recordedSpanPs, 600e9);
    EXPECT_LT(tr.ranks[0].recordedSpanPs, 700e9);
}

TEST(KinetoCorpus, OneStepCanBeChosen)
{
    REQUIRE_SHARED_CORPUS(path, "traces/kineto/hta-nccl_data.json.gz");
    KinetoOptions opt;
    opt.step = 5;
    ImportedTrace tr = ImportKineto({path}, opt);
    EXPECT_EQ(Comms(tr.ranks[0]).size(), 7u);
    EXPECT_EQ(Comms(tr.ranks[0])[2]->durationPs, 2520607000);
    opt.step = 99;
    try
    {
        ImportKineto({path}, opt);
        FAIL() << "no error";
    }
    catch (const fabricsim::InputError& e)
    {
        EXPECT_EQ(e.Field(), "--step");
        EXPECT_NE(e.Found().find("ProfilerStep#4"), std::string::npos) << e.what();
    }
}

TEST(KinetoCorpus, EightRankTraceWithoutMetadataTakesSizesFromTheCpuOps)
{
    REQUIRE_SHARED_CORPUS(path, "traces/kineto/hta-rank3of8-control.json.gz");
    ImportedTrace tr = ImportKineto({path});
    EXPECT_EQ(tr.worldSize, 8u);
    ASSERT_EQ(tr.ranks.size(), 8u);
    EXPECT_EQ(tr.ranks[3].mirrorOf, -1);
    EXPECT_EQ(tr.ranks[0].mirrorOf, 3);
    EXPECT_EQ(tr.counts["nccl_kernels"], 60u);
    // record_param_comms carries nothing here; the nccl:* annotations give shape and type.
    EXPECT_EQ(tr.counts["sized_from_record_param_comms"], 0u);
    EXPECT_EQ(tr.counts["sized_from_nccl_annotation"], 60u);
    std::map<CollectiveKind, int> kinds;
    for (const TraceOp* op : Comms(tr.ranks[3]))
    {
        kinds[op->collective]++;
        EXPECT_TRUE(op->sized);
        EXPECT_TRUE(op->groupAssumed); // no process-group ranks in this trace format
        EXPECT_EQ(op->lane, 21u);
    }
    EXPECT_EQ(kinds[CollectiveKind::kAllToAll], 42);
    EXPECT_EQ(kinds[CollectiveKind::kAllReduce], 18);
    // nccl:all_reduce with Input Dims [[45310188]] float: 181,240,752 bytes.
    bool found = false;
    for (const TraceOp* op : Comms(tr.ranks[3]))
    {
        found = found
                || (op->collective == CollectiveKind::kAllReduce && op->bytes == 45310188ULL * 4);
    }
    EXPECT_TRUE(found);
    // What was assumed is written down.
    bool noted = false;
    for (const std::string& n : tr.notes)
    {
        noted = noted || n.find("whole world (8 ranks)") != std::string::npos;
    }
    EXPECT_TRUE(noted);
}

TEST(KinetoImport, KernelsWithoutAnySizeAreReportedNotGuessed)
{
    const std::string text = R"JSON({"distributedInfo": {"rank": 0, "world_size": 2},
      "traceEvents": [
        {"ph": "X", "cat": "kernel", "name": "sm80_gemm", "pid": 0, "tid": 7, "ts": 100, "dur": 10,
         "args": {"stream": 7, "correlation": 1}},
        {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllGather_RING_LL(ncclDevComm*)", "pid": 0, "tid": 9,
         "ts": 111, "dur": 30, "args": {"stream": 9, "correlation": 2}},
        {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", "pid": 0, "tid": 9,
         "ts": 150, "dur": 20, "args": {"stream": 9, "correlation": 3, "Collective name": "allreduce",
         "In msg nelems": 1024, "Out msg nelems": 1024, "dtype": "BFloat16", "Group size": 2,
         "Process Group Name": "1", "Process Group Ranks": "[0, 1]"}},
        {"ph": "X", "cat": "kernel", "name": "elementwise", "pid": 0, "tid": 7, "ts": 171, "dur": 5,
         "args": {"stream": 7, "correlation": 4}}
      ]})JSON";
    ImportedTrace tr;
    ImportKinetoText(text, "mem.json", 0, {}, tr);
    CompleteRanks(tr);
    const RankTrace& r = tr.ranks[0];
    ASSERT_EQ(r.ops.size(), 4u);
    EXPECT_EQ(r.ops[0].opClass, OpClass::kGemm);
    EXPECT_FALSE(r.ops[1].sized);
    EXPECT_EQ(r.ops[1].collective, CollectiveKind::kAllGather);
    EXPECT_NE(r.ops[1].missing.find("no collective metadata"), std::string::npos);
    EXPECT_TRUE(r.ops[2].sized);
    EXPECT_EQ(r.ops[2].bytes, 2048u);
    EXPECT_EQ(tr.counts["unsized"], 1u);
    // The all-gather waits for the GEMM before it; the last kernel waited for the all-reduce
    // (it started 1 us after it ended, its stream idle for 44 us).
    ASSERT_EQ(r.ops[1].deps.size(), 1u);
    EXPECT_EQ(r.ops[1].deps[0].op, 0u);
    EXPECT_EQ(r.ops[1].deps[0].lagPs, 1000000);
    bool waits = false;
    for (const TraceDep& d : r.ops[3].deps)
    {
        waits = waits || (d.op == 2 && d.lagPs == 1000000);
    }
    EXPECT_TRUE(waits);
    // Replaying with recorded communication reproduces the recorded times exactly.
    TestFabric fabric(2);
    ReplayOptions rec;
    rec.simulateComm = false;
    ReplayRun run = fabric.Replay(tr, rec);
    ASSERT_TRUE(run.complete);
    for (size_t i = 0; i < r.ops.size(); ++i)
    {
        EXPECT_EQ(run.opStartPs[0][i], r.ops[i].startPs) << i;
    }
    EXPECT_EQ(run.spanPs, r.recordedSpanPs);
}

TEST(KinetoImport, MalformedTracesNameTheFileAndField)
{
    auto field = [](const std::string& text)
    {
        ImportedTrace tr;
        try
        {
            ImportKinetoText(text, "bad.json", 0, {}, tr);
        }
        catch (const fabricsim::InputError& e)
        {
            EXPECT_EQ(e.File(), "bad.json");
            return e.Field();
        }
        return std::string("no error");
    };
    EXPECT_EQ(field("{\"traceEvents\": 3}"), "traceEvents");
    EXPECT_EQ(field("{\"traceEvents\": [{\"ph\": \"X\", \"ts\": \"soon\", \"dur\": 1}]}"),
              "traceEvents[0].ts");
    EXPECT_EQ(field("{\"traceEvents\": [{\"ph\": \"X\", \"ts\": 1, \"dur\": -1}]}"),
              "traceEvents[0].dur");
    EXPECT_EQ(field("{\"traceEvents\": [7]}"), "traceEvents[0]");
    EXPECT_EQ(field("{\"traceEvents\": []}"), "traceEvents"); // no GPU ops at all
    EXPECT_EQ(field("{\"traceEvents\": [}"), "");
    EXPECT_EQ(field("{\"distributedInfo\": {\"rank\": 9, \"world_size\": 2}, \"traceEvents\": []}"),
              "distributedInfo.rank");
    // Two kernels 1e16 us (317 years) apart: the offset would wrap int64 ps (1e22 ps), where it
    // once became a negative start time.
    EXPECT_EQ(field("{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"a\", "
                    "\"ts\": 0, \"dur\": 1}, {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"b\", "
                    "\"ts\": 1e16, \"dur\": 1}]}"),
              "traceEvents[1].ts");
}

TEST(CompressedFile, GzipIsDetectedByItsMagicAndCorruptionIsAnError)
{
    REQUIRE_SHARED_CORPUS(path, "traces/kineto/hta-nccl_data.json.gz");
    const std::string raw = ReadFileBounded(path, "Kineto trace", fabricsim::kBinaryDataFileLimits);
    ASSERT_TRUE(IsGzip(raw));
    EXPECT_EQ(raw.size(), 749757u);
    const std::string text = Gunzip(raw, path);
    EXPECT_EQ(text.size(), 9778890u);
    EXPECT_THROW(Gunzip(raw.substr(0, raw.size() / 2), "half.gz"), fabricsim::InputError);
    std::string flipped = raw;
    flipped[raw.size() / 2] ^= 0x55;
    EXPECT_THROW(Gunzip(flipped, "flipped.gz"), fabricsim::InputError);
    EXPECT_THROW(Gunzip(raw, "big.gz", 1000), fabricsim::InputError); // over the size cap
}

} // namespace
} // namespace fabricsim

namespace fabricsim
{
namespace
{

/// One rank's trace: a GEMM of \p gemmUs, then an all-reduce on process group "7" (ranks 0-1).
std::string
RankTrace(int rank, double gemmUs)
{
    const std::string meta
        = R"("Collective name": "allreduce", "In msg nelems": 1048576, "Out msg nelems": 1048576,
        "dtype": "Float", "Group size": 2, "Process Group Name": "7", "Process Group Ranks": "[0, 1]")";
    return "{\"distributedInfo\": {\"rank\": " + std::to_string(rank)
           + ", \"world_size\": 2}, \"traceEvents\": ["
             "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"sm90_gemm\", \"pid\": 0, \"tid\": "
             "7, \"ts\": 0, \"dur\": "
           + std::to_string(gemmUs)
           + ", \"args\": {\"stream\": 7}},"
             "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": "
             "\"ncclDevKernel_AllReduce_Sum_f32_RING_LL\", \"pid\": 0, \"tid\": 9, \"ts\": "
           + std::to_string(gemmUs + 1) + ", \"dur\": 50, \"args\": {\"stream\": 9, " + meta
           + "}}]}";
}

TEST(KinetoImport, OneFilePerRankMatchesCollectivesByGroupAndSequence)
{
    ImportedTrace tr;
    ImportKinetoText(RankTrace(1, 100), "rank1.json", 0, {}, tr); // the file order does not matter
    ImportKinetoText(RankTrace(0, 20), "rank0.json", 1, {}, tr);
    CompleteRanks(tr);
    ASSERT_EQ(tr.ranks.size(), 2u);
    EXPECT_EQ(tr.ranks[0].file, "rank0.json");
    EXPECT_EQ(tr.ranks[0].mirrorOf, -1);
    EXPECT_EQ(tr.ranks[1].mirrorOf, -1);
    TestFabric fabric(2, 450);
    ReplayRun run = fabric.Replay(tr, {});
    ASSERT_TRUE(run.complete);
    ASSERT_EQ(run.comms.size(), 1u);
    EXPECT_EQ(run.comms[0].key, "7#0");
    // Rank 0 finishes its GEMM 80 us earlier and waits in the all-reduce for rank 1: the
    // collective starts on both when both have arrived (101 us) and ends together.
    EXPECT_EQ(run.opStartPs[0][1], run.opStartPs[1][1]);
    EXPECT_EQ(run.opStartPs[0][1], 101000000);
    EXPECT_GT(run.comms[0].replayedUs, 40.0); // the mean includes rank 0's 80 us wait
    EXPECT_EQ(run.opEndPs[0][1], run.opEndPs[1][1]);
    // Two files claiming one rank are refused.
    ImportedTrace dup;
    ImportKinetoText(RankTrace(0, 1), "a.json", 0, {}, dup);
    ImportKinetoText(RankTrace(0, 1), "b.json", 1, {}, dup);
    EXPECT_THROW(CompleteRanks(dup), fabricsim::InputError);
}

} // namespace
} // namespace fabricsim
