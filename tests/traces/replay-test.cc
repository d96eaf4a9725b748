#include "input-error.h"
#include "kineto-import.h"
#include "trace-test-util.h"

#include <gtest/gtest.h>

#include <cmath>

namespace fabricsim
{
namespace
{

/// A two-rank program: compute, an all-reduce of \p bytes, compute.
ImportedTrace
TinyTrace(uint64_t bytes, int64_t computePs)
{
    ImportedTrace tr;
    tr.format = "test";
    RankTrace r;
    r.file = "tiny";
    TraceOp c;
    c.name = "gemm";
    c.opClass = OpClass::kGemm;
    c.durationPs = computePs;
    TraceOp ar;
    ar.kind = TraceOpKind::kCollective;
    ar.name = "allreduce";
    ar.collectiveName = "allreduce";
    ar.opClass = OpClass::kComm;
    ar.sized = true;
    ar.bytes = bytes;
    ar.durationPs = 1000000000; // recorded: 1 ms
    ar.deps = {{0, 0}};
    TraceOp c2 = c;
    c2.deps = {{1, 0}};
    r.ops = {c, ar, c2};
    tr.ranks.push_back(r);
    tr.worldSize = 2;
    CompleteRanks(tr);
    return tr;
}

TEST(TraceReplay, CommunicationIsResimulatedAndComputeScaled)
{
    ImportedTrace tr = TinyTrace(64 << 20, 100000000);
    TestFabric fabric(2, 450);
    ReplayRun sim = fabric.Replay(tr, {});
    ASSERT_TRUE(sim.complete) << (sim.stuck.empty() ? "" : sim.stuck[0]);
    ASSERT_EQ(sim.comms.size(), 1u);
    // 64 MiB ring all-reduce on 2 ranks moves 64 MiB per direction: at 450 GB/s at least 149 us.
    EXPECT_GT(sim.comms[0].replayedUs, 149);
    EXPECT_LT(sim.comms[0].replayedUs, 300);
    EXPECT_NEAR(sim.comms[0].exposedUs, sim.comms[0].replayedUs, 1e-6); // nothing overlaps it
    EXPECT_EQ(sim.rankComputePs[0], 200000000);

    TestFabric f2(2, 450);
    ReplayOptions rec;
    rec.simulateComm = false;
    ReplayRun recorded = f2.Replay(tr, rec);
    EXPECT_EQ(recorded.spanPs, 200000000 + 1000000000);

    TestFabric f3(2, 450);
    ReplayOptions fast;
    fast.computeScale = 0.5;
    fast.classScale[OpClass::kGemm] = 0.5; // both apply: 0.25 in all
    ReplayRun quick = f3.Replay(tr, fast);
    EXPECT_EQ(quick.rankComputePs[1], 50000000);
    EXPECT_EQ(quick.spanPs - sim.spanPs, -150000000);
}

TEST(TraceReplay, AStuckCollectiveIsReportedWithTheMissingRanks)
{
    ImportedTrace tr = TinyTrace(1 << 20, 1000);
    tr.ranks[1].ops[1].seq = 5; // rank 1 reaches a different collective
    TestFabric fabric(2);
    ReplayRun run = fabric.Replay(tr, {});
    EXPECT_FALSE(run.complete);
    ASSERT_FALSE(run.stuck.empty());
    EXPECT_NE(run.stuck[0].find("waits for ranks 1"), std::string::npos) << run.stuck[0];
}

TEST(TraceReplay, TwoRankCorpusTraceReplaysWithEveryNcclKernelAccountedFor)
{
    REQUIRE_SHARED_CORPUS(path, "traces/kineto/hta-nccl_data.json.gz");
    ImportedTrace tr = ImportKineto({path});
    // Recorded communication: the replay reproduces the recorded window (dependency check).
    TestFabric a(2, 300);
    ReplayOptions rec;
    rec.simulateComm = false;
    ReplayRun base = a.Replay(tr, rec);
    ASSERT_TRUE(base.complete);
    const double recorded = double(tr.ranks[0].recordedSpanPs);
    EXPECT_NEAR(double(base.spanPs) / recorded, 1.0, 0.01);
    // Re-simulated on an A100-like NVLink (300 GB/s): all 21 collectives run over the fabric.
    TestFabric b(2, 300);
    ReplayRun sim = b.Replay(tr, {});
    ASSERT_TRUE(sim.complete);
    ASSERT_EQ(sim.comms.size(), 21u);
    double recordedComm = 0;
    double replayedComm = 0;
    for (const ReplayedComm& c : sim.comms)
    {
        EXPECT_TRUE(c.simulated) << c.key;
        EXPECT_EQ(c.members, 2u);
        recordedComm += c.recordedUs;
        replayedComm += c.replayedUs;
    }
    // The recorded kernels include waiting for the other rank; a balanced replay does not.
    EXPECT_LT(replayedComm, recordedComm);
    EXPECT_LT(sim.spanPs, base.spanPs);
}

TEST(TraceReplay, EightRankCorpusTraceReplaysOnEightRanks)
{
    REQUIRE_SHARED_CORPUS(path, "traces/kineto/hta-rank3of8-control.json.gz");
    KinetoOptions opt;
    opt.step = 1010;
    ImportedTrace tr = ImportKineto({path}, opt);
    TestFabric fabric(8, 300);
    ReplayRun run = fabric.Replay(tr, {});
    ASSERT_TRUE(run.complete);
    ASSERT_EQ(run.comms.size(), 10u); // 7 all-to-alls and 3 all-reduces per step
    for (const ReplayedComm& c : run.comms)
    {
        EXPECT_EQ(c.members, 8u);
        EXPECT_TRUE(c.simulated);
    }
}

TEST(TraceReplay, BadDependenciesAreInputErrors)
{
    ImportedTrace tr = TinyTrace(1024, 10);
    tr.ranks[0].ops[2].deps = {{9, 0}};
    EXPECT_THROW(TraceReplayer(tr, {}), fabricsim::InputError);
}

} // namespace
} // namespace fabricsim
