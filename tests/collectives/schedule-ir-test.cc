#include "schedule-ir.h"
#include "test-util.h"

#include <gtest/gtest.h>

namespace fabricsim
{
namespace
{

TEST(ScheduleIr, NamesRoundTrip)
{
    EXPECT_EQ(ParseCollectiveKind("reduce_scatter"), CollectiveKind::kReduceScatter);
    EXPECT_EQ(ParseCollectiveKind("reducescatter"), CollectiveKind::kReduceScatter);
    EXPECT_EQ(ParseCollectiveKind("AllReduce"), CollectiveKind::kAllReduce);
    EXPECT_FALSE(ParseCollectiveKind("allsum").has_value());
    for (auto op : {StepOp::kSend,
                    StepOp::kRecv,
                    StepOp::kRecvCopySend,
                    StepOp::kRecvReduceSend,
                    StepOp::kRecvReduceCopy,
                    StepOp::kRecvReduceCopySend,
                    StepOp::kCopy,
                    StepOp::kReduce,
                    StepOp::kNop})
    {
        EXPECT_EQ(ParseStepOp(MscclName(op)), op);
        EXPECT_EQ(ParseStepOp(LongName(op)), op);
    }
    EXPECT_EQ(ParseProtocol("ll128"), Protocol::kLL128);
    EXPECT_FALSE(ParseProtocol("LL64").has_value());
}

TEST(ScheduleIr, CreateSizesBuffersFromCollective)
{
    Schedule ag = Schedule::Create(CollectiveKind::kAllGather, 4, 8, false);
    ASSERT_EQ(ag.m_programs.size(), 4u);
    EXPECT_EQ(ag.Rank(2).m_inputChunks, 2);
    EXPECT_EQ(ag.Rank(2).m_outputChunks, 8);
    Schedule agIn = Schedule::Create(CollectiveKind::kAllGather, 4, 8, true);
    EXPECT_EQ(agIn.Rank(0).m_inputChunks, 0); // aliased into the output
    Schedule ar = Schedule::Create(CollectiveKind::kAllReduce, 4, 8, true);
    EXPECT_EQ(ar.Rank(0).m_inputChunks, 8);
    EXPECT_EQ(ar.Rank(0).m_outputChunks, 0);
    Schedule rs = Schedule::Create(CollectiveKind::kReduceScatter, 4, 8, false);
    EXPECT_EQ(rs.Rank(3).m_outputChunks, 2);
}

TEST(ScheduleIr, BuilderNumbersThreadblocksAndSteps)
{
    Schedule s = Schedule::Create(CollectiveKind::kAllReduce, 2, 2, true);
    Threadblock& a = s.Rank(0).AddThreadblock(1, -1, 0);
    a.AddStep(StepOp::kSend, BufferKind::kInput, 0, BufferKind::kInput, 0, 1);
    Threadblock& b = s.Rank(0).AddThreadblock(-1, -1, 0);
    b.AddStep(StepOp::kNop, BufferKind::kInput, -1, BufferKind::kOutput, -1, 0, {{0, 0}});
    EXPECT_EQ(s.Rank(0).m_threadblocks[1].m_id, 1);
    EXPECT_EQ(s.Rank(0).m_threadblocks[1].m_steps[0].m_index, 0);
    EXPECT_FALSE(s.Rank(0).m_threadblocks[0].m_steps[0].m_hasDep);
    s.MarkDependencyTargets();
    EXPECT_TRUE(s.Rank(0).m_threadblocks[0].m_steps[0].m_hasDep);
    EXPECT_EQ(s.StepCount(), 2u);
    ASSERT_NE(s.Rank(0).FindThreadblock(1), nullptr);
    EXPECT_EQ(s.Rank(0).FindThreadblock(7), nullptr);
}

TEST(ScheduleIr, EqualityIsDeep)
{
    Schedule a = test::RingAllReduce(4);
    Schedule b = a;
    EXPECT_TRUE(a == b);
    b.Rank(3).m_threadblocks[0].m_steps[2].m_count = 2;
    EXPECT_TRUE(a != b);
}

} // namespace
} // namespace fabricsim
