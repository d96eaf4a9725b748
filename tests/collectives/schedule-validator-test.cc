/*
 * Validator: correct hand-built schedules pass; each deliberately broken one fails for the
 * right reason, and the problem names rank / tb / step.
 */
#include "schedule-validator.h"
#include "test-util.h"

#include <gtest/gtest.h>

namespace fabricsim
{
namespace
{

const auto I = BufferKind::kInput;
const auto O = BufferKind::kOutput;
const auto S = BufferKind::kScratch;

std::string
Dump(const ValidationReport& r)
{
    std::string out;
    for (const auto& p : r.m_problems)
    {
        out += "\n  " + p.ToString();
    }
    return out;
}

/// First problem of \p kind (fails the test when there is none).
Problem
Find(const ValidationReport& r, ProblemKind kind)
{
    for (const auto& p : r.m_problems)
    {
        if (p.m_kind == kind)
        {
            return p;
        }
    }
    ADD_FAILURE() << "no '" << ToString(kind) << "' problem in:" << Dump(r);
    return Problem{};
}

bool
Contains(const std::string& s, const std::string& part)
{
    return s.find(part) != std::string::npos;
}

/// In-place ring allgather, K = N.
Schedule
RingAllGather(int n)
{
    Schedule s = Schedule::Create(CollectiveKind::kAllGather, n, n, true);
    auto mod = [n](int x)
    {
        return ((x % n) + n) % n;
    };
    for (int r = 0; r < n; ++r)
    {
        Threadblock& tb = s.Rank(r).AddThreadblock(mod(r + 1), mod(r - 1), 0);
        tb.AddStep(StepOp::kSend, O, r, O, r, 1);
        for (int t = 1; t <= n - 2; ++t)
        {
            tb.AddStep(StepOp::kRecvCopySend, O, mod(r - t), O, mod(r - t), 1);
        }
        tb.AddStep(StepOp::kRecv, O, mod(r + 1), O, mod(r + 1), 1);
    }
    return s;
}

TEST(ScheduleValidator, CorrectSchedulesPass)
{
    for (int n = 2; n <= 6; ++n)
    {
        const auto ring = ValidateSchedule(test::RingAllReduce(n));
        EXPECT_TRUE(ring.m_valid) << "ring allreduce n=" << n << Dump(ring);
        const auto a2a = ValidateSchedule(test::DirectAllToAll(n));
        EXPECT_TRUE(a2a.m_valid) << "alltoall n=" << n << Dump(a2a);
        const auto ag = ValidateSchedule(RingAllGather(n));
        EXPECT_TRUE(ag.m_valid) << "allgather n=" << n << Dump(ag);
    }
    EXPECT_EQ(ValidateSchedule(test::RingAllReduce(4)).m_stepsExecuted, 4u * 7);
}

TEST(ScheduleValidator, InPlaceReduceScatterUsesAliasing)
{
    // 2 ranks, K = 2: rank r's output chunk 0 is its input chunk r.
    Schedule s = Schedule::Create(CollectiveKind::kReduceScatter, 2, 2, true);
    for (int r = 0; r < 2; ++r)
    {
        Threadblock& tb = s.Rank(r).AddThreadblock(1 - r, 1 - r, 0);
        tb.AddStep(StepOp::kSend, I, 1 - r, I, 1 - r, 1);
        tb.AddStep(StepOp::kRecvReduceCopy, I, r, O, 0, 1); // o[0] aliases i[r]
    }
    EXPECT_TRUE(ValidateSchedule(s).m_valid) << Dump(ValidateSchedule(s));
    // Out of place the output buffer is separate and sized k = 1: still valid.
    s.m_inPlace = false;
    for (int r = 0; r < 2; ++r)
    {
        s.Rank(r).m_outputChunks = 1;
    }
    EXPECT_TRUE(ValidateSchedule(s).m_valid) << Dump(ValidateSchedule(s));
}

TEST(ScheduleValidator, DoubleCountedReduction)
{
    Schedule s = test::RingAllReduce(3);
    // Rank 0 reduces its finished chunk 1 into itself once more.
    s.Rank(0).m_threadblocks[0].AddStep(StepOp::kReduce, I, 1, I, 1, 1);
    const auto r = ValidateSchedule(s);
    EXPECT_FALSE(r.m_valid);
    const Problem p = Find(r, ProblemKind::kDuplicateContribution);
    EXPECT_EQ(p.m_rank, 0);
    EXPECT_EQ(p.m_tb, 0);
    EXPECT_EQ(p.m_step, 5);
    EXPECT_TRUE(Contains(p.m_message, "counted more than once")) << p.ToString();
    EXPECT_TRUE(Contains(p.m_message, "output chunk 1")) << p.ToString();
}

TEST(ScheduleValidator, MissingContribution)
{
    Schedule s = test::RingAllReduce(3);
    // Rank 1 forwards chunk 0 without adding its own part: rrs -> rcs.
    Step& st = s.Rank(1).m_threadblocks[0].m_steps[1];
    ASSERT_EQ(st.m_op, StepOp::kRecvReduceSend);
    st.m_op = StepOp::kRecvCopySend;
    const auto r = ValidateSchedule(s);
    EXPECT_FALSE(r.m_valid);
    const Problem p = Find(r, ProblemKind::kMissingContribution);
    EXPECT_TRUE(Contains(p.m_message, "missing {r1.c0}")) << p.ToString();
}

TEST(ScheduleValidator, DeadlockCycle)
{
    // Both ranks receive before they send.
    Schedule s = Schedule::Create(CollectiveKind::kAllReduce, 2, 1, true);
    for (int r = 0; r < 2; ++r)
    {
        Threadblock& tb = s.Rank(r).AddThreadblock(1 - r, 1 - r, 0);
        tb.AddStep(StepOp::kRecvReduceCopy, I, 0, I, 0, 1);
        tb.AddStep(StepOp::kSend, I, 0, I, 0, 1);
    }
    const auto r = ValidateSchedule(s);
    EXPECT_FALSE(r.m_valid);
    EXPECT_EQ(r.Count(ProblemKind::kDeadlock), 3u) << Dump(r); // 2 blocked tbs + the cycle
    const Problem p = Find(r, ProblemKind::kDeadlock);
    EXPECT_EQ(p.m_rank, 0);
    EXPECT_EQ(p.m_tb, 0);
    EXPECT_EQ(p.m_step, 0);
    EXPECT_TRUE(Contains(p.m_message, "waits for a message from rank 1 on channel 0"))
        << p.ToString();
    bool cycle = false;
    for (const auto& q : r.m_problems)
    {
        cycle = cycle
                || Contains(q.m_message,
                            "wait-for cycle: rank 0 tb 0 step 0 -> rank 1 tb 0 "
                            "step 0 -> rank 0 tb 0 step 0");
    }
    EXPECT_TRUE(cycle) << Dump(r);
}

TEST(ScheduleValidator, DependencyDeadlock)
{
    Schedule s = test::RingAllReduce(2);
    // tb 1 on rank 0 waits for tb 0's last step, and tb 0's first step waits for tb 1.
    Threadblock& extra = s.Rank(0).AddThreadblock(-1, -1, 0);
    extra.AddStep(StepOp::kNop, I, -1, O, -1, 0, {{0, 2}});
    s.Rank(0).m_threadblocks[0].m_steps[0].m_deps = {{1, 0}};
    s.MarkDependencyTargets();
    const auto r = ValidateSchedule(s);
    const Problem p = Find(r, ProblemKind::kDeadlock);
    EXPECT_TRUE(Contains(p.m_message, "waits for tb 1 to finish step 0")) << Dump(r);
}

TEST(ScheduleValidator, UnmatchedSend)
{
    Schedule s = test::DirectAllToAll(3);
    s.Rank(0).m_threadblocks[1].AddStep(StepOp::kSend, I, 0, O, 0, 1);
    const auto r = ValidateSchedule(s);
    EXPECT_FALSE(r.m_valid);
    const Problem p = Find(r, ProblemKind::kUnmatchedMessage);
    EXPECT_EQ(p.m_rank, 0);
    EXPECT_EQ(p.m_tb, 1);
    EXPECT_EQ(p.m_step, 2);
    EXPECT_TRUE(Contains(p.m_message, "to rank 1 on channel 0")) << p.ToString();
}

TEST(ScheduleValidator, CountMismatch)
{
    Schedule s = test::RingAllReduce(4);
    s.Rank(0).m_threadblocks[0].m_steps[0].m_count = 2; // sends i[0..2), rank 1 receives 1
    const auto r = ValidateSchedule(s);
    EXPECT_FALSE(r.m_valid);
    const Problem p = Find(r, ProblemKind::kCountMismatch);
    EXPECT_EQ(p.m_rank, 1);
    EXPECT_EQ(p.m_tb, 0);
    EXPECT_EQ(p.m_step, 1);
    EXPECT_TRUE(Contains(p.m_message, "expected 2")) << p.ToString();
    EXPECT_TRUE(Contains(p.m_message, "found cnt 1")) << p.ToString();
}

TEST(ScheduleValidator, OutOfBoundsOffset)
{
    Schedule s = test::RingAllReduce(3);
    s.Rank(2).m_threadblocks[0].m_steps[4].m_dstOffset = 3; // i has 3 chunks
    s.Rank(2).m_threadblocks[0].m_steps[4].m_srcOffset = 3;
    const auto r = ValidateSchedule(s);
    const Problem p = Find(r, ProblemKind::kOutOfBounds);
    EXPECT_EQ(p.m_rank, 2);
    EXPECT_EQ(p.m_tb, 0);
    EXPECT_EQ(p.m_step, 4);
    EXPECT_TRUE(Contains(p.m_message, "i[3, 4): expected within [0, 3)")) << p.ToString();
}

TEST(ScheduleValidator, BadStepIndex)
{
    Schedule s = test::RingAllReduce(3);
    s.Rank(1).m_threadblocks[0].m_steps[2].m_index = 7;
    const auto r = ValidateSchedule(s);
    EXPECT_FALSE(r.m_valid);
    const Problem p = Find(r, ProblemKind::kStepIndex);
    EXPECT_EQ(p.m_rank, 1);
    EXPECT_EQ(p.m_step, 2);
    EXPECT_TRUE(Contains(p.m_message, "expected 2 (its position), found 7")) << p.ToString();
}

TEST(ScheduleValidator, DuplicateThreadblockPeerChannel)
{
    Schedule s = test::DirectAllToAll(3);
    s.Rank(0).AddThreadblock(1, -1, 0); // second tb sending to rank 1 on channel 0
    const auto r = ValidateSchedule(s);
    const Problem p = Find(r, ProblemKind::kDuplicateChannel);
    EXPECT_EQ(p.m_rank, 0);
    EXPECT_EQ(p.m_tb, 3);
    EXPECT_TRUE(Contains(p.m_message, "(send peer 1, channel 0)")) << p.ToString();
}

TEST(ScheduleValidator, StructuralErrors)
{
    Schedule s = test::DirectAllToAll(3);
    s.Rank(1).m_threadblocks[0].AddStep(StepOp::kSend, I, 1, O, 1, 1); // tb 0 has send=-1
    s.Rank(2).m_threadblocks[2].m_id = 5;                              // ids 0,1,5
    s.Rank(2).m_threadblocks[1].m_channel = 3;                         // nchannels = 1
    const auto r = ValidateSchedule(s);
    bool sendless = false;
    bool ids = false;
    bool channel = false;
    for (const auto& p : r.m_problems)
    {
        sendless = sendless
                   || (p.m_rank == 1 && p.m_tb == 0 && p.m_step == 1
                       && Contains(p.m_message, "send=-1"));
        ids = ids || (p.m_rank == 2 && Contains(p.m_message, "threadblock ids"));
        channel = channel || (p.m_rank == 2 && p.m_tb == 1 && Contains(p.m_message, "channel"));
    }
    EXPECT_TRUE(sendless && ids && channel) << Dump(r);
}

TEST(ScheduleValidator, DependencyProblems)
{
    Schedule s = test::RingAllReduce(3);
    Threadblock& extra = s.Rank(0).AddThreadblock(-1, -1, 0);
    extra.AddStep(StepOp::kNop, I, -1, O, -1, 0, {{9, 0}});
    extra.AddStep(StepOp::kNop, I, -1, O, -1, 0, {{0, 3}}); // target lacks hasdep
    const auto r = ValidateSchedule(s);
    EXPECT_EQ(r.Count(ProblemKind::kDependency), 2u) << Dump(r);
    EXPECT_TRUE(Contains(Find(r, ProblemKind::kDependency).m_message, "found none with id 9"));
    s.MarkDependencyTargets();
    EXPECT_EQ(ValidateSchedule(s).Count(ProblemKind::kDependency), 1u);
}

TEST(ScheduleValidator, UninitialisedRead)
{
    Schedule s = test::RingAllReduce(2);
    s.Rank(0).m_scratchChunks = 1;
    s.Rank(0).m_threadblocks[0].AddStep(StepOp::kReduce, S, 0, I, 0, 1);
    const Problem p = Find(ValidateSchedule(s), ProblemKind::kUninitializedRead);
    EXPECT_EQ(p.m_step, 3);
    EXPECT_TRUE(Contains(p.m_message, "s[0]")) << p.ToString();
}

TEST(ScheduleValidator, OrderDependentResultIsARace)
{
    // Out-of-place 2-rank allreduce; rank 0 copies i -> o on a separate tb with no dependency
    // on the tb that writes the reduced value into o: the result depends on who runs last.
    Schedule s = Schedule::Create(CollectiveKind::kAllReduce, 2, 1, false);
    for (int r = 0; r < 2; ++r)
    {
        Threadblock& tb = s.Rank(r).AddThreadblock(1 - r, 1 - r, 0);
        tb.AddStep(StepOp::kSend, I, 0, I, 0, 1);
        tb.AddStep(StepOp::kRecvReduceCopy, I, 0, O, 0, 1);
    }
    s.Rank(0).AddThreadblock(-1, -1, 0).AddStep(StepOp::kCopy, I, 0, O, 0, 1);
    const auto r = ValidateSchedule(s);
    EXPECT_FALSE(r.m_valid);
    EXPECT_TRUE(Contains(r.m_problems.at(0).m_message, "depends on execution order")) << Dump(r);
    // Ordering the copy before the reduction fixes it.
    s.Rank(0).m_threadblocks[0].m_steps[1].m_deps = {{1, 0}};
    s.MarkDependencyTargets();
    EXPECT_TRUE(ValidateSchedule(s).m_valid) << Dump(ValidateSchedule(s));
}

TEST(ScheduleValidator, ExpectedCollectiveAndRanks)
{
    const Schedule ring = test::RingAllReduce(4);
    const auto r = ValidateSchedule(ring, CollectiveKind::kAllGather, 8);
    EXPECT_EQ(r.Count(ProblemKind::kCollectiveMismatch), 2u) << Dump(r);
    // A custom schedule is checked against the expected collective's post-condition.
    Schedule custom = ring;
    custom.m_collective = CollectiveKind::kCustom;
    EXPECT_TRUE(ValidateSchedule(custom).m_valid);
    EXPECT_TRUE(ValidateSchedule(custom, CollectiveKind::kAllReduce).m_valid);
    EXPECT_FALSE(ValidateSchedule(custom, CollectiveKind::kAllToAll).m_valid);
}

TEST(ScheduleValidator, BothModesChecked)
{
    // Valid in place only: the last receive writes o, which is i only when in place.
    Schedule s = test::RingAllReduce(3);
    s.m_outOfPlace = true;
    for (auto& p : s.m_programs)
    {
        p.m_outputChunks = 3;
        p.m_threadblocks[0].m_steps.back().m_dstBuffer = O;
    }
    const auto r = ValidateSchedule(s);
    EXPECT_FALSE(r.m_valid);
    EXPECT_TRUE(Contains(r.m_problems.at(0).m_message, "[out-of-place]")) << Dump(r);
}

} // namespace
} // namespace fabricsim
