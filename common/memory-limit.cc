#include "memory-limit.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#if defined(__SANITIZE_ADDRESS__)
#define FABRICSIM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FABRICSIM_ASAN 1
#endif
#endif

namespace fabricsim
{

namespace
{

uint64_t g_limit = 0; ///< set by SetMemoryLimit; 0 = not set

} // namespace

uint64_t
PhysicalMemoryBytes()
{
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long size = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && size > 0 ? uint64_t(pages) * uint64_t(size) : 0;
}

uint64_t
DefaultMemoryLimitBytes()
{
    const uint64_t phys = PhysicalMemoryBytes();
    return phys ? phys / 5 * 4 : 0;
}

void
SetMemoryLimit(uint64_t bytes)
{
    g_limit = bytes;
#ifdef FABRICSIM_ASAN
    // ASan reserves terabytes of address space for its shadow up front: an address-space cap
    // would make every later mapping fail. The limit still bounds the estimates.
    return;
#endif
    struct rlimit lim;
    if (bytes == 0 || getrlimit(RLIMIT_AS, &lim) != 0)
    {
        return;
    }
    if (lim.rlim_cur == RLIM_INFINITY || lim.rlim_cur > rlim_t(bytes))
    {
        lim.rlim_cur = rlim_t(bytes);
        setrlimit(RLIMIT_AS, &lim);
    }
    else
    {
        g_limit = uint64_t(lim.rlim_cur); // a tighter cap from outside (prlimit, ulimit) holds
    }
}

uint64_t
MemoryLimitBytes()
{
    return g_limit ? g_limit : DefaultMemoryLimitBytes();
}

namespace
{

char g_oomMessage[512];
size_t g_oomMessageLength = 0;
void (*g_oomCleanup)() noexcept = nullptr;

/// The process's address space in bytes from /proc/self/statm (async-signal-safe; 0 if unknown).
uint64_t
AddressSpaceBytes()
{
    const int fd = ::open("/proc/self/statm", O_RDONLY);
    if (fd < 0)
    {
        return 0;
    }
    char buf[64];
    const ssize_t n = ::read(fd, buf, sizeof buf - 1);
    ::close(fd);
    uint64_t pages = 0;
    for (ssize_t i = 0; i < n && buf[i] >= '0' && buf[i] <= '9'; ++i)
    {
        pages = pages * 10 + uint64_t(buf[i] - '0');
    }
    return pages * uint64_t(::sysconf(_SC_PAGE_SIZE));
}

void
OnCrash(int sig)
{
    struct rlimit lim;
    const bool capped = ::getrlimit(RLIMIT_AS, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY;
    if (capped && double(AddressSpaceBytes()) >= 0.95 * double(lim.rlim_cur))
    {
        [[maybe_unused]] ssize_t w = ::write(2, g_oomMessage, g_oomMessageLength);
        if (g_oomCleanup)
        {
            g_oomCleanup();
        }
        ::_exit(2);
    }
    ::signal(sig, SIG_DFL); // not memory: crash as before
    ::raise(sig);
}

} // namespace

void
ReportOutOfMemoryCrashes(const std::string& message, void (*cleanup)() noexcept)
{
#ifdef FABRICSIM_ASAN
    return;
#endif
    g_oomMessageLength = std::min(message.size(), sizeof g_oomMessage);
    std::memcpy(g_oomMessage, message.data(), g_oomMessageLength);
    g_oomCleanup = cleanup;
    // Its own stack: the crash may come from a stack that cannot take another frame.
    static char altStack[64 * 1024];
    stack_t ss{};
    ss.ss_sp = altStack;
    ss.ss_size = sizeof altStack;
    ::sigaltstack(&ss, nullptr);
    struct sigaction sa
    {
    };
    sa.sa_handler = OnCrash;
    sa.sa_flags = SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGSEGV, &sa, nullptr);
    ::sigaction(SIGBUS, &sa, nullptr);
}

std::string
DescribeBytes(double bytes)
{
    char buf[32];
    const char* unit = "B";
    double v = bytes;
    for (const char* u : {"kB", "MB", "GB", "TB", "PB", "EB"})
    {
        if (v < 1000)
        {
            break;
        }
        v /= 1000;
        unit = u;
    }
    std::snprintf(buf, sizeof buf, v < 10 && unit[0] != 'B' ? "%.2f %s" : "%.1f %s", v, unit);
    return buf;
}

} // namespace fabricsim
