#include "csv-table.h"

#include "compressed-file.h"
#include "input-error.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace fabricsim
{

namespace
{

std::vector<std::string>
Split(const std::string& line)
{
    std::vector<std::string> out(1);
    for (char c : line)
    {
        if (c == ',')
        {
            out.emplace_back();
        }
        else
        {
            out.back().push_back(c);
        }
    }
    return out;
}

std::string
Quoted(const std::string& s)
{
    return "\"" + s.substr(0, 40) + (s.size() > 40 ? "..." : "") + "\"";
}

} // namespace

CsvTable
CsvTable::Read(const std::string& path,
               const std::string& what,
               const std::vector<std::string>& required,
               const FileLimits& limits)
{
    // A gzip-compressed table (data/ ships its large tables so) is read whole, within the same
    // bound on its decompressed size.
    if (IsGzip(ReadFileHead(path, what, 2)))
    {
        return Parse(ReadMaybeGzipFile(path, what, limits), path, required);
    }
    CsvTable t;
    t.m_file = path;
    LineReader in(path, what, limits);
    std::string line;
    while (in.Next(line))
    {
        t.Add(line, in.LineNumber());
    }
    t.Finish(required);
    return t;
}

CsvTable
CsvTable::Parse(std::string_view text,
                const std::string& file,
                const std::vector<std::string>& required)
{
    CsvTable t;
    t.m_file = file;
    uint64_t lineNo = 0;
    size_t pos = 0;
    while (pos < text.size())
    {
        size_t end = text.find('\n', pos);
        if (end == std::string_view::npos)
        {
            end = text.size();
        }
        std::string line(text.substr(pos, end - pos));
        if (!line.empty() && line.back() == '\r')
        {
            line.pop_back();
        }
        t.Add(line, ++lineNo);
        pos = end + 1;
    }
    t.Finish(required);
    return t;
}

void
CsvTable::Add(const std::string& line, uint64_t lineNo)
{
    if (line.empty())
    {
        return;
    }
    std::vector<std::string> fields = Split(line);
    if (!m_haveHeader)
    {
        m_columns = std::move(fields);
        m_haveHeader = true;
        return;
    }
    if (fields.size() != m_columns.size())
    {
        throw InputError(m_file,
                         "line " + std::to_string(lineNo),
                         std::to_string(m_columns.size()) + " fields, as the header",
                         std::to_string(fields.size()));
    }
    m_rows.push_back(std::move(fields));
    m_lines.push_back(lineNo);
}

void
CsvTable::Finish(const std::vector<std::string>& required) const
{
    if (!m_haveHeader)
    {
        throw InputError(m_file, "line 1", "a header naming the columns", "an empty file");
    }
    Require(required);
}

void
CsvTable::Require(const std::vector<std::string>& columns) const
{
    for (const std::string& r : columns)
    {
        if (!Has(r))
        {
            std::string cols;
            for (const std::string& c : m_columns)
            {
                cols += (cols.empty() ? "" : ",") + c;
            }
            throw InputError(m_file, "line 1", "a column named " + r, Quoted(cols));
        }
    }
}

bool
CsvTable::Has(const std::string& column) const
{
    for (const std::string& c : m_columns)
    {
        if (c == column)
        {
            return true;
        }
    }
    return false;
}

size_t
CsvTable::Column(const std::string& column) const
{
    for (size_t i = 0; i < m_columns.size(); ++i)
    {
        if (m_columns[i] == column)
        {
            return i;
        }
    }
    throw InputError(m_file, "line 1", "a column named " + column, "none");
}

std::string
CsvTable::Where(size_t row) const
{
    return "line " + std::to_string(m_lines.at(row));
}

const std::string&
CsvTable::Text(size_t row, size_t col) const
{
    return m_rows.at(row).at(col);
}

uint64_t
CsvTable::Count(size_t row, size_t col, uint64_t lo, uint64_t hi) const
{
    const std::string& s = Text(row, col);
    uint64_t v = 0;
    bool ok = !s.empty() && s.size() <= 20;
    for (char c : s)
    {
        ok = ok && c >= '0' && c <= '9';
    }
    if (ok)
    {
        errno = 0;
        v = std::strtoull(s.c_str(), nullptr, 10);
        ok = errno == 0;
    }
    if (!ok || v < lo || v > hi)
    {
        Fail(row,
             col,
             "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]",
             Quoted(s));
    }
    return v;
}

double
CsvTable::Positive(size_t row, size_t col) const
{
    const std::string& s = Text(row, col);
    char* end = nullptr;
    errno = 0;
    const double v = s.empty() ? 0 : std::strtod(s.c_str(), &end);
    if (s.empty() || *end != '\0' || errno != 0 || !std::isfinite(v) || v <= 0)
    {
        Fail(row, col, "a positive number", Quoted(s));
    }
    return v;
}

void
CsvTable::Fail(size_t row, size_t col, const std::string& expected, const std::string& found) const
{
    throw InputError(m_file, Where(row) + " " + m_columns.at(col), expected, found);
}

} // namespace fabricsim
