// The one output writer: files appear whole or not at all, and a run's files appear together.
#include "input-error.h"
#include "output-writer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using fabricsim::InputError;
using fabricsim::OutputDir;
using fabricsim::WriteFileAtomic;

namespace
{

/// A fresh directory, removed with everything in it at the end of the test.
struct TempDir
{
    TempDir()
    {
        const char* base = std::getenv("TMPDIR");
        std::string tmpl = std::string(base ? base : "/tmp") + "/output-writer-XXXXXX";
        path = mkdtemp(tmpl.data()) ? tmpl : "";
    }

    ~TempDir()
    {
        std::error_code ec;
        fs::remove_all(path, ec);
    }

    std::string path;
};

std::string
Slurp(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

/// Names in \p dir, sorted, so that a stray temporary or staging folder shows.
std::vector<std::string>
Names(const std::string& dir)
{
    std::vector<std::string> out;
    for (auto& e : fs::directory_iterator(dir))
    {
        out.push_back(e.path().filename().string());
    }
    std::sort(out.begin(), out.end());
    return out;
}

} // namespace

TEST(OutputWriter, AtomicFileReplacesWholeAndLeavesNoTemporary)
{
    TempDir d;
    const std::string f = d.path + "/a.json";
    WriteFileAtomic(f, "first");
    WriteFileAtomic(f, std::string("sec\0nd", 6));
    EXPECT_EQ(Slurp(f), std::string("sec\0nd", 6));
    EXPECT_EQ(Names(d.path), std::vector<std::string>{"a.json"});
    try
    {
        WriteFileAtomic(d.path + "/no/such/dir/x", "x");
        ADD_FAILURE() << "no InputError";
    }
    catch (const InputError& e)
    {
        EXPECT_EQ(e.File(), d.path + "/no/such/dir/x");
        EXPECT_EQ(e.Expected(), "a writable output file");
    }
    EXPECT_EQ(Names(d.path), std::vector<std::string>{"a.json"});
}

TEST(OutputWriter, RunFilesAppearTogetherAtCommit)
{
    TempDir d;
    const std::string out = d.path + "/run";
    {
        OutputDir dir(out);
        dir.Write("summary.json", "{}\n");
        dir.Stream("fct.csv") << "id,fct\n";
        dir.Stream("fct.csv") << "1,2\n"; // the same name is the same stream
        EXPECT_TRUE(Names(out).size() == 1 && Names(out)[0].rfind(".partial-", 0) == 0);
        dir.Commit();
    }
    EXPECT_EQ(Names(out),
              (std::vector<std::string>{".fabricsim-outputs", "fct.csv", "summary.json"}));
    EXPECT_EQ(Slurp(out + "/fct.csv"), "id,fct\n1,2\n");
}

TEST(OutputWriter, AFailedRunLeavesTheOldFilesAndNoStagingFolder)
{
    TempDir d;
    const std::string out = d.path + "/run";
    {
        OutputDir dir(out);
        dir.Write("summary.json", "old");
        dir.Commit();
    }
    {
        OutputDir dir(out);
        dir.Write("summary.json", "new");
        // No Commit: the run failed.
    }
    EXPECT_EQ(Names(out), (std::vector<std::string>{".fabricsim-outputs", "summary.json"}));
    EXPECT_EQ(Slurp(out + "/summary.json"), "old");
}

TEST(OutputWriter, AStreamThatFailedStopsTheCommitBeforeAnythingMoves)
{
    TempDir d;
    const std::string out = d.path + "/run";
    OutputDir dir(out);
    dir.Write("summary.json", "{}");
    dir.Stream("missing-folder/queue.csv") << "t,q\n"; // cannot be opened: the stream fails
    try
    {
        dir.Commit();
        ADD_FAILURE() << "no InputError";
    }
    catch (const InputError& e)
    {
        EXPECT_EQ(e.File(), out + "/missing-folder/queue.csv");
    }
    EXPECT_FALSE(fs::exists(out + "/summary.json"));
}

TEST(OutputWriter, AnOutputPathThatIsAFileIsNamed)
{
    TempDir d;
    WriteFileAtomic(d.path + "/f", "x");
    try
    {
        OutputDir dir(d.path + "/f", "--out");
        ADD_FAILURE() << "no InputError";
    }
    catch (const InputError& e)
    {
        EXPECT_EQ(e.Field(), "--out");
    }
}

TEST(OutputWriter, ARunIntoAnOlderRunsDirectoryReplacesItsFilesWhole)
{
    TempDir d;
    const std::string out = d.path + "/run";
    {
        OutputDir dir(out);
        dir.Write("summary.json", "1");
        dir.Write("queue.csv", "t,q\n");
        dir.Commit();
    }
    WriteFileAtomic(out + "/notes.txt", "the user's own file");
    {
        OutputDir dir(out);
        dir.Write("summary.json", "2");
        dir.Commit();
    }
    // queue.csv was the older run's; notes.txt was never a run's and stays.
    EXPECT_EQ(Names(out),
              (std::vector<std::string>{".fabricsim-outputs", "notes.txt", "summary.json"}));
    EXPECT_EQ(Slurp(out + "/.fabricsim-outputs"), "summary.json\n");
}

TEST(OutputWriter, AFailedRunRemovesTheDirectoryItCreated)
{
    TempDir d;
    {
        OutputDir dir(d.path + "/new/run");
        dir.Write("summary.json", "{}");
    }
    EXPECT_FALSE(fs::exists(d.path + "/new/run"));
    fs::create_directories(d.path + "/old");
    {
        OutputDir dir(d.path + "/old");
    }
    EXPECT_TRUE(fs::exists(d.path + "/old")); // it was there before: it stays
}
