// CsvTable: a header and records read within bounds; every bad field is named by file, line
// and column, with what was expected and what was found.
#include "csv-table.h"
#include "error-of.h"

#include <gtest/gtest.h>

#include <fstream>
#include <vector>

namespace fabricsim
{
namespace
{

using test::ErrorOf;

std::string
Write(const std::string& name, const std::string& text)
{
    const std::string path = ::testing::TempDir() + "/" + name;
    std::ofstream(path) << text;
    return path;
}

TEST(CsvTable, RecordsAndTypedFields)
{
    const std::string p = Write("csv-good.csv", "name,m,latency\r\ngemm,4096,0.5\n\ngemm,1,2\n");
    const CsvTable t = CsvTable::Read(p, "table", {"m", "latency"});
    ASSERT_EQ(t.Rows(), 2u);
    EXPECT_EQ(t.Columns(), (std::vector<std::string>{"name", "m", "latency"}));
    EXPECT_EQ(t.Text(0, t.Column("name")), "gemm");
    EXPECT_EQ(t.Count(0, t.Column("m")), 4096u);
    EXPECT_DOUBLE_EQ(t.Positive(0, t.Column("latency")), 0.5);
    EXPECT_EQ(t.Where(1), "line 4"); // the blank line is skipped, not renumbered
    EXPECT_TRUE(t.Has("m"));
    EXPECT_FALSE(t.Has("n"));
}

std::string
WriteBytes(const std::string& name, const std::vector<unsigned char>& bytes)
{
    const std::string path = ::testing::TempDir() + "/" + name;
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
    return path;
}

// gzip -n of "name,m,latency\r\ngemm,4096,0.5\n\ngemm,1,2" (what data/ does to large tables).
const std::vector<unsigned char> kGzipTable
    = {0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0xcb, 0x4b, 0xcc, 0x4d,
       0xd5, 0xc9, 0xd5, 0xc9, 0x49, 0x2c, 0x49, 0xcd, 0x4b, 0xae, 0xe4, 0xe5, 0x4a, 0x4f,
       0xcd, 0xcd, 0xd5, 0x31, 0x31, 0xb0, 0x34, 0xd3, 0x31, 0xd0, 0x33, 0xe5, 0x82, 0x70,
       0x0d, 0x75, 0x8c, 0x00, 0xb0, 0x5d, 0xc5, 0xd0, 0x27, 0x00, 0x00, 0x00};

TEST(CsvTable, GzipCompressedTableReadsAsThePlainOne)
{
    const CsvTable plain = CsvTable::Read(
        Write("csv-plain.csv", "name,m,latency\r\ngemm,4096,0.5\n\ngemm,1,2"), "table");
    const std::string gz = WriteBytes("csv-gz.csv.gz", kGzipTable);
    const CsvTable t = CsvTable::Read(gz, "table", {"m", "latency"});
    EXPECT_EQ(t.File(), gz);
    EXPECT_EQ(t.Columns(), plain.Columns());
    ASSERT_EQ(t.Rows(), 2u);
    for (size_t r = 0; r < t.Rows(); ++r)
    {
        EXPECT_EQ(t.Where(r), plain.Where(r));
        for (size_t c = 0; c < t.Columns().size(); ++c)
        {
            EXPECT_EQ(t.Text(r, c), plain.Text(r, c));
        }
    }
    // Cut short, the stream is refused naming the file; the bound holds on the text inside.
    std::vector<unsigned char> cut(kGzipTable.begin(), kGzipTable.end() - 10);
    const InputError e = ErrorOf([&] { CsvTable::Read(WriteBytes("csv-cut.csv.gz", cut), "t"); });
    EXPECT_NE(e.File().find("csv-cut.csv.gz"), std::string::npos);
    EXPECT_EQ(e.Found(), "truncated data");
    // 1,000 records "gemm,1,2": 77 bytes compressed, 9,015 once decompressed.
    const std::vector<unsigned char> big
        = {0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0xed, 0xc6, 0xb1,
           0x0d, 0xc0, 0x20, 0x0c, 0x00, 0xb0, 0xbd, 0xb7, 0x64, 0x29, 0x1f, 0xa1, 0x2a,
           0x62, 0x21, 0x4c, 0x2c, 0xfd, 0x9e, 0x3f, 0x90, 0x3d, 0x79, 0xf5, 0xca, 0xa8,
           0x98, 0x7d, 0xe7, 0xfa, 0xfe, 0x67, 0x64, 0x55, 0xbc, 0xd1, 0x44, 0x44, 0x44,
           0x44, 0x44, 0x44, 0x44, 0x44, 0x44, 0x44, 0x44, 0x44, 0x44, 0x44, 0x44, 0x44,
           0x44, 0x6e, 0xce, 0x01, 0x03, 0x59, 0xc0, 0x1b, 0x37, 0x23, 0x00, 0x00};
    const std::string bigPath = WriteBytes("csv-big.csv.gz", big);
    EXPECT_EQ(CsvTable::Read(bigPath, "t").Rows(), 1000u);
    FileLimits small = kDataFileLimits;
    small.maxBytes = 9000; // the file passes, its text does not
    const InputError b = ErrorOf([&] { CsvTable::Read(bigPath, "t", {}, small); });
    EXPECT_EQ(b.Expected(), "at most 9000 bytes once decompressed");
    // A zero byte is refused inside a compressed table as in a plain one.
    const std::vector<unsigned char> zero
        = {0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0x4b, 0xd4, 0x49, 0xe2, 0x32,
           0xd4, 0x61, 0x30, 0xe2, 0x02, 0x00, 0x25, 0xb4, 0x7a, 0xc5, 0x09, 0x00, 0x00, 0x00};
    EXPECT_EQ(ErrorOf([&] { CsvTable::Read(WriteBytes("csv-zero.csv.gz", zero), "t"); }).Found(),
              "a zero byte");
}

TEST(CsvTable, TextParsesAsTheFileReads)
{
    const std::string text = "name,m,latency\r\ngemm,4096,0.5\n\ngemm,1,2";
    const CsvTable f = CsvTable::Read(Write("csv-same.csv", text), "table");
    const CsvTable t = CsvTable::Parse(text, "inline.csv", {"m"});
    EXPECT_EQ(t.File(), "inline.csv");
    EXPECT_EQ(t.Columns(), f.Columns());
    ASSERT_EQ(t.Rows(), f.Rows());
    for (size_t r = 0; r < t.Rows(); ++r)
    {
        EXPECT_EQ(t.Where(r), f.Where(r));
        for (size_t c = 0; c < t.Columns().size(); ++c)
        {
            EXPECT_EQ(t.Text(r, c), f.Text(r, c));
        }
    }
    EXPECT_EQ(ErrorOf([] { CsvTable::Parse("a,b\n1,2\n3\n", "x.csv"); }).Field(), "line 3");
    EXPECT_EQ(ErrorOf([] { CsvTable::Parse("\n\n", "x.csv"); }).Field(), "line 1");
    const InputError e = ErrorOf([&] { t.Require({"name", "n"}); });
    EXPECT_EQ(e.Field(), "line 1");
    EXPECT_EQ(e.Expected(), "a column named n");
}

TEST(CsvTable, BadFieldsNameLineAndColumn)
{
    const std::string p = Write("csv-bad.csv", "m,latency\n12x,-1\n5,nan\n");
    const CsvTable t = CsvTable::Read(p, "table");
    InputError e = ErrorOf([&] { t.Count(0, 0, 1, 100); });
    EXPECT_EQ(e.File(), p);
    EXPECT_EQ(e.Field(), "line 2 m");
    EXPECT_EQ(e.Found(), "\"12x\"");
    e = ErrorOf([&] { t.Positive(0, 1); });
    EXPECT_EQ(e.Field(), "line 2 latency");
    e = ErrorOf([&] { t.Positive(1, 1); });
    EXPECT_EQ(e.Field(), "line 3 latency");
    e = ErrorOf([&] { t.Count(1, 0, 6, 9); });
    EXPECT_EQ(e.Expected(), "an integer in [6, 9]");
    EXPECT_EQ(t.Count(1, 0, 0, UINT64_MAX), 5u);
}

TEST(CsvTable, ShapeErrors)
{
    InputError e = ErrorOf([] { CsvTable::Read(Write("csv-empty.csv", ""), "table"); });
    EXPECT_EQ(e.Field(), "line 1");
    e = ErrorOf([] { CsvTable::Read(Write("csv-short.csv", "a,b\n1,2\n3\n"), "table"); });
    EXPECT_EQ(e.Field(), "line 3");
    EXPECT_EQ(e.Found(), "1");
    e = ErrorOf([] { CsvTable::Read(Write("csv-cols.csv", "a,b\n1,2\n"), "table", {"c"}); });
    EXPECT_EQ(e.Field(), "line 1");
    EXPECT_EQ(e.Expected(), "a column named c");
    e = ErrorOf([] { CsvTable::Read(::testing::TempDir(), "table"); });
    EXPECT_NE(e.Expected().find("table"), std::string::npos);
}

} // namespace
} // namespace fabricsim
