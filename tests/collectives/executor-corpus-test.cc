/*
 * Every schedule of the MSCCL corpus (data/msccl, one folder per source) that the
 * verdict list (tests/collectives/msccl-corpus.tsv) calls valid runs to completion on the
 * analytical backend, with every message received; invalid ones either complete or end with a stuck
 * report, never a hang.
 */
#include "analytical-transport.h"
#include "executor-test-util.h"
#include "executor.h"
#include "schedule-loader.h"
#include "test-util.h"

#include <gtest/gtest.h>

namespace fabricsim
{
namespace
{

class ExecutorCorpusTest : public ::testing::TestWithParam<test::CorpusEntry>
{
  protected:
    void SetUp() override
    {
        ASSERT_FALSE(test::CorpusDir().empty()) << "data/msccl is missing";
    }
};

TEST_P(ExecutorCorpusTest, RunsOnTheAnalyticalBackend)
{
    const test::CorpusEntry& e = GetParam();
    MscclDocument doc = LoadScheduleFile(test::CorpusDir() + "/" + e.m_file);
    for (const Schedule& s : doc.m_schedules)
    {
        AnalyticalTransport t(test::SingleSwitch(s.m_ranks));
        ExecutionResult r = RunSchedule(t, s, 1 << 20);
        if (e.m_expected == "valid")
        {
            ASSERT_TRUE(r.m_complete) << e.m_file << "\n" << r.StuckReport();
            EXPECT_EQ(r.m_undeliveredMessages, 0u);
            EXPECT_EQ(r.m_unconsumedMessages, 0u) << e.m_file;
            EXPECT_GT(r.DurationPs(), 0);
        }
        else if (!r.m_complete)
        {
            EXPECT_FALSE(r.m_stuck.empty()) << e.m_file;
            EXPECT_NE(r.StuckReport().find("ranks stuck"), std::string::npos);
        }
    }
}

std::string
Name(const ::testing::TestParamInfo<test::CorpusEntry>& info)
{
    std::string n = info.param.m_file;
    for (char& c : n)
    {
        if (!isalnum(static_cast<unsigned char>(c)))
        {
            c = '_';
        }
    }
    return n;
}

INSTANTIATE_TEST_SUITE_P(Msccl,
                         ExecutorCorpusTest,
                         ::testing::ValuesIn(test::LoadManifest()),
                         Name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ExecutorCorpusTest);

} // namespace
} // namespace fabricsim
