// The one bounded file reader: only regular files, within a size and a line-length bound, and
// errors that name the file (or the field that gave its path).
#include "error-of.h"
#include "file-reader.h"
#include "input-error.h"
#include "json-reader.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using fabricsim::FileLimits;
using fabricsim::InputError;
using fabricsim::LineReader;
using fabricsim::ReadFileBounded;
using fabricsim::test::ErrorOf;

namespace
{

/// A fresh directory under TMPDIR, removed with its files at the end of the test.
class TempDir
{
  public:
    TempDir()
    {
        const char* base = std::getenv("TMPDIR");
        std::string tmpl = std::string(base ? base : "/tmp") + "/file-reader-XXXXXX";
        m_path = mkdtemp(tmpl.data()) ? tmpl : "";
    }

    ~TempDir()
    {
        for (const auto& f : m_files)
        {
            std::remove(f.c_str());
        }
        ::rmdir(m_path.c_str());
    }

    /// Writes \p content to NAME in the directory; its path.
    std::string Write(const std::string& name, const std::string& content)
    {
        std::string p = Path(name);
        std::ofstream(p, std::ios::binary) << content;
        return p;
    }

    std::string Path(const std::string& name)
    {
        m_files.push_back(m_path + "/" + name);
        return m_files.back();
    }

    const std::string& Dir() const
    {
        return m_path;
    }

  private:
    std::string m_path;
    std::vector<std::string> m_files;
};

/// Every line of \p path through LineReader with \p limits.
std::vector<std::string>
Lines(const std::string& path, const FileLimits& limits = fabricsim::kDataFileLimits)
{
    LineReader r(path, "test file", limits);
    std::vector<std::string> out;
    std::string line;
    while (r.Next(line))
    {
        out.push_back(line);
        EXPECT_EQ(r.LineNumber(), out.size());
    }
    return out;
}

} // namespace

TEST(FileReader, ReadsARegularFileWhole)
{
    TempDir d;
    const std::string bytes("a\0b\nc\r\n", 7); // binary content comes back byte for byte
    EXPECT_EQ(
        ReadFileBounded(d.Write("f.bin", bytes), "test file", fabricsim::kBinaryDataFileLimits),
        bytes);
    // A text file holds no zero byte: refused where it is met, naming its offset.
    InputError zero = ErrorOf([&] { ReadFileBounded(d.Path("f.bin"), "test file"); });
    EXPECT_EQ(zero.Expected(), "a test file (text)");
    EXPECT_EQ(zero.Found(), "binary data (a zero byte at byte 1)");
    std::string late(200000, 'x');
    late[150000] = '\0';
    EXPECT_EQ(
        ErrorOf(
            [&]
            { ReadFileBounded(d.Write("late", late), "test file", fabricsim::kDataFileLimits); })
            .Found(),
        "binary data (a zero byte at byte 150000)");
    EXPECT_EQ(ReadFileBounded(d.Write("empty", ""), "test file"), "");
    EXPECT_EQ(fabricsim::ReadFileHead(d.Path("f.bin"), "test file", 3), std::string("a\0b", 3));
    EXPECT_EQ(fabricsim::ReadFileHead(d.Path("f.bin"), "test file", 100), bytes);
}

TEST(FileReader, WhatIsNotARegularFileIsNamed)
{
    TempDir d;
    InputError missing = ErrorOf([&] { ReadFileBounded(d.Dir() + "/none.json", "scenario file"); });
    EXPECT_EQ(missing.File(), d.Dir() + "/none.json");
    EXPECT_EQ(missing.Expected(), "a readable scenario file");
    EXPECT_EQ(missing.Found(), "No such file or directory");
    EXPECT_EQ(ErrorOf([&] { ReadFileBounded(d.Dir(), "scenario file"); }).Found(), "a directory");
    // /dev/zero never ends: refused before a byte is read, by both readers.
    EXPECT_EQ(ErrorOf([&] { ReadFileBounded("/dev/zero", "flow file"); }).Found(),
              "a character device, not a regular file");
    EXPECT_EQ(ErrorOf([&] { LineReader("/dev/zero", "flow file"); }).Found(),
              "a character device, not a regular file");
    // A FIFO with no writer would block open() forever.
    const std::string fifo = d.Path("fifo");
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    EXPECT_EQ(ErrorOf([&] { ReadFileBounded(fifo, "trace"); }).Found(),
              "a FIFO (named pipe), not a regular file");
    EXPECT_FALSE(fabricsim::IsReadableRegularFile(fifo));
    EXPECT_FALSE(fabricsim::IsReadableRegularFile(d.Dir()));
    EXPECT_TRUE(fabricsim::IsReadableRegularFile(d.Write("ok", "x")));
}

TEST(FileReader, AFileThatCannotBeOpenedIsReportedAgainstTheFieldThatNamedIt)
{
    InputError e = ErrorOf(
        [] {
            ReadFileBounded(
                "/nonexistent/t.txt", "HPCC topology file", {}, {"s.json", "topology.path"});
        });
    EXPECT_EQ(e.File(), "s.json");
    EXPECT_EQ(e.Field(), "topology.path");
    EXPECT_EQ(e.Found(), "/nonexistent/t.txt: No such file or directory");
}

TEST(FileReader, SizeBound)
{
    TempDir d;
    const std::string f = d.Write("f", std::string(1000, 'x'));
    EXPECT_EQ(ReadFileBounded(f, "test file", {1000, 1000}).size(), 1000u);
    InputError e = ErrorOf([&] { ReadFileBounded(f, "test file", {999, 999}); });
    EXPECT_EQ(e.File(), f);
    EXPECT_EQ(e.Expected(), "a test file of at most 999 bytes");
    EXPECT_EQ(e.Found(), "1000 bytes");
    EXPECT_EQ(ErrorOf([&] { LineReader(f, "test file", {999, 2000}); }).Found(), "1000 bytes");
    const std::string mib = d.Write("mib", std::string((1 << 20) + 1, 'x'));
    InputError big = ErrorOf([&] { ReadFileBounded(mib, "test file", {1ULL << 20, 1}); });
    EXPECT_EQ(big.Expected(), "a test file of at most 1 MiB");
}

TEST(FileReader, LinesLikeGetlineWithoutCarriageReturns)
{
    TempDir d;
    EXPECT_EQ(Lines(d.Write("a", "one\ntwo\r\n\nlast")),
              (std::vector<std::string>{"one", "two", "", "last"}));
    EXPECT_EQ(Lines(d.Write("b", "x\n")), (std::vector<std::string>{"x"}));
    EXPECT_TRUE(Lines(d.Write("c", "")).empty());
    // Many lines of many lengths across the reader's 64 KiB chunks come back as getline's.
    std::string text;
    for (int i = 0; i < 20000; ++i)
    {
        text += std::string(size_t(i * 7919 % 301), char('a' + i % 26)) + "\n";
    }
    const std::string big = d.Write("big", text);
    std::vector<std::string> expect;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);)
    {
        expect.push_back(l);
    }
    EXPECT_EQ(Lines(big), expect);
}

TEST(FileReader, LineLengthBoundNamesTheLine)
{
    TempDir d;
    const std::string f = d.Write("f", "ok\n" + std::string(10, 'x') + "\n" + std::string(11, 'y'));
    LineReader r(f, "test file", {1000, 10});
    std::string line;
    EXPECT_TRUE(r.Next(line));
    EXPECT_TRUE(r.Next(line)); // exactly at the bound
    EXPECT_EQ(line.size(), 10u);
    InputError e = ErrorOf([&] { r.Next(line); });
    EXPECT_EQ(e.Field(), "line 3");
    EXPECT_EQ(e.Expected(), "lines of at most 10 bytes");
    // One endless line is refused when the bound is reached, not after reading the whole file.
    const std::string endless = d.Write("endless", std::string(300000, 'z'));
    EXPECT_EQ(ErrorOf([&] { Lines(endless, {1ULL << 30, 1000}); }).Field(), "line 1");
}

TEST(FileReader, JsonLinesSkipBlankLinesAndNameTheBadOne)
{
    TempDir d;
    auto records = fabricsim::ReadJsonLines(d.Write("ok", "{\"a\": 1}\n\n  \n[2]\n"), "trace");
    ASSERT_EQ(records.size(), 2u);
    EXPECT_EQ(records[1][0], 2);
    InputError e
        = ErrorOf([&] { fabricsim::ReadJsonLines(d.Write("bad", "{}\n\n{\"a\": }\n"), "trace"); });
    EXPECT_EQ(e.Field(), "line 3");
}
