#include "memory-limit.h"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>

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
