#include "input-error.h"
#include "msccl-xml.h"
#include "test-util.h"

#include <gtest/gtest.h>

namespace fabricsim
{
namespace
{

const char* kSmall
    = R"(<algo name="tiny" proto="LL" nchannels="1" nchunksperloop="2" ngpus="2" coll="reduce_scatter" inplace="0" outofplace="1" minBytes="0" maxBytes="4096">
  <gpu id="0" i_chunks="2" o_chunks="1" s_chunks="0">
    <tb id="0" send="1" recv="1" chan="0">
      <step s="0" type="s" srcbuf="i" srcoff="1" dstbuf="i" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="1" type="rrc" srcbuf="i" srcoff="0" dstbuf="o" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="1"/>
    </tb>
    <tb id="1" send="-1" recv="-1" chan="0">
      <step s="0" type="nop" srcbuf="i" srcoff="-1" dstbuf="o" dstoff="-1" cnt="0" depid="0,0" deps="0,1" hasdep="0"/>
    </tb>
  </gpu>
  <gpu id="1" i_chunks="2" o_chunks="1" s_chunks="0">
    <tb id="0" send="0" recv="0" chan="0">
      <step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="1" type="rrc" srcbuf="i" srcoff="1" dstbuf="o" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
</algo>
)";

TEST(MscclXml, ImportsAlgoGpuTbStep)
{
    const MscclDocument doc = ParseMscclXml(kSmall, "small.xml");
    ASSERT_EQ(doc.m_schedules.size(), 1u);
    const Schedule& s = doc.m_schedules[0];
    EXPECT_EQ(s.m_name, "tiny");
    EXPECT_EQ(s.m_collective, CollectiveKind::kReduceScatter);
    EXPECT_EQ(s.m_protocol, Protocol::kLL);
    EXPECT_EQ(s.m_ranks, 2);
    EXPECT_EQ(s.m_chunksPerLoop, 2);
    EXPECT_FALSE(s.m_inPlace);
    EXPECT_EQ(s.m_outOfPlace, true);
    EXPECT_EQ(s.m_attributes.at("maxBytes"), "4096");
    const Threadblock& tb0 = s.Rank(0).m_threadblocks[0];
    EXPECT_EQ(tb0.m_sendPeer, 1);
    EXPECT_EQ(tb0.m_steps[1].m_op, StepOp::kRecvReduceCopy);
    EXPECT_EQ(tb0.m_steps[1].m_dstBuffer, BufferKind::kOutput);
    EXPECT_TRUE(tb0.m_steps[1].m_hasDep);
    // Several dependencies on one step.
    const Step& nop = s.Rank(0).m_threadblocks[1].m_steps[0];
    ASSERT_EQ(nop.m_deps.size(), 2u);
    EXPECT_EQ(nop.m_deps[1], (Dependency{0, 1}));
}

TEST(MscclXml, ExportImportRoundTripOfBuiltSchedule)
{
    Schedule s = test::RingAllReduce(5);
    s.m_attributes["nthreads"] = "256";
    s.m_outOfPlace = false;
    s.Rank(1).m_threadblocks[0].m_steps[2].m_deps = {{0, 1}, {0, 0}};
    const Schedule again = ParseMscclXml(WriteMscclXml(s), "x.xml").m_schedules.at(0);
    EXPECT_TRUE(again == s);

    Schedule b = Schedule::Create(CollectiveKind::kBroadcast, 3, 3, false);
    b.m_root = 2;
    const Schedule b2 = ParseMscclXml(WriteMscclXml(b), "b.xml").m_schedules.at(0);
    EXPECT_EQ(b2.m_root, 2);
    EXPECT_TRUE(b2 == b);
}

TEST(MscclXml, MultipleAlgosAndTrailingText)
{
    const std::string text = std::string(kSmall) + kSmall + "checker: Rank 0 chunk 1 is wrong\n";
    const MscclDocument doc = ParseMscclXml(text, "two.xml");
    EXPECT_EQ(doc.m_schedules.size(), 2u);
    EXPECT_EQ(doc.m_warnings.size(), 2u); // trailing text + several algos
}

void
ExpectError(const std::string& text, const std::string& fieldPart, const std::string& expectedPart)
{
    try
    {
        ParseMscclXml(text, "broken.xml");
        ADD_FAILURE() << "accepted broken input";
    }
    catch (const fabricsim::InputError& e)
    {
        EXPECT_EQ(e.File(), "broken.xml");
        EXPECT_NE(e.Field().find(fieldPart), std::string::npos) << e.what();
        EXPECT_NE(e.Expected().find(expectedPart), std::string::npos) << e.what();
    }
}

TEST(MscclXml, BadInputNamesFieldAndLine)
{
    std::string s = kSmall;
    ExpectError(std::string(s).replace(s.find("type=\"rrc\""), 10, "type=\"zz\""), "@type", "rcs");
    ExpectError(
        std::string(s).replace(s.find("cnt=\"1\""), 7, "cnt=\"x\""), "@cnt (line 4)", "integer");
    ExpectError(std::string(s).replace(s.find("ngpus=\"2\""), 9, ""), "algo@ngpus", "ngpus");
    ExpectError(
        std::string(s).replace(s.find("srcbuf=\"i\""), 10, "srcbuf=\"q\""), "@srcbuf", "i, o, s");
    ExpectError(std::string(s).replace(s.find("coll=\"reduce_scatter\""), 21, "coll=\"foo\""),
                "@coll",
                "allreduce");
    ExpectError("<algorithm/>", "root element", "<algo>");
    ExpectError(std::string(s).replace(s.find("depid=\"0,0\""), 11, "depid=\"0\""),
                "@deps",
                "as many entries");
    ExpectError(std::string(s).substr(0, s.size() / 2), "line", "closing");
}

} // namespace
} // namespace fabricsim
