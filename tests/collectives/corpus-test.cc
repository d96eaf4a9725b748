/*
 * The MSCCL corpus (data/msccl, one folder per source): every file parses, its
 * verdict agrees with tests/collectives/msccl-corpus.tsv, and it survives XML and JSON round
 * trips.
 */
#include "msccl-xml.h"
#include "schedule-json.h"
#include "schedule-loader.h"
#include "schedule-validator.h"
#include "test-util.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>

namespace fabricsim
{
namespace
{

using test::CorpusDir;
using test::CorpusEntry;
using test::LoadManifest;

class CorpusTest : public ::testing::TestWithParam<CorpusEntry>
{
  protected:
    void SetUp() override
    {
        ASSERT_FALSE(CorpusDir().empty()) << "data/msccl is missing";
    }

    std::string Path() const
    {
        return CorpusDir() + "/" + GetParam().m_file;
    }
};

std::string
Summarise(const ValidationReport& report, size_t max = 12)
{
    std::string out;
    for (size_t i = 0; i < report.m_problems.size() && i < max; ++i)
    {
        out += "\n    " + report.m_problems[i].ToString();
    }
    if (report.m_problems.size() > max)
    {
        out += "\n    ... " + std::to_string(report.m_problems.size() - max) + " more";
    }
    return out;
}

TEST_P(CorpusTest, VerdictMatchesManifest)
{
    const CorpusEntry& e = GetParam();
    MscclDocument doc;
    ASSERT_NO_THROW(doc = LoadScheduleFile(Path())) << e.m_file;
    ASSERT_FALSE(doc.m_schedules.empty());
    bool valid = true;
    std::string details;
    for (const auto& s : doc.m_schedules)
    {
        EXPECT_EQ(s.m_ranks, e.m_ngpus) << e.m_file;
        EXPECT_EQ(ParseCollectiveKind(e.m_coll), s.m_collective) << e.m_file;
        EXPECT_EQ(s.m_inPlace, e.m_mode == "inplace") << e.m_file;
        const ValidationReport report = ValidateSchedule(s);
        valid = valid && report.m_valid;
        details += Summarise(report);
    }
    EXPECT_EQ(valid ? "valid" : "invalid", e.m_expected)
        << e.m_file << " (" << e.m_source << ")" << details;
}

TEST_P(CorpusTest, XmlRoundTripKeepsSchedule)
{
    const MscclDocument doc = LoadScheduleFile(Path());
    for (const auto& s : doc.m_schedules)
    {
        const std::string xml = WriteMscclXml(s);
        const MscclDocument again = ParseMscclXml(xml, "exported.xml");
        ASSERT_EQ(again.m_schedules.size(), 1u);
        EXPECT_TRUE(again.m_schedules[0] == s) << GetParam().m_file;
        EXPECT_TRUE(again.m_warnings.empty());
        EXPECT_EQ(WriteMscclXml(again.m_schedules[0]), xml);
    }
}

TEST_P(CorpusTest, JsonRoundTripKeepsSchedule)
{
    const MscclDocument doc = LoadScheduleFile(Path());
    for (const auto& s : doc.m_schedules)
    {
        const Schedule again = ParseScheduleJson(WriteScheduleJson(s), "exported.json");
        EXPECT_TRUE(again == s) << GetParam().m_file;
    }
}

std::string
ParamName(const ::testing::TestParamInfo<CorpusEntry>& info)
{
    std::string name;
    for (char c : info.param.m_file)
    {
        name.push_back(std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
    }
    return name;
}

INSTANTIATE_TEST_SUITE_P(Msccl, CorpusTest, ::testing::ValuesIn(LoadManifest()), ParamName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(CorpusTest);

std::vector<std::string>
ListXml(const std::string& dir)
{
    std::vector<std::string> out;
    std::vector<std::string> sources;
    if (DIR* top = opendir(dir.c_str()))
    {
        while (dirent* ent = readdir(top))
        {
            if (ent->d_name[0] != '.')
            {
                sources.push_back(ent->d_name);
            }
        }
        closedir(top);
    }
    for (const std::string& sub : sources)
    {
        DIR* d = opendir((dir + "/" + sub).c_str());
        if (!d)
        {
            continue;
        }
        while (dirent* ent = readdir(d))
        {
            const std::string name = ent->d_name;
            if (name.size() > 4 && name.substr(name.size() - 4) == ".xml")
            {
                out.push_back(sub + "/" + name);
            }
        }
        closedir(d);
    }
    return out;
}

TEST(Corpus, ManifestCoversEveryFile)
{
    const std::string dir = CorpusDir();
    ASSERT_FALSE(dir.empty()) << "data/msccl is missing";
    std::set<std::string> listed;
    for (const auto& e : LoadManifest())
    {
        listed.insert(e.m_file);
    }
    EXPECT_EQ(listed.size(), 50u);
    const std::vector<std::string> files = ListXml(dir);
    for (const auto& f : files)
    {
        EXPECT_TRUE(listed.count(f)) << f << " is not in msccl-corpus.tsv";
    }
    EXPECT_EQ(files.size(), listed.size()) << "msccl-corpus.tsv lists files data/msccl lacks";
}

TEST(Corpus, LargestFileValidatesInSeconds)
{
    const std::string dir = CorpusDir();
    ASSERT_FALSE(dir.empty()) << "data/msccl is missing";
    std::string largest;
    off_t size = 0;
    for (const auto& f : ListXml(dir))
    {
        struct stat st;
        if (stat((dir + "/" + f).c_str(), &st) == 0 && st.st_size > size)
        {
            size = st.st_size;
            largest = f;
        }
    }
    ASSERT_FALSE(largest.empty());
    const auto start = std::chrono::steady_clock::now();
    const Schedule s = ReadMscclXml(dir + "/" + largest);
    const ValidationReport report = ValidateSchedule(s);
    const double seconds
        = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cout << "[ timing ] " << largest << " (" << size << " bytes, " << s.StepCount()
              << " steps): parsed and validated in " << seconds << " s\n";
    EXPECT_LT(seconds, 10.0);
    EXPECT_GT(report.m_stepsExecuted, 0u);
}

} // namespace
} // namespace fabricsim
