/*
 * The one way input files are read: whole or line by line, only from regular files, within a
 * bound on size and on line length. A directory, /dev/zero, a FIFO with no writer or a file of
 * one endless line is bad input that exits 2 naming the file, not a hang or a process that eats
 * the machine's memory.
 */
#ifndef FABRICSIM_COMMON_FILE_READER_H
#define FABRICSIM_COMMON_FILE_READER_H

#include <cstdint>
#include <string>

namespace fabricsim
{

/// Bounds on one input file.
struct FileLimits
{
    uint64_t maxBytes;     ///< the whole file
    uint64_t maxLineBytes; ///< one line (line readers only)
    /// Whole-file reads: a text file holds no zero byte, so one is refused where it is read
    /// (a gigabyte of zeros given as a measurement table stops at the first 64 KiB).
    bool binary = false;
};

/// Configuration: scenarios, topologies, model configs, schedules, overlays. A minified JSON
/// file is one line, so the line bound is the size bound.
constexpr FileLimits kConfigFileLimits{256ULL << 20, 256ULL << 20};
/// Data: traces, flow lists, request logs, measurement tables.
constexpr FileLimits kDataFileLimits{4ULL << 30, 16ULL << 20};
/// Binary data (Chakra protobuf streams, gzip files): any byte may occur.
constexpr FileLimits kBinaryDataFileLimits{4ULL << 30, 16ULL << 20, true};

/**
 * \brief Who named the file, so that a file that cannot be opened is reported against the field
 * that gave its path (the scenario's "topology.path", say) rather than against itself.
 */
struct FileReferrer
{
    std::string file;  ///< the file holding the field ("" for the command line)
    std::string field; ///< the field holding the path
};

/**
 * \brief The contents of \p path, a regular file of at most \p limits.maxBytes.
 * \param what what the file should be, for errors ("HPCC flow file"): "a readable HPCC flow
 *        file" is expected.
 * \throws InputError naming the file (or \p ref when given and the file cannot be opened) for a
 *         missing or unreadable file, one that is not a regular file, one too large, or (unless
 *         \p limits is binary) one holding a zero byte
 */
std::string ReadFileBounded(const std::string& path,
                            const std::string& what,
                            const FileLimits& limits = kConfigFileLimits,
                            const FileReferrer& ref = {});

/// At most the first \p n bytes of \p path (a regular file), to tell its format.
std::string ReadFileHead(const std::string& path, const std::string& what, size_t n);

/// Whether \p path names a regular file that can be opened for reading.
bool IsReadableRegularFile(const std::string& path);

/**
 * \brief Reads a regular file line by line within \p limits. Lines come without their end
 * ("\n" or "\r\n"); a last line without one is still a line.
 */
class LineReader
{
  public:
    /// Opens \p path; the same errors as ReadFileBounded.
    LineReader(const std::string& path,
               const std::string& what,
               const FileLimits& limits = kDataFileLimits,
               const FileReferrer& ref = {});
    ~LineReader();
    LineReader(const LineReader&) = delete;
    LineReader& operator=(const LineReader&) = delete;

    /// The next line into \p line; false at the end of the file.
    /// \throws InputError naming the line when it is longer than the bound, or the file when it
    ///         grows past its bound or a read fails
    bool Next(std::string& line);

    /// 1-based number of the line Next returned last.
    uint64_t LineNumber() const
    {
        return m_lineNo;
    }

    /// "line N" of the line Next returned last, as errors name it.
    std::string Where() const;

    const std::string& Path() const
    {
        return m_path;
    }

  private:
    /// Reads more into m_buf; false at end of file.
    bool Fill();

    std::string m_path;
    std::string m_what;
    FileLimits m_limits;
    int m_fd = -1;
    std::string m_buf;
    size_t m_pos = 0;
    uint64_t m_read = 0;
    uint64_t m_lineNo = 0;
    bool m_eof = false;
};

} // namespace fabricsim

#endif
