/*
 * Caps every test process so that a test written before its fix fails instead of taking the
 * machine: an address-space limit (inherited by any process a test starts), or under ASan, which
 * reserves terabytes of address space up front, ASan's own RSS and malloc limits.
 */
#ifndef FABRICSIM_TESTS_TEST_GUARD_H
#define FABRICSIM_TESTS_TEST_GUARD_H

#include <cstdint>
#include <string>

namespace fabricsim
{
namespace test
{

/// The cap in MiB: FABRICSIM_TEST_MEMORY_MB when set (0 turns it off), else 4000.
uint64_t TestMemoryCapMb();

/// Applies TestMemoryCapMb() to this process as RLIMIT_AS (not under ASan). Call first in main.
void CapTestResources();

/// Whether this build runs under AddressSanitizer (then processes cannot take an address-space
/// cap: their shadow memory alone exceeds it).
bool UnderAsan();

/// "prlimit --as=... -- " to put before a command a test starts, or "" under ASan (whose
/// processes then run under the caps ASan's own options give).
std::string CapPrefix();

} // namespace test
} // namespace fabricsim

#endif
