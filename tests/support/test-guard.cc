#include "test-guard.h"

#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#if defined(__SANITIZE_ADDRESS__)
#define FABRICSIM_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FABRICSIM_TEST_ASAN 1
#endif
#endif

#ifdef FABRICSIM_TEST_ASAN
// ASan reads these before main; ASAN_OPTIONS in the environment still overrides them.
extern "C" const char*
__asan_default_options()
{
    return "hard_rss_limit_mb=4000:malloc_limit_mb=4000:allocator_may_return_null=0";
}
#endif

namespace fabricsim
{
namespace test
{

uint64_t
TestMemoryCapMb()
{
    const char* env = std::getenv("FABRICSIM_TEST_MEMORY_MB");
    if (env && *env)
    {
        char* end = nullptr;
        unsigned long long v = std::strtoull(env, &end, 10);
        if (*end == '\0')
        {
            return v;
        }
        std::fprintf(stderr, "FABRICSIM_TEST_MEMORY_MB=%s is not a number; using 4000\n", env);
    }
    return 4000;
}

bool
UnderAsan()
{
#ifdef FABRICSIM_TEST_ASAN
    return true;
#else
    return false;
#endif
}

std::string
CapPrefix()
{
    return UnderAsan() ? "" : "prlimit --as=4194304000 -- ";
}

void
CapTestResources()
{
#ifndef FABRICSIM_TEST_ASAN
    const uint64_t mb = TestMemoryCapMb();
    if (mb == 0)
    {
        return;
    }
    struct rlimit lim;
    if (getrlimit(RLIMIT_AS, &lim) != 0)
    {
        return;
    }
    const rlim_t want = rlim_t(mb) << 20;
    // Only ever lower: a tighter cap from prlimit or the shell stays.
    if (lim.rlim_cur == RLIM_INFINITY || lim.rlim_cur > want)
    {
        lim.rlim_cur = want;
        setrlimit(RLIMIT_AS, &lim);
    }
#endif
}

} // namespace test
} // namespace fabricsim
