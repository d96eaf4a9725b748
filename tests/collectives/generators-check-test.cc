/*
 * Generated schedules under scrutiny: deliberately broken copies fail validation for the right
 * reason, the files survive MSCCL XML and JSON export/import, the remote-place fields are
 * filled in, and generation + validation stays fast at 64 ranks.
 */
#include "generators.h"
#include "msccl-xml.h"
#include "schedule-json.h"
#include "schedule-validator.h"
#include "test-util.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <ctime>

namespace fabricsim
{
namespace
{

using K = CollectiveKind;

std::string
Dump(const ValidationReport& r)
{
    std::string out;
    for (size_t i = 0; i < r.m_problems.size() && i < 8; ++i)
    {
        out += "\n  " + r.m_problems[i].ToString();
    }
    return out;
}

GeneratorOptions
Options(int channels = 1, int chunksPerRank = 1, int localSize = 0)
{
    GeneratorOptions o;
    o.channels = channels;
    o.chunksPerRank = chunksPerRank;
    o.localSize = localSize;
    return o;
}

/// Position of the first step of \p op in threadblock \p tb (-1 when none).
int
FindOp(const Threadblock& tb, StepOp op)
{
    for (size_t i = 0; i < tb.m_steps.size(); ++i)
    {
        if (tb.m_steps[i].m_op == op)
        {
            return static_cast<int>(i);
        }
    }
    return -1;
}

/// Inserts a copy of step \p pos right after it, keeping indices and dependencies consistent.
void
DuplicateStep(RankProgram& p, int tbId, int pos)
{
    Threadblock& tb = p.m_threadblocks.at(tbId);
    tb.m_steps.insert(tb.m_steps.begin() + pos + 1, tb.m_steps[pos]);
    for (size_t i = 0; i < tb.m_steps.size(); ++i)
    {
        tb.m_steps[i].m_index = static_cast<int>(i);
    }
    for (auto& other : p.m_threadblocks)
    {
        for (auto& st : other.m_steps)
        {
            for (auto& d : st.m_deps)
            {
                if (d.m_tb == tbId && d.m_step > pos)
                {
                    ++d.m_step;
                }
            }
        }
    }
}

TEST(GeneratorsBroken, DroppedReductionIsMissingContribution)
{
    Schedule s = GenerateSchedule(K::kAllReduce, "ring", 4);
    ASSERT_TRUE(ValidateSchedule(s).m_valid);
    // Rank 2's turn step (rrcs) stores and forwards without adding its own input.
    Threadblock& tb = s.Rank(2).m_threadblocks[0];
    const int turn = FindOp(tb, StepOp::kRecvReduceCopySend);
    ASSERT_GE(turn, 0);
    tb.m_steps[turn].m_op = StepOp::kRecvCopySend;
    const ValidationReport r = ValidateSchedule(s);
    EXPECT_FALSE(r.m_valid);
    ASSERT_GT(r.Count(ProblemKind::kMissingContribution), 0u) << Dump(r);
    bool namesRank2 = false;
    for (const auto& p : r.m_problems)
    {
        namesRank2 = namesRank2
                     || (p.m_kind == ProblemKind::kMissingContribution
                         && p.m_message.find("missing {r2.") != std::string::npos);
    }
    EXPECT_TRUE(namesRank2) << Dump(r);
}

TEST(GeneratorsBroken, ReducingTwiceIsDuplicateContribution)
{
    Schedule s = GenerateSchedule(K::kAllReduce, "ring", 4);
    // An allgather step that reduces into what it already holds counts it twice.
    Threadblock& tb = s.Rank(1).m_threadblocks[0];
    const int forward = FindOp(tb, StepOp::kRecvCopySend);
    ASSERT_GE(forward, 0);
    Step& st = tb.m_steps[forward];
    st.m_op = StepOp::kRecvReduceCopySend;
    st.m_srcBuffer = st.m_dstBuffer;
    st.m_srcOffset = st.m_dstOffset;
    s.m_outOfPlace = false; // out of place that chunk is not written yet (another problem)
    const ValidationReport r = ValidateSchedule(s);
    EXPECT_FALSE(r.m_valid);
    EXPECT_GT(r.Count(ProblemKind::kDuplicateContribution), 0u) << Dump(r);
}

TEST(GeneratorsBroken, DuplicatedSendIsUnmatchedMessage)
{
    Schedule s = GenerateSchedule(K::kAllToAll, "direct", 4);
    ASSERT_TRUE(ValidateSchedule(s).m_valid);
    RankProgram& p = s.Rank(0);
    int tbId = -1;
    for (const auto& tb : p.m_threadblocks)
    {
        tbId = tb.m_sendPeer == 3 ? tb.m_id : tbId;
    }
    ASSERT_GE(tbId, 0);
    DuplicateStep(p, tbId, FindOp(p.m_threadblocks[tbId], StepOp::kSend));
    const ValidationReport r = ValidateSchedule(s);
    EXPECT_FALSE(r.m_valid);
    ASSERT_EQ(r.Count(ProblemKind::kUnmatchedMessage), 1u) << Dump(r);
    for (const auto& prob : r.m_problems)
    {
        if (prob.m_kind == ProblemKind::kUnmatchedMessage)
        {
            EXPECT_EQ(prob.m_rank, 0);
            EXPECT_EQ(prob.m_tb, tbId);
            EXPECT_NE(prob.m_message.find("to rank 3"), std::string::npos) << prob.ToString();
        }
    }
}

TEST(GeneratorsBroken, DroppedReceiveLeavesMessageAndMissingData)
{
    Schedule s = GenerateSchedule(K::kAllReduce, "rd", 4);
    // Rank 3's last exchange: drop its reduce; the partner's message is never taken.
    Threadblock& tb = s.Rank(3).m_threadblocks.back();
    ASSERT_EQ(tb.m_steps.back().m_op, StepOp::kRecvReduceCopy);
    tb.m_steps.pop_back();
    s.MarkDependencyTargets();
    const ValidationReport r = ValidateSchedule(s);
    EXPECT_FALSE(r.m_valid);
    EXPECT_EQ(r.Count(ProblemKind::kUnmatchedMessage), 1u) << Dump(r);
    EXPECT_GT(r.Count(ProblemKind::kMissingContribution), 0u) << Dump(r);
}

TEST(GeneratorsBroken, DerivedDependenciesAreNeeded)
{
    // Without the cross-threadblock dependencies the tree's result depends on timing.
    for (const auto& [algo, kind] : {std::make_pair("tree", K::kAllReduce),
                                     std::make_pair("hierarchical", K::kAllToAll),
                                     std::make_pair("bruck", K::kAllToAll)})
    {
        Schedule s = GenerateSchedule(kind, algo, 6, Options(1, 2, 2));
        ASSERT_TRUE(ValidateSchedule(s).m_valid) << algo;
        size_t dropped = 0;
        for (auto& p : s.m_programs)
        {
            for (auto& tb : p.m_threadblocks)
            {
                for (auto& st : tb.m_steps)
                {
                    dropped += st.m_deps.size();
                    st.m_deps.clear();
                }
            }
        }
        EXPECT_GT(dropped, 0u) << algo;
        const ValidationReport r = ValidateSchedule(s);
        EXPECT_FALSE(r.m_valid) << algo << " stays valid without its dependencies";
    }
}

struct ExportCase
{
    const char* m_algorithm;
    K m_kind;
    int m_ranks;
    GeneratorOptions m_options;
};

std::vector<ExportCase>
ExportCases()
{
    return {{"ring", K::kAllReduce, 8, Options(2, 2)},
            {"tree", K::kAllReduce, 7, Options(1, 2)},
            {"rhd", K::kReduceScatter, 6, Options()},
            {"rd", K::kAllGather, 8, Options(2)},
            {"pairwise", K::kAllToAll, 5, Options()},
            {"bruck", K::kAllToAll, 9, Options()},
            {"hierarchical", K::kAllReduce, 8, Options(2, 1, 4)},
            {"ring", K::kBroadcast, 5, Options(1, 4)}};
}

TEST(GeneratorsExport, MscclXmlRoundTripStaysValid)
{
    for (const auto& c : ExportCases())
    {
        const Schedule s = GenerateSchedule(c.m_kind, c.m_algorithm, c.m_ranks, c.m_options);
        const std::string path = test::TempPath(".xml");
        WriteMscclXmlFile(s, path);
        const Schedule back = ReadMscclXml(path);
        std::remove(path.c_str());
        EXPECT_TRUE(back == s) << c.m_algorithm << " " << ToString(c.m_kind);
        const ValidationReport r = ValidateSchedule(back, c.m_kind, c.m_ranks);
        EXPECT_TRUE(r.m_valid) << c.m_algorithm << Dump(r);
    }
}

TEST(GeneratorsExport, JsonRoundTripIsLossless)
{
    for (const auto& c : ExportCases())
    {
        const Schedule s = GenerateSchedule(c.m_kind, c.m_algorithm, c.m_ranks, c.m_options);
        const Schedule back = ParseScheduleJson(WriteScheduleJson(s), "gen.json");
        EXPECT_TRUE(back == s) << c.m_algorithm << " " << ToString(c.m_kind);
    }
}

TEST(GeneratorsExport, RemotePlacesAreFilledIn)
{
    // MSCCL files name the remote buffer in the fields a step does not use itself.
    for (const auto& c : ExportCases())
    {
        const Schedule s = GenerateSchedule(c.m_kind, c.m_algorithm, c.m_ranks, c.m_options);
        for (const auto& p : s.m_programs)
        {
            for (const auto& tb : p.m_threadblocks)
            {
                for (const auto& st : tb.m_steps)
                {
                    EXPECT_GE(st.m_srcOffset, 0) << c.m_algorithm << " " << MscclName(st.m_op);
                    EXPECT_GE(st.m_dstOffset, 0) << c.m_algorithm << " " << MscclName(st.m_op);
                }
            }
        }
    }
}

/// CPU seconds (other processes on a shared machine do not count).
double
CpuSeconds()
{
    return static_cast<double>(std::clock()) / CLOCKS_PER_SEC;
}

TEST(GeneratorsSpeed, SixtyFourRanksEightChannels)
{
    struct Run
    {
        const char* m_algorithm;
        K m_kind;
        GeneratorOptions m_options;
    };
    const Run runs[] = {{"ring", K::kAllReduce, Options(8)},
                        {"tree", K::kAllReduce, Options(8)},
                        {"rhd", K::kAllReduce, Options(8)},
                        {"hierarchical", K::kAllReduce, Options(8, 1, 8)},
                        {"direct", K::kAllToAll, Options(8)}};
    for (const auto& run : runs)
    {
        const double start = CpuSeconds();
        const Schedule s = GenerateSchedule(run.m_kind, run.m_algorithm, 64, run.m_options);
        const double generated = CpuSeconds();
        const ValidationReport r = ValidateSchedule(s);
        const double seconds = CpuSeconds() - start;
        EXPECT_TRUE(r.m_valid) << run.m_algorithm << Dump(r);
        std::printf("%-12s %-9s 64 ranks x 8 channels: %zu steps, generate %.3f s, "
                    "generate + validate %.3f s\n",
                    run.m_algorithm,
                    ToString(run.m_kind).c_str(),
                    s.StepCount(),
                    generated - start,
                    seconds);
#if !defined(__SANITIZE_ADDRESS__)
        if (std::string(run.m_algorithm) == "ring")
        {
            EXPECT_LT(seconds, 1.0) << "ring allreduce, 64 ranks, 8 channels";
        }
#endif
    }
}

} // namespace
} // namespace fabricsim
