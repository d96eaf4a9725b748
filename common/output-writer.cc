#include "output-writer.h"

#include "input-error.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

namespace fs = std::filesystem;

namespace fabricsim
{

namespace
{

/// Writes \p text to a new file \p path; the reason on failure, "" on success.
std::string
WriteAll(const std::string& path, const std::string& text)
{
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
    {
        return std::strerror(errno);
    }
    size_t done = 0;
    while (done < text.size())
    {
        ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR)
        {
            continue;
        }
        if (n <= 0)
        {
            std::string reason = n < 0 ? std::strerror(errno) : "a short write";
            ::close(fd);
            return reason;
        }
        done += size_t(n);
    }
    // close() is where some file systems report that the data could not be stored.
    if (::close(fd) != 0)
    {
        return std::strerror(errno);
    }
    return "";
}

} // namespace

void
WriteFileAtomic(const std::string& path, const std::string& text)
{
    const std::string tmp = path + ".tmp-" + std::to_string(::getpid());
    std::string reason = WriteAll(tmp, text);
    if (reason.empty() && std::rename(tmp.c_str(), path.c_str()) != 0)
    {
        reason = std::strerror(errno);
    }
    if (!reason.empty())
    {
        std::remove(tmp.c_str());
        throw InputError(path, "", "a writable output file", reason);
    }
}

OutputDir::OutputDir(const std::string& dir, const std::string& field)
    : m_dir(dir)
    , m_field(field)
{
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec || !fs::is_directory(dir))
    {
        throw InputError(
            dir, field, "a directory that can be created", ec ? ec.message() : "not a directory");
    }
    m_stage = dir + "/.partial-" + std::to_string(::getpid());
    fs::remove_all(m_stage, ec);
    fs::create_directories(m_stage, ec);
    if (ec)
    {
        throw InputError(dir, field, "a writable directory", ec.message());
    }
}

OutputDir::~OutputDir()
{
    if (!m_committed)
    {
        m_streams.clear();
        std::error_code ec;
        fs::remove_all(m_stage, ec);
    }
}

std::string
OutputDir::Path(const std::string& name) const
{
    return m_stage + "/" + name;
}

void
OutputDir::Write(const std::string& name, const std::string& text)
{
    std::string reason = WriteAll(Path(name), text);
    if (!reason.empty())
    {
        throw InputError(m_dir + "/" + name, "", "a writable output file", reason);
    }
}

std::ostream&
OutputDir::Stream(const std::string& name)
{
    auto& s = m_streams[name];
    if (!s)
    {
        s = std::make_unique<std::ofstream>(Path(name), std::ios::binary | std::ios::trunc);
    }
    return *s;
}

void
OutputDir::Commit()
{
    for (auto& [name, s] : m_streams)
    {
        s->flush();
        s->close();
        if (s->fail())
        {
            throw InputError(m_dir + "/" + name, "", "a writable output file", "a failed write");
        }
    }
    m_streams.clear();
    std::error_code ec;
    std::vector<fs::path> staged; // listed first: the loop below empties the folder it lists
    for (auto& e : fs::directory_iterator(m_stage, ec))
    {
        staged.push_back(e.path());
    }
    if (ec)
    {
        throw InputError(m_dir, m_field, "a writable directory", ec.message());
    }
    for (const fs::path& p : staged)
    {
        fs::path target = fs::path(m_dir) / p.filename();
        fs::remove_all(target, ec);
        fs::rename(p, target, ec);
        if (ec)
        {
            throw InputError(target.string(), "", "a writable output file", ec.message());
        }
    }
    fs::remove_all(m_stage, ec);
    m_committed = true;
}

} // namespace fabricsim
