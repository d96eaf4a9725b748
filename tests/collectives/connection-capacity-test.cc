/*
 * The chunks a connection must hold at once for a schedule to progress, and the executor's tiles
 * sized for it: the shipped allgather example sends twice to its local peer before receiving, so
 * with tiles sized for one step it deadlocked on slots from 16 MiB on (both ranks waiting for a
 * slot the other frees only by receiving), while `validate`'s unbounded run called it valid.
 */
#include "connection-capacity.h"
#include "executor-test-util.h"
#include "executor.h"
#include "generators.h"
#include "input-error.h"
#include "schedule-loader.h"
#include "schedule-validator.h"
#include "test-util.h"
#include "validate-command.h"

#include <gtest/gtest.h>

#include <sstream>

namespace fabricsim
{
namespace
{

Schedule
Example()
{
    return LoadScheduleFile(std::string(FABRICSIM_SOURCE_DIR)
                            + "/collectives/examples/allgather-4rank.xml")
        .m_schedules.at(0);
}

/// Two ranks that each send \p sends one-chunk messages to the other before receiving them.
Schedule
SendsBeforeReceives(int sends)
{
    Schedule s = Schedule::Create(CollectiveKind::kAllToAll, 2, 2 * sends, false);
    s.m_name = "sends_before_receives";
    for (int r = 0; r < 2; ++r)
    {
        Threadblock& tb = s.Rank(r).AddThreadblock(1 - r, 1 - r, 0);
        for (int i = 0; i < sends; ++i)
        {
            tb.AddStep(StepOp::kSend, BufferKind::kInput, i, BufferKind::kOutput, i, 1);
        }
        for (int i = 0; i < sends; ++i)
        {
            tb.AddStep(StepOp::kRecv, BufferKind::kOutput, i, BufferKind::kOutput, i, 1);
        }
    }
    return s;
}

ExecutionResult
Execute(const Schedule& s, uint64_t bytes, ExecutorConfig cfg = {})
{
    test::PipeTransport t(uint32_t(s.m_ranks), 25.0 /* B/ps: 25 GB/s */, 1000000);
    Executor ex(t, s, cfg);
    ex.Start(bytes);
    t.Run();
    return ex.Result();
}

TEST(ConnectionCapacity, ChunksAConnectionMustHold)
{
    // Generated algorithms hold one step's chunks: the tiles they had stay.
    EXPECT_EQ(ConnectionChunksNeeded(test::RingAllReduce(4)), 1);
    for (const char* algo : {"ring", "tree"})
    {
        EXPECT_EQ(ConnectionChunksNeeded(GenerateSchedule(CollectiveKind::kAllReduce, algo, 8, {})),
                  1)
            << algo;
    }
    EXPECT_EQ(ConnectionChunksNeeded(Example()), 2);
    EXPECT_EQ(ConnectionChunksNeeded(SendsBeforeReceives(3)), 3);
    // A receive that no send matches never completes, at any capacity.
    Schedule orphan = Schedule::Create(CollectiveKind::kAllToAll, 2, 1, false);
    orphan.Rank(1).AddThreadblock(-1, 0, 0).AddStep(
        StepOp::kRecv, BufferKind::kOutput, 0, BufferKind::kOutput, 0, 1);
    EXPECT_EQ(ConnectionChunksNeeded(orphan), 0);
}

TEST(ConnectionCapacity, TheExampleCompletesAtEverySizeWithItsOldTilesWhereItDid)
{
    const Schedule s = Example();
    const ExecutionResult small = Execute(s, 8 << 20);
    ASSERT_TRUE(small.m_complete) << small.StuckReport();
    EXPECT_EQ(small.m_tiles, 1u); // 2 MiB chunks: the tile it always had
    for (uint64_t mib : {16, 64, 256})
    {
        const ExecutionResult r = Execute(s, mib << 20);
        ASSERT_TRUE(r.m_complete) << mib << " MiB: " << r.StuckReport();
        // Two chunks in 8 slots of 512 KiB: tiles of 2 MiB.
        EXPECT_EQ(r.m_tileChunkBytes, 2u << 20) << mib;
    }
    // With the tiles of one step (what the executor used), 16 MiB deadlocks on slots.
    ExecutorConfig oneStep;
    oneStep.m_maxChunkBytes = 4 << 20;
    oneStep.m_slots = 8;
    ExecutorConfig bounded = oneStep;
    bounded.m_maxChunkBytes = 0;
    EXPECT_EQ(Execute(s, 16 << 20, bounded).m_tiles, 2u);
    const ExecutionResult old = Execute(s, 16 << 20, oneStep);
    EXPECT_TRUE(old.m_complete); // a user's MaxChunkSize is capped to what is safe
    EXPECT_EQ(old.m_tileChunkBytes, 2u << 20);
}

// Every generated algorithm holds at most one step's chunks on a connection, so the executor
// keeps the tiles it had for it (buffer / largest step count) and no timing moves.
TEST(ConnectionCapacity, GeneratedSchedulesKeepTheirTiles)
{
    int checked = 0;
    for (const char* coll :
         {"allreduce", "allgather", "reducescatter", "alltoall", "broadcast", "reduce"})
    {
        const CollectiveKind kind = *ParseCollectiveKind(coll);
        for (const std::string& algo : AlgorithmsFor(kind))
        {
            for (int ranks : {2, 4, 8, 16})
            {
                GeneratorOptions opt;
                opt.localSize = ranks >= 4 ? 2 : 0;
                Schedule s;
                try
                {
                    s = GenerateSchedule(kind, algo, ranks, opt);
                }
                catch (const fabricsim::InputError&)
                {
                    continue; // not for this rank count
                }
                int largest = 1;
                for (const RankProgram& p : s.m_programs)
                {
                    for (const Threadblock& tb : p.m_threadblocks)
                    {
                        for (const Step& st : tb.m_steps)
                        {
                            largest = std::max(largest, st.m_count);
                        }
                    }
                }
                const int needed = ConnectionChunksNeeded(s);
                EXPECT_GE(needed, 1) << coll << " " << algo << " " << ranks;
                EXPECT_LE(needed, largest) << coll << " " << algo << " " << ranks;
                checked++;
            }
        }
    }
    EXPECT_GT(checked, 60);
}

TEST(ConnectionCapacity, MoreChunksThanSlotsIsRefusedNamingSlots)
{
    const Schedule s = SendsBeforeReceives(3);
    ExecutorConfig two;
    two.m_slots = 2;
    try
    {
        Execute(s, 1 << 20, two);
        FAIL() << "no error";
    }
    catch (const fabricsim::InputError& e)
    {
        EXPECT_EQ(e.Field(), "ns3::CollectiveExecutor::Slots");
        EXPECT_NE(std::string(e.what()).find("at least 3 slots per connection"), std::string::npos)
            << e.what();
    }
    // Eight slots hold three chunks: complete at any size.
    for (uint64_t bytes : {uint64_t(3) << 10, uint64_t(96) << 20})
    {
        const ExecutionResult r = Execute(s, bytes);
        EXPECT_TRUE(r.m_complete) << bytes << ": " << r.StuckReport();
    }
}

TEST(ConnectionCapacity, ValidateReportsIt)
{
    std::ostringstream out;
    std::ostringstream err;
    EXPECT_EQ(RunValidateCommand(std::string(FABRICSIM_SOURCE_DIR)
                                     + "/collectives/examples/allgather-4rank.xml",
                                 "allgather",
                                 4,
                                 out,
                                 err),
              0)
        << err.str();
    EXPECT_NE(out.str().find("VALID, a connection holds up to 2 chunk(s) at once"),
              std::string::npos)
        << out.str();
    EXPECT_EQ(ValidateSchedule(test::RingAllReduce(4)).m_connectionChunks, 1);
}

} // namespace
} // namespace fabricsim
