// The cap every test binary applies to itself (tests/support/test-guard): a test that allocates
// without bound fails with bad_alloc instead of taking the machine.
#include "test-guard.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <new>

TEST(TestGuard, AddressSpaceIsCappedAndAnOversizedAllocationFails)
{
    if (fabricsim::test::UnderAsan())
    {
        GTEST_SKIP() << "under ASan the cap is ASan's hard_rss_limit_mb / malloc_limit_mb";
    }
    const uint64_t mb = fabricsim::test::TestMemoryCapMb();
    if (mb == 0)
    {
        GTEST_SKIP() << "FABRICSIM_TEST_MEMORY_MB=0 turns the cap off";
    }
    struct rlimit lim;
    ASSERT_EQ(getrlimit(RLIMIT_AS, &lim), 0);
    ASSERT_NE(lim.rlim_cur, RLIM_INFINITY);
    EXPECT_LE(lim.rlim_cur, rlim_t(mb) << 20);
    // Twice the cap cannot be had: the allocation throws rather than growing the process.
    const size_t bytes = size_t(lim.rlim_cur) * 2;
    // (::operator new called directly, its result kept, so that the call is not elided.)
    static void* volatile sink = nullptr;
    EXPECT_THROW(sink = ::operator new(bytes), std::bad_alloc);
    ::operator delete(sink);
    sink = nullptr;
}
