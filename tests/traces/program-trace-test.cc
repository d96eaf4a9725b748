#include "chakra-import.h"
#include "input-error.h"
#include "program-trace-import.h"
#include "step-program.h"
#include "trace-test-util.h"

#include <gtest/gtest.h>

namespace fabricsim
{
namespace
{

/// Two steps of a TP-2 program: compute, an all-reduce, an async send to the other rank that
/// a later wait joins.
std::vector<nlohmann::json>
Records()
{
    std::vector<nlohmann::json> out;
    for (uint64_t s = 0; s < 2; ++s)
    {
        StepProgram p;
        p.step = s;
        for (uint32_t r = 0; r < 2; ++r)
        {
            RankStepProgram rp;
            rp.rank = r;
            ProgramItem c;
            c.type = ProgramItem::Type::Compute;
            c.name = "qkv_proj";
            c.durationPs = 10000000; // 10 us
            c.flops = 1e9;
            ProgramItem ar;
            ar.type = ProgramItem::Type::Comm;
            ar.op = CommOp::AllReduce;
            ar.name = "attn_out";
            ar.key = "s" + std::to_string(s) + "/ar";
            ar.group = {0, 1};
            ar.groupIndex = r;
            ar.bytes = 8 << 20;
            ProgramItem p2p;
            p2p.type = ProgramItem::Type::Comm;
            p2p.op = r == 0 ? CommOp::Send : CommOp::Recv;
            p2p.key = "s" + std::to_string(s) + "/pp";
            p2p.group = {0, 1};
            p2p.bytes = 1 << 20;
            p2p.async = true;
            ProgramItem wait;
            wait.type = ProgramItem::Type::Wait;
            wait.key = p2p.key;
            rp.items = {c, ar, p2p, c, wait};
            p.ranks.push_back(rp);
        }
        out.push_back(p.ToJson());
    }
    return out;
}

TEST(ProgramTrace, RecordedProgramsReplayAndExportToChakra)
{
    ImportedTrace tr = ImportProgramRecords(Records(), "rec.jsonl");
    EXPECT_EQ(tr.format, "fabricsim-program");
    ASSERT_EQ(tr.ranks.size(), 2u);
    EXPECT_EQ(tr.counts["step_programs"], 4u);
    TestFabric fabric(2, 450);
    ReplayRun run = fabric.Replay(tr, {});
    ASSERT_TRUE(run.complete) << (run.stuck.empty() ? "" : run.stuck[0]);
    // Per step: 2 x 10 us of compute and an 8 MiB all-reduce (>= 18.6 us at 450 GB/s) in series.
    EXPECT_GT(run.spanPs, 2 * (20000000 + 18600000));
    int allreduces = 0;
    int transfers = 0;
    for (const ReplayedComm& c : run.comms)
    {
        allreduces += c.collective == "all_reduce";
        transfers += c.collective == "send" || c.collective == "recv";
        EXPECT_TRUE(c.simulated) << c.key;
    }
    EXPECT_EQ(allreduces, 2);
    EXPECT_EQ(transfers, 2); // one key per step: the send and its receive
    // The same work as Chakra, read back: the same replay.
    ImportedTrace back;
    for (uint32_t r = 0; r < 2; ++r)
    {
        ImportChakraTrace(ParseChakra(SerializeChakra(ExportChakra(tr, r)), "x"),
                          "p." + std::to_string(r) + ".et",
                          r,
                          {},
                          back);
    }
    CompleteRanks(back);
    TestFabric again(2, 450);
    EXPECT_EQ(again.Replay(back, {}).spanPs, run.spanPs);
    ChakraTrace plain = ExportChakra(tr, 0);
    int coll = 0;
    int sends = 0;
    for (const ChakraNode& n : plain.nodes)
    {
        coll += n.type == uint32_t(ChakraNodeType::kCommColl);
        sends += n.type == uint32_t(ChakraNodeType::kCommSend);
    }
    EXPECT_EQ(coll, 2);
    EXPECT_EQ(sends, 2);
}

TEST(ProgramTrace, MalformedRecordsNameTheLine)
{
    std::vector<nlohmann::json> r = Records();
    r.push_back({{"type", "step"}, {"step", 9}, {"ranks", 3}});
    try
    {
        ImportProgramRecords(r, "rec.jsonl");
        FAIL() << "no error";
    }
    catch (const fabricsim::InputError& e)
    {
        EXPECT_EQ(e.Field(), "line 3.ranks");
        EXPECT_EQ(e.Expected(), "an array");
    }
    EXPECT_THROW(ImportProgramRecords({{{"type", "nope"}}}, "x"), fabricsim::InputError);
    EXPECT_TRUE(LooksLikeProgramTrace(Records()[0].dump()));
    EXPECT_FALSE(LooksLikeProgramTrace("{\"traceEvents\": []}"));
    // A recorded step longer than the head read (a step of many ranks is megabytes): the
    // writer's first key still says what it is, where a profiler trace's does not.
    const std::string step = Records()[0].dump();
    ASSERT_EQ(step.rfind("{\"deps\":{", 0), 0u) << step;
    EXPECT_TRUE(LooksLikeProgramTrace(step.substr(0, step.size() / 2)));
    EXPECT_TRUE(LooksLikeProgramTrace(step + "\n" + step));
    EXPECT_FALSE(LooksLikeProgramTrace("{\"traceEvents\": [{\"ph\": \"X\""));
    EXPECT_FALSE(LooksLikeProgramTrace("{\"deps\": 3}\n"));
}

} // namespace
} // namespace fabricsim
