/*
 * A CSV table as measurement files give them: a header line naming the columns, then one record
 * per line, comma-separated, no quoting. Read line by line within the bounds of file-reader.h;
 * every error names the file, "line N" and the column, and what was expected and found.
 */
#ifndef FABRICSIM_COMMON_CSV_TABLE_H
#define FABRICSIM_COMMON_CSV_TABLE_H

#include "file-reader.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace fabricsim
{

/**
 * \brief The records of one CSV file with typed, checked reads of their fields.
 */
class CsvTable
{
  public:
    /**
     * \brief Reads \p path (\p what says what it should be, for errors), plain or gzip-compressed
     * (the magic bytes decide; \p limits.maxBytes bounds the decompressed text). Blank lines are
     * skipped; a record with another number of fields than the header is an InputError naming
     * its line. \p required columns must all be in the header (InputError naming "line 1").
     */
    static CsvTable Read(const std::string& path,
                         const std::string& what,
                         const std::vector<std::string>& required = {},
                         const FileLimits& limits = kDataFileLimits);

    /**
     * \brief Parses \p text as Read parses a file (\p file names it in errors); a trailing CR
     * on a line is dropped.
     */
    static CsvTable Parse(std::string_view text,
                          const std::string& file,
                          const std::vector<std::string>& required = {});

    /// InputError naming "line 1" unless the header names every column of \p columns.
    void Require(const std::vector<std::string>& columns) const;

    const std::string& File() const
    {
        return m_file;
    }

    /// The header's columns, in order.
    const std::vector<std::string>& Columns() const
    {
        return m_columns;
    }

    /// Whether the header names \p column.
    bool Has(const std::string& column) const;

    /// Index of \p column; InputError naming "line 1" when the header lacks it.
    size_t Column(const std::string& column) const;

    /// Number of records.
    size_t Rows() const
    {
        return m_rows.size();
    }

    /// "line N" of record \p row, as errors name it.
    std::string Where(size_t row) const;

    /// The text of record \p row, column \p col.
    const std::string& Text(size_t row, size_t col) const;

    /// An integer in [\p lo, \p hi] (decimal digits only).
    uint64_t Count(size_t row, size_t col, uint64_t lo = 0, uint64_t hi = UINT64_MAX) const;

    /// A finite number > 0.
    double Positive(size_t row, size_t col) const;

    /// InputError(file, "line N column", expected, found) for record \p row.
    [[noreturn]] void Fail(size_t row,
                           size_t col,
                           const std::string& expected,
                           const std::string& found) const;

  private:
    /// Takes file line \p lineNo: the header first, then records.
    void Add(const std::string& line, uint64_t lineNo);
    /// After the last line: a header must have come, with \p required.
    void Finish(const std::vector<std::string>& required) const;

    std::string m_file;
    bool m_haveHeader = false;
    std::vector<std::string> m_columns;
    std::vector<std::vector<std::string>> m_rows;
    std::vector<uint64_t> m_lines; ///< file line of each record
};

} // namespace fabricsim

#endif
