#include "msccl-xml.h"
#include "schedule-json.h"
#include "test-util.h"
#include "validate-command.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <sstream>

namespace fabricsim
{
namespace
{

struct Result
{
    int m_rc;
    std::string m_out;
    std::string m_err;
};

Result
RunCommand(const std::string& file, const std::string& coll = "", int ranks = 0)
{
    std::ostringstream out;
    std::ostringstream err;
    const int rc = RunValidateCommand(file, coll, ranks, out, err);
    return Result{rc, out.str(), err.str()};
}

bool
Contains(const std::string& s, const std::string& part)
{
    return s.find(part) != std::string::npos;
}

TEST(ValidateCommand, ValidJsonAndXmlExitZero)
{
    const Schedule ring = test::RingAllReduce(4);
    const std::string json = test::WriteTemp(WriteScheduleJson(ring), ".json");
    const std::string xml = test::WriteTemp(WriteMscclXml(ring), ".xml");
    const std::string sniffed = test::WriteTemp(WriteMscclXml(ring), ".msccl");
    for (const auto& f : {json, xml, sniffed})
    {
        const Result r = RunCommand(f, "allreduce", 4);
        EXPECT_EQ(r.m_rc, 0) << r.m_out << r.m_err;
        EXPECT_TRUE(Contains(r.m_out, "VALID")) << r.m_out;
        std::remove(f.c_str());
    }
}

TEST(ValidateCommand, InvalidPrintsEveryProblem)
{
    Schedule s = test::RingAllReduce(3);
    s.Rank(1).m_threadblocks[0].m_steps[2].m_index = 9;
    s.Rank(2).m_threadblocks[0].m_steps[0].m_count = 2;
    const std::string f = test::WriteTemp(WriteMscclXml(s), ".xml");
    const Result r = RunCommand(f);
    EXPECT_EQ(r.m_rc, 1);
    EXPECT_TRUE(Contains(r.m_out, "INVALID")) << r.m_out;
    EXPECT_TRUE(Contains(r.m_out, "rank 1 tb 0 step 2: step-index:")) << r.m_out;
    EXPECT_TRUE(Contains(r.m_out, "count-mismatch")) << r.m_out;
    // Wrong expectation from the command line is a problem, not an input error.
    EXPECT_EQ(RunCommand(f, "alltoall").m_rc, 1);
    std::remove(f.c_str());
}

TEST(ValidateCommand, MalformedXmlExitsTwoNamingTheFile)
{
    const std::string f
        = test::WriteTemp("<algo name=\"x\" ngpus=\"2\">\n  <gpu id=\"0\"\n", ".xml");
    const Result r = RunCommand(f);
    EXPECT_EQ(r.m_rc, 2);
    EXPECT_TRUE(Contains(r.m_err, f)) << r.m_err;
    EXPECT_TRUE(Contains(r.m_err, "line")) << r.m_err;
    std::remove(f.c_str());

    const std::string g = test::WriteTemp(
        "<algo name=\"x\" proto=\"LL\" nchannels=\"1\" nchunksperloop=\"2\" ngpus=\"2\" "
        "coll=\"allreduce\" inplace=\"1\">\n  <gpu id=\"0\" i_chunks=\"two\" o_chunks=\"0\" "
        "s_chunks=\"0\"/>\n</algo>\n",
        ".xml");
    const Result rg = RunCommand(g);
    EXPECT_EQ(rg.m_rc, 2);
    EXPECT_TRUE(Contains(rg.m_err, g + ": field 'algo/gpu[0]@i_chunks (line 2)'")) << rg.m_err;
    EXPECT_TRUE(Contains(rg.m_err, "expected an integer, found 'two'")) << rg.m_err;
    std::remove(g.c_str());
}

TEST(ValidateCommand, UnreadableOrUnknownInputExitsTwo)
{
    EXPECT_EQ(RunCommand("/nonexistent/dir/file.xml").m_rc, 2);
    EXPECT_TRUE(
        Contains(RunCommand("/nonexistent/dir/file.xml").m_err, "/nonexistent/dir/file.xml"));
    const std::string f = test::WriteTemp("hello", ".txt");
    EXPECT_EQ(RunCommand(f).m_rc, 2);
    std::remove(f.c_str());
    const std::string j = test::WriteTemp("{\"collective\": 3}", ".json");
    const Result r = RunCommand(j);
    EXPECT_EQ(r.m_rc, 2);
    EXPECT_TRUE(Contains(r.m_err, "field 'collective'")) << r.m_err;
    std::remove(j.c_str());
    const std::string ok = test::WriteTemp(WriteScheduleJson(test::RingAllReduce(2)), ".json");
    EXPECT_EQ(RunCommand(ok, "allsum").m_rc, 2);
    EXPECT_EQ(RunCommand(ok, "", -1).m_rc, 2);
    // Every error starts as every other command's do.
    for (const Result& e : {RunCommand("/nonexistent/dir/file.xml"),
                            RunCommand(ok, "allsum"),
                            RunCommand(ok, "", -1)})
    {
        EXPECT_EQ(e.m_err.rfind("fabricsim: error: ", 0), 0u) << e.m_err;
    }
    std::remove(ok.c_str());
}

} // namespace
} // namespace fabricsim
