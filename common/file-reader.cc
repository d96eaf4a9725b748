#include "file-reader.h"

#include "input-error.h"
#include "provenance.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace fabricsim
{

namespace
{

/// A bound as people write it: "256 MiB", "4 GiB", else bytes.
std::string
BoundText(uint64_t n)
{
    if (n >= (1ULL << 30) && n % (1ULL << 30) == 0)
    {
        return std::to_string(n >> 30) + " GiB";
    }
    if (n >= (1ULL << 20) && n % (1ULL << 20) == 0)
    {
        return std::to_string(n >> 20) + " MiB";
    }
    return std::to_string(n) + " bytes";
}

/// What \p mode is when it is not a regular file.
std::string
KindOf(mode_t mode)
{
    if (S_ISDIR(mode))
    {
        return "a directory";
    }
    if (S_ISCHR(mode))
    {
        return "a character device, not a regular file";
    }
    if (S_ISBLK(mode))
    {
        return "a block device, not a regular file";
    }
    if (S_ISFIFO(mode))
    {
        return "a FIFO (named pipe), not a regular file";
    }
    if (S_ISSOCK(mode))
    {
        return "a socket, not a regular file";
    }
    return "not a regular file";
}

[[noreturn]] void
FailOpen(const std::string& path,
         const std::string& what,
         const FileReferrer& ref,
         const std::string& reason)
{
    if (!ref.file.empty() || !ref.field.empty())
    {
        throw InputError(ref.file, ref.field, "a readable " + what, path + ": " + reason);
    }
    throw InputError(path, "", "a readable " + what, reason);
}

[[noreturn]] void
FailSize(const std::string& path, const std::string& what, uint64_t bound, uint64_t found)
{
    throw InputError(path,
                     "",
                     "a " + what + " of at most " + BoundText(bound),
                     std::to_string(found) + " bytes");
}

/// Opens \p path for reading if it is a regular file; its size in \p size.
int
OpenRegular(const std::string& path,
            const std::string& what,
            const FileReferrer& ref,
            uint64_t& size)
{
    // O_NONBLOCK: opening a FIFO with no writer would otherwise wait for one forever.
    int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
    {
        FailOpen(path, what, ref, std::strerror(errno));
    }
    struct stat st;
    if (::fstat(fd, &st) != 0)
    {
        const std::string reason = std::strerror(errno);
        ::close(fd);
        FailOpen(path, what, ref, reason);
    }
    if (!S_ISREG(st.st_mode))
    {
        ::close(fd);
        FailOpen(path, what, ref, KindOf(st.st_mode));
    }
    size = uint64_t(st.st_size);
    ProvenanceScope::RecordInput(path); // provenance.json lists what a command read
    return fd;
}

/// read(2) that retries on EINTR; throws on error.
size_t
ReadSome(int fd, char* buf, size_t n, const std::string& path, const std::string& what)
{
    while (true)
    {
        ssize_t got = ::read(fd, buf, n);
        if (got >= 0)
        {
            return size_t(got);
        }
        if (errno != EINTR)
        {
            throw InputError(path, "", "a readable " + what, std::strerror(errno));
        }
    }
}

constexpr size_t kChunk = 1 << 16;

} // namespace

std::string
ReadFileBounded(const std::string& path,
                const std::string& what,
                const FileLimits& limits,
                const FileReferrer& ref)
{
    uint64_t size = 0;
    int fd = OpenRegular(path, what, ref, size);
    std::string out;
    try
    {
        if (size > limits.maxBytes)
        {
            FailSize(path, what, limits.maxBytes, size);
        }
        char buf[kChunk];
        while (size_t got = ReadSome(fd, buf, sizeof buf, path, what))
        {
            // A file that grows while it is read is held to the same bound.
            if (out.size() + got > limits.maxBytes)
            {
                FailSize(path, what, limits.maxBytes, out.size() + got);
            }
            if (!limits.binary)
            {
                if (const void* zero = std::memchr(buf, 0, got))
                {
                    const size_t at = out.size() + size_t(static_cast<const char*>(zero) - buf);
                    throw InputError(path,
                                     "",
                                     "a " + what + " (text)",
                                     "binary data (a zero byte at byte " + std::to_string(at)
                                         + ")");
                }
            }
            if (out.empty())
            {
                // Only once the first chunk passed: junk is refused before its size is taken.
                out.reserve(size_t(size));
            }
            out.append(buf, got);
        }
    }
    catch (...)
    {
        ::close(fd);
        throw;
    }
    ::close(fd);
    return out;
}

std::string
ReadFileHead(const std::string& path, const std::string& what, size_t n)
{
    uint64_t size = 0;
    int fd = OpenRegular(path, what, {}, size);
    std::string out(n, '\0');
    size_t have = 0;
    try
    {
        while (have < n)
        {
            size_t got = ReadSome(fd, &out[have], n - have, path, what);
            if (got == 0)
            {
                break;
            }
            have += got;
        }
    }
    catch (...)
    {
        ::close(fd);
        throw;
    }
    ::close(fd);
    out.resize(have);
    return out;
}

bool
IsReadableRegularFile(const std::string& path)
{
    int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
    {
        return false;
    }
    struct stat st;
    bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    ::close(fd);
    return ok;
}

LineReader::LineReader(const std::string& path,
                       const std::string& what,
                       const FileLimits& limits,
                       const FileReferrer& ref)
    : m_path(path)
    , m_what(what)
    , m_limits(limits)
{
    uint64_t size = 0;
    m_fd = OpenRegular(path, what, ref, size);
    if (size > limits.maxBytes)
    {
        ::close(m_fd);
        m_fd = -1;
        FailSize(path, what, limits.maxBytes, size);
    }
}

LineReader::~LineReader()
{
    if (m_fd >= 0)
    {
        ::close(m_fd);
    }
}

bool
LineReader::Fill()
{
    if (m_eof)
    {
        return false;
    }
    if (m_pos > 0)
    {
        m_buf.erase(0, m_pos);
        m_pos = 0;
    }
    const size_t old = m_buf.size();
    m_buf.resize(old + kChunk);
    size_t got = ReadSome(m_fd, &m_buf[old], kChunk, m_path, m_what);
    m_buf.resize(old + got);
    m_read += got;
    if (m_read > m_limits.maxBytes)
    {
        FailSize(m_path, m_what, m_limits.maxBytes, m_read);
    }
    m_eof = got == 0;
    return got > 0;
}

bool
LineReader::Next(std::string& line)
{
    size_t scanned = m_pos;
    while (true)
    {
        size_t nl = m_buf.find('\n', scanned);
        if (nl != std::string::npos || (m_eof && m_pos < m_buf.size()))
        {
            size_t end = nl == std::string::npos ? m_buf.size() : nl;
            if (end - m_pos > m_limits.maxLineBytes)
            {
                break;
            }
            line.assign(m_buf, m_pos, end - m_pos);
            m_pos = nl == std::string::npos ? m_buf.size() : nl + 1;
            if (!line.empty() && line.back() == '\r')
            {
                line.pop_back();
            }
            ++m_lineNo;
            return true;
        }
        if (m_buf.size() - m_pos > m_limits.maxLineBytes)
        {
            break;
        }
        scanned = m_buf.size() - m_pos; // offset after compaction in Fill
        if (!Fill())
        {
            if (m_pos >= m_buf.size())
            {
                return false;
            }
            scanned = m_pos;
            continue;
        }
        scanned = m_pos + scanned;
    }
    throw InputError(m_path,
                     "line " + std::to_string(m_lineNo + 1),
                     "lines of at most " + BoundText(m_limits.maxLineBytes),
                     "a longer line");
}

std::string
LineReader::Where() const
{
    return "line " + std::to_string(m_lineNo);
}

} // namespace fabricsim
