#include "output-writer.h"

#include "input-error.h"

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>
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

/// What a run into DIR wrote, one name per line.
constexpr const char* kManifest = ".fabricsim-outputs";

/// Staging folders not yet committed, and the DIRs their runs created: what a signal removes.
/// Never destroyed, so that a signal during exit still finds them.
struct PendingOutputs
{
    std::mutex mutex;
    std::set<std::pair<std::string, std::string>> stages; ///< (stage, DIR if created, else "")
};

PendingOutputs&
Pending()
{
    static PendingOutputs* p = new PendingOutputs;
    return *p;
}

/// Removes \p stage, and \p createdDir when it is left empty.
void
RemoveStage(const std::string& stage, const std::string& createdDir)
{
    std::error_code ec;
    fs::remove_all(stage, ec);
    if (!createdDir.empty() && fs::is_empty(createdDir, ec))
    {
        fs::remove(createdDir, ec);
    }
}

/// The names the last run into \p dir listed.
std::set<std::string>
ReadManifest(const std::string& dir)
{
    std::set<std::string> names;
    std::ifstream in(dir + "/" + kManifest);
    for (std::string line; std::getline(in, line);)
    {
        // Only plain names this writer could have written: never a path out of DIR.
        if (!line.empty() && line[0] != '.' && line.find('/') == std::string::npos)
        {
            names.insert(line);
        }
    }
    return names;
}

} // namespace

void
RemovePartialOutputOnSignals()
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    // Blocked here and so in every thread started later; the waiter below takes them.
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
    std::thread(
        [set]()
        {
            int sig = 0;
            if (sigwait(&set, &sig) != 0)
            {
                return;
            }
            PendingOutputs& p = Pending();
            std::lock_guard<std::mutex> lock(p.mutex); // a commit under way completes first
            for (const auto& [stage, created] : p.stages)
            {
                RemoveStage(stage, created);
            }
            const char* name = sig == SIGINT ? "SIGINT" : "SIGTERM";
            std::fprintf(stderr, "fabricsim: interrupted by %s; partial output removed\n", name);
            std::_Exit(128 + sig);
        })
        .detach();
}

void
RemovePartialOutputNow() noexcept
{
    PendingOutputs& p = Pending();
    std::unique_lock<std::mutex> lock(p.mutex, std::try_to_lock);
    if (!lock.owns_lock())
    {
        return;
    }
    try
    {
        for (const auto& [stage, created] : p.stages)
        {
            RemoveStage(stage, created);
        }
    }
    catch (...)
    {
        // Out of memory while removing: what is left is named .partial-<pid>.
    }
}

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
    m_createdDir = !fs::exists(dir, ec);
    fs::create_directories(dir, ec);
    if (ec || !fs::is_directory(dir))
    {
        throw InputError(
            dir, field, "a directory that can be created", ec ? ec.message() : "not a directory");
    }
    m_stage = dir + "/.partial-" + std::to_string(::getpid());
    {
        PendingOutputs& p = Pending();
        std::lock_guard<std::mutex> lock(p.mutex);
        p.stages.insert({m_stage, m_createdDir ? m_dir : ""});
    }
    fs::remove_all(m_stage, ec);
    fs::create_directories(m_stage, ec);
    if (ec)
    {
        throw InputError(dir, field, "a writable directory", ec.message());
    }
}

OutputDir::~OutputDir()
{
    PendingOutputs& p = Pending();
    std::lock_guard<std::mutex> lock(p.mutex);
    p.stages.erase({m_stage, m_createdDir ? m_dir : ""});
    if (!m_committed)
    {
        m_streams.clear();
        RemoveStage(m_stage, m_createdDir ? m_dir : "");
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
    // A signal waits until the files are all in place (or the commit failed).
    std::lock_guard<std::mutex> lock(Pending().mutex);
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
    // The previous run's files that this run did not write would sit beside the new ones as if
    // they were its own.
    std::set<std::string> now; // sorted: the manifest is the same for the same run
    for (const fs::path& p : staged)
    {
        now.insert(p.filename().string());
    }
    std::string manifest;
    for (const std::string& n : now)
    {
        manifest += n + "\n";
    }
    for (const std::string& old : ReadManifest(m_dir))
    {
        if (!now.count(old))
        {
            fs::remove_all(fs::path(m_dir) / old, ec);
        }
    }
    WriteFileAtomic(m_dir + "/" + kManifest, manifest);
    fs::remove_all(m_stage, ec);
    m_committed = true;
}

} // namespace fabricsim
