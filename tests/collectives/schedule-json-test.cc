#include "input-error.h"
#include "schedule-json.h"
#include "schedule-validator.h"
#include "test-util.h"

#include <gtest/gtest.h>

namespace fabricsim
{
namespace
{

TEST(ScheduleJson, RoundTrip)
{
    Schedule s = test::DirectAllToAll(4);
    s.m_attributes["redop"] = "sum";
    s.Rank(2).m_initialCopies.push_back(InitialCopy{1, 3});
    s.Rank(1).m_threadblocks[1].m_steps[0].m_deps = {{0, 0}};
    s.MarkDependencyTargets();
    const std::string text = WriteScheduleJson(s);
    const Schedule again = ParseScheduleJson(text, "a2a.json");
    EXPECT_TRUE(again == s);
    EXPECT_EQ(WriteScheduleJson(again), text);
}

TEST(ScheduleJson, DocumentedExampleParses)
{
    // The example from docs/schedule-ir.md: a 2-rank allreduce, in place.
    const char* text = R"({
  "format": "fabricsim-schedule/1",
  "name": "allreduce_2ranks",
  "collective": "allreduce",
  "num_ranks": 2,
  "chunks_per_loop": 2,
  "in_place": true,
  "protocol": "Simple",
  "channels": 1,
  "ranks": [
    {"rank": 0, "input_chunks": 2, "output_chunks": 0, "scratch_chunks": 0,
     "threadblocks": [
       {"id": 0, "send": 1, "recv": 1, "channel": 0, "steps": [
         {"type": "send", "src": "i", "src_off": 1, "dst": "i", "dst_off": 1, "cnt": 1},
         {"type": "recv_reduce_copy", "src": "i", "src_off": 0, "dst": "i", "dst_off": 0, "cnt": 1},
         {"type": "send", "src": "i", "src_off": 0, "dst": "i", "dst_off": 0, "cnt": 1},
         {"type": "recv", "src": "i", "src_off": 1, "dst": "i", "dst_off": 1, "cnt": 1}]}]},
    {"rank": 1, "input_chunks": 2, "output_chunks": 0, "scratch_chunks": 0,
     "threadblocks": [
       {"id": 0, "send": 0, "recv": 0, "channel": 0, "steps": [
         {"type": "s", "src": "i", "src_off": 0, "dst": "i", "dst_off": 0, "cnt": 1},
         {"type": "rrc", "src": "i", "src_off": 1, "dst": "i", "dst_off": 1, "cnt": 1},
         {"type": "s", "src": "i", "src_off": 1, "dst": "i", "dst_off": 1, "cnt": 1},
         {"type": "r", "src": "i", "src_off": 0, "dst": "i", "dst_off": 0, "cnt": 1}]}]}
  ]
})";
    const Schedule s = ParseScheduleJson(text, "doc.json");
    EXPECT_EQ(s.m_collective, CollectiveKind::kAllReduce);
    EXPECT_EQ(s.Rank(1).m_threadblocks[0].m_steps[1].m_op, StepOp::kRecvReduceCopy);
    EXPECT_EQ(s.Rank(1).m_threadblocks[0].m_steps[3].m_index, 3);
    EXPECT_TRUE(ValidateSchedule(s).m_valid);
}

TEST(ScheduleJson, ErrorsNameThePath)
{
    const std::string good = WriteScheduleJson(test::RingAllReduce(3));
    auto expectError = [](const std::string& text, const std::string& field)
    {
        try
        {
            ParseScheduleJson(text, "bad.json");
            ADD_FAILURE() << "accepted";
        }
        catch (const fabricsim::InputError& e)
        {
            EXPECT_EQ(e.File(), "bad.json");
            EXPECT_EQ(e.Field(), field) << e.what();
        }
    };
    expectError("{ nope", "");
    std::string t = good;
    t.replace(t.find("\"recv_reduce_send\""), 18, "\"teleport\"");
    expectError(t, "ranks[0].threadblocks[0].steps[1].type");
    t = good;
    t.replace(t.find("\"num_ranks\": 3"), 14, "\"num_ranks\": \"3\"");
    expectError(t, "num_ranks");
    t = good;
    t.replace(t.find("\"collective\": \"allreduce\""), 25, "\"collective\": \"allsum\"");
    expectError(t, "collective");
}

} // namespace
} // namespace fabricsim
