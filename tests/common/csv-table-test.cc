// CsvTable: a header and records read within bounds; every bad field is named by file, line
// and column, with what was expected and what was found.
#include "csv-table.h"
#include "error-of.h"

#include <gtest/gtest.h>

#include <fstream>

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
