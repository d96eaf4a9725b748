/*
 * Every schedule of the MSCCL corpus (data/msccl, one folder per source) that the
 * verdict list (tests/collectives/msccl-corpus.tsv) calls valid runs to completion on the packet
 * fabric; invalid ones complete or end with a stuck report, never a hang.
 */
#include "packet-test-util.h"
#include "schedule-loader.h"
#include "test-util.h"

#include <gtest/gtest.h>

namespace fabricsim
{
namespace
{

class PacketCorpusTest : public ::testing::TestWithParam<test::CorpusEntry>
{
  protected:
    void SetUp() override
    {
        ASSERT_FALSE(test::CorpusDir().empty()) << "data/msccl is missing";
    }
};

TEST_P(PacketCorpusTest, RunsOnThePacketFabric)
{
    const test::CorpusEntry& e = GetParam();
    MscclDocument doc = LoadScheduleFile(test::CorpusDir() + "/" + e.m_file);
    for (const Schedule& s : doc.m_schedules)
    {
        nlohmann::json sc = test::SingleSwitchScenario(s.m_ranks, "100Gbps");
        sc["stop_ns"] = 50000000; // a stuck invalid schedule ends here
        CollectiveMeasurement m = test::Measure(sc, "packet", s, 64 * 1024);
        if (e.m_expected == "valid")
        {
            ASSERT_TRUE(m.m_complete) << e.m_file << "\n" << m.m_stuckReport;
            EXPECT_EQ(m.m_last.m_unconsumedMessages, 0u) << e.m_file;
            EXPECT_EQ(m.m_fabric["drops"], 0);
        }
        else if (!m.m_complete)
        {
            EXPECT_NE(m.m_stuckReport.find("ranks stuck"), std::string::npos) << e.m_file;
        }
    }
}

std::string
Name(const ::testing::TestParamInfo<test::CorpusEntry>& info)
{
    std::string n = info.param.m_file;
    for (char& c : n)
    {
        c = isalnum(static_cast<unsigned char>(c)) ? c : '_';
    }
    return n;
}

INSTANTIATE_TEST_SUITE_P(Msccl, PacketCorpusTest, ::testing::ValuesIn(test::LoadManifest()), Name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(PacketCorpusTest);

} // namespace
} // namespace fabricsim
