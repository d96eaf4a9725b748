/*
 * Executor semantics on a transport with exactly known costs: pipelining by slices, slot
 * limits, step and launch latencies, reduction cost, tiling, protocol overhead, rank mapping,
 * and the stuck report of collectives that cannot complete.
 */
#include "executor-test-util.h"
#include "executor.h"
#include "input-error.h"
#include "test-util.h"

#include <gtest/gtest.h>

namespace fabricsim
{
namespace
{

using test::PipeTransport;
const auto I = BufferKind::kInput;
const auto O = BufferKind::kOutput;

/// Only what the test asks for costs time.
ExecutorConfig
Bare()
{
    ExecutorConfig c;
    c.m_stepLatencyPs = 0;
    c.m_launchLatencyPs = 0;
    c.m_memoryBytesPerSecond = 0;
    return c;
}

/// 0 -> 1 -> 2 forwarding chain of one chunk (rank 1 receives, stores and forwards).
Schedule
Chain(StepOp middle = StepOp::kRecvCopySend)
{
    Schedule s = Schedule::Create(CollectiveKind::kCustom, 3, 1, false);
    s.m_name = "chain";
    for (auto& p : s.m_programs)
    {
        p.m_inputChunks = 1;
        p.m_outputChunks = 1;
    }
    s.Rank(0).AddThreadblock(1, -1, 0).AddStep(StepOp::kSend, I, 0, O, 0, 1);
    s.Rank(1).AddThreadblock(2, 0, 0).AddStep(middle, I, 0, O, 0, 1);
    s.Rank(2).AddThreadblock(-1, 1, 0).AddStep(StepOp::kRecv, I, 0, O, 0, 1);
    return s;
}

TEST(Executor, SlicesPipelineThroughAForwardingRank)
{
    // 1 byte/ps pipes with 1000 ps latency; 4 slices of 1000 B: the last slice reaches rank 2
    // after (S + slice) / rate + 2 latencies, not 2 S / rate.
    PipeTransport t(3, 1.0, 1000);
    ExecutorConfig c = Bare();
    c.m_sliceBytes = 1000;
    Executor ex(t, Chain(), c);
    ex.Start(4000);
    t.Run();
    ExecutionResult r = ex.Result();
    ASSERT_TRUE(r.m_complete) << r.StuckReport();
    EXPECT_EQ(r.m_rankDonePs[2], 4000 + 1000 + 2 * 1000);
    EXPECT_EQ(r.m_rankDonePs[0], 0); // a send step is done once its slices are posted
    EXPECT_EQ(r.m_messages, 8u);
    EXPECT_EQ(r.m_payloadBytes, 8000u);
    EXPECT_EQ(r.DurationPs(), 7000);
}

TEST(Executor, WithoutSlicingTheForwardWaitsForTheWholeChunk)
{
    PipeTransport t(3, 1.0, 1000);
    ExecutorConfig c = Bare();
    c.m_sliceBytes = 4000;
    Executor ex(t, Chain(), c);
    ex.Start(4000);
    t.Run();
    EXPECT_EQ(ex.Result().m_rankDonePs[2], 2 * 4000 + 2 * 1000);
}

TEST(Executor, SlotsBoundSlicesInFlightPerConnection)
{
    // Rank 1 reduces slowly, so rank 0 can only run ahead by the slot count.
    for (uint32_t slots : {2u, 0u})
    {
        PipeTransport t(3, 1.0, 10);
        ExecutorConfig c = Bare();
        c.m_sliceBytes = 100;
        c.m_slots = slots;
        c.m_memoryBytesPerSecond = 1e10; // 300 B touched per slice: 30 ns per slice
        Executor ex(t, Chain(StepOp::kRecvReduceCopySend), c);
        ex.Start(800);
        t.Run();
        ASSERT_TRUE(ex.Result().m_complete);
        if (slots == 2)
        {
            EXPECT_LE(t.m_maxInFlight, 2);
        }
        else
        {
            EXPECT_EQ(t.m_maxInFlight, 8); // all 8 slices posted at once
        }
    }
}

TEST(Executor, LaunchAndStepLatencyPrecedeTheFirstSend)
{
    PipeTransport t(3, 1.0, 1000);
    ExecutorConfig c = Bare();
    c.m_launchLatencyPs = 5000;
    c.m_stepLatencyPs = 300;
    c.m_sliceBytes = 4000;
    Executor ex(t, Chain(), c);
    ex.Start(4000);
    t.Run();
    ASSERT_FALSE(t.m_sent.empty());
    EXPECT_EQ(t.m_sent[0].atPs, 5300);
    // rank 1's step latency overlaps the wait for the data: it forwards on arrival.
    EXPECT_EQ(t.m_sent[1].atPs, 5300 + 4000 + 1000);
    EXPECT_EQ(ex.Result().m_rankDonePs[2], 5300 + 2 * (4000 + 1000));
}

TEST(Executor, ReductionCostsThreeBytesOfMemoryTrafficPerByte)
{
    PipeTransport t(3, 1.0, 0);
    ExecutorConfig c = Bare();
    c.m_sliceBytes = 1000;
    c.m_memoryBytesPerSecond = 1e12; // 1 byte/ps: a 1000 B slice reduction takes 3000 ps
    Executor ex(t, Chain(StepOp::kRecvReduceCopySend), c);
    ex.Start(1000);
    t.Run();
    EXPECT_EQ(ex.Result().m_rankDonePs[2], 1000 + 3000 + 1000);
}

TEST(Executor, LargeBuffersAreTiledAndSliced)
{
    PipeTransport t(4, 1.0, 0);
    Executor ex(t, test::RingAllReduce(4), Bare());
    ex.Start(64ull << 20);
    t.Run();
    ExecutionResult r = ex.Result();
    ASSERT_TRUE(r.m_complete) << r.StuckReport();
    // 16 MiB chunks; Simple's 8 slots x 512 KiB bound a tile's chunk to 4 MiB.
    EXPECT_EQ(r.m_sliceBytes, 512u * 1024);
    EXPECT_EQ(r.m_tiles, 4u);
    EXPECT_EQ(r.m_tileChunkBytes, 4u << 20);
    // Each rank sends 2 (n - 1) chunks of S / n.
    EXPECT_EQ(r.m_payloadBytes, 2ull * 3 * (64ull << 20));
    EXPECT_EQ(r.m_messages, 4ull * 6 * 4 * 8); // ranks x sends x tiles x slices
}

TEST(Executor, ProtocolEfficiencyInflatesTransferredBytes)
{
    for (auto [proto, factor] : {std::pair{Protocol::kSimple, 1.0},
                                 std::pair{Protocol::kLL, 2.0},
                                 std::pair{Protocol::kLL128, 128.0 / 120.0}})
    {
        PipeTransport t(4, 1.0, 0);
        ExecutorConfig c = Bare();
        c.m_overrideProtocol = true;
        c.m_protocol = proto;
        Executor ex(t, test::RingAllReduce(4), c);
        ex.Start(1 << 20);
        t.Run();
        ExecutionResult r = ex.Result();
        ASSERT_TRUE(r.m_complete);
        EXPECT_EQ(r.m_protocol, proto);
        EXPECT_NEAR(double(r.m_transferBytes) / double(r.m_payloadBytes), factor, 1e-3)
            << ToString(proto);
    }
}

TEST(Executor, RankMapAndChannelBaseSelectTransportEndpoints)
{
    PipeTransport t(5, 1.0, 0);
    Executor ex(t, Chain(), Bare(), {4, 2, 0}, 7);
    std::vector<uint32_t> done;
    int finished = 0;
    ex.Start(
        100, [&](uint32_t r) { done.push_back(r); }, [&]() { finished++; });
    t.Run();
    ASSERT_EQ(t.m_sent.size(), 2u);
    EXPECT_EQ(t.m_sent[0].src, 4u);
    EXPECT_EQ(t.m_sent[0].dst, 2u);
    EXPECT_EQ(t.m_sent[0].channel, 7u);
    EXPECT_EQ(t.m_sent[1].src, 2u);
    EXPECT_EQ(t.m_sent[1].dst, 0u);
    EXPECT_EQ(done.size(), 3u);
    EXPECT_EQ(finished, 1);
}

TEST(Executor, CrossThreadblockDependenciesOrderSteps)
{
    // Rank 0: tb 0 sends to rank 1; tb 1 copies locally but only after tb 0's step 0.
    Schedule s = Schedule::Create(CollectiveKind::kCustom, 2, 1, false);
    s.m_name = "dep";
    for (auto& p : s.m_programs)
    {
        p.m_inputChunks = p.m_outputChunks = 1;
    }
    s.Rank(0).AddThreadblock(1, -1, 0).AddStep(StepOp::kSend, I, 0, O, 0, 1);
    s.Rank(0).AddThreadblock(-1, -1, 0).AddStep(StepOp::kCopy, I, 0, O, 0, 1, {Dependency{0, 0}});
    s.Rank(1).AddThreadblock(-1, 0, 0).AddStep(StepOp::kRecv, I, 0, O, 0, 1);
    s.MarkDependencyTargets();
    PipeTransport t(2, 1.0, 0);
    ExecutorConfig c = Bare();
    c.m_stepLatencyPs = 1000;
    Executor ex(t, s, c);
    ex.Start(500);
    t.Run();
    ExecutionResult r = ex.Result();
    ASSERT_TRUE(r.m_complete) << r.StuckReport();
    // tb 1 starts its step only when tb 0's step (1000 ps latency) is done: 2000 ps.
    EXPECT_EQ(r.m_rankDonePs[0], 2000);
}

TEST(Executor, DeadlockIsReportedWithStuckRanksAndWhatTheyWaitOn)
{
    // Both ranks receive before they send: no message is ever sent.
    Schedule s = Schedule::Create(CollectiveKind::kCustom, 2, 1, false);
    s.m_name = "deadlock";
    for (int r = 0; r < 2; ++r)
    {
        s.Rank(r).m_inputChunks = s.Rank(r).m_outputChunks = 1;
        Threadblock& tb = s.Rank(r).AddThreadblock(1 - r, 1 - r, 0);
        tb.AddStep(StepOp::kRecv, I, 0, O, 0, 1);
        tb.AddStep(StepOp::kSend, I, 0, O, 0, 1);
    }
    PipeTransport t(2, 1.0, 0);
    ExecutionResult r = RunSchedule(t, s, 1000, Bare());
    EXPECT_FALSE(r.m_complete);
    ASSERT_EQ(r.m_stuck.size(), 2u);
    EXPECT_EQ(r.m_stuck[0].m_rank, 0);
    EXPECT_EQ(r.m_stuck[0].m_op, StepOp::kRecv);
    EXPECT_NE(r.m_stuck[0].m_waitsOn.find("a message from rank 1 on channel 0 (0 sent"),
              std::string::npos)
        << r.m_stuck[0].m_waitsOn;
    EXPECT_NE(r.m_stuck[0].m_waitsOn.find("sender tb 0 is at tile 0 step 0"), std::string::npos)
        << r.m_stuck[0].m_waitsOn;
    const std::string report = r.StuckReport();
    EXPECT_NE(report.find("2 of 2 ranks stuck (0 1)"), std::string::npos) << report;
    EXPECT_EQ(r.m_rankDonePs[0], -1);
}

TEST(Executor, UnsatisfiableDependencyIsReported)
{
    // tb 0 waits on tb 1, which waits for a receive nobody sends.
    Schedule s = Schedule::Create(CollectiveKind::kCustom, 2, 1, false);
    s.m_name = "dep-stuck";
    for (auto& p : s.m_programs)
    {
        p.m_inputChunks = p.m_outputChunks = 1;
    }
    s.Rank(0).AddThreadblock(1, -1, 0).AddStep(StepOp::kSend, I, 0, O, 0, 1, {Dependency{1, 0}});
    s.Rank(0).AddThreadblock(-1, 1, 0).AddStep(StepOp::kRecv, I, 0, O, 0, 1);
    s.Rank(1).AddThreadblock(-1, 0, 0).AddStep(StepOp::kRecv, I, 0, O, 0, 1);
    s.MarkDependencyTargets();
    PipeTransport t(2, 1.0, 0);
    ExecutionResult r = RunSchedule(t, s, 1000, Bare());
    ASSERT_FALSE(r.m_complete);
    ASSERT_EQ(r.m_stuck.size(), 3u);
    EXPECT_NE(r.m_stuck[0].m_waitsOn.find("dependencies: tb 1 step 0"), std::string::npos)
        << r.m_stuck[0].m_waitsOn;
}

TEST(Executor, UnexecutableStructureIsAnInputError)
{
    Schedule s = Chain();
    s.Rank(0).m_threadblocks[0].m_sendPeer = 9; // no such rank
    PipeTransport t(3, 1.0, 0);
    EXPECT_THROW(Executor(t, s, Bare()), fabricsim::InputError);
    // More schedule ranks than the transport has.
    PipeTransport small(2, 1.0, 0);
    EXPECT_THROW(Executor(small, Chain(), Bare()), fabricsim::InputError);
    EXPECT_THROW(Executor(t, Chain(), Bare(), {0, 1, 1}), fabricsim::InputError); // one rank twice
    Executor ok(t, Chain(), Bare());
    EXPECT_THROW(ok.Start(0), fabricsim::InputError);
}

TEST(Executor, SameInputsGiveTheSameTimeline)
{
    auto run = []()
    {
        PipeTransport t(8, 0.0125, 1500);
        ExecutionResult r = RunSchedule(t, test::RingAllReduce(8), 3 << 20, ExecutorConfig{});
        return std::make_pair(r.m_rankDonePs, t.m_sent.size());
    };
    EXPECT_EQ(run(), run());
}

} // namespace
} // namespace fabricsim
