/*
 * SplitMix64's finaliser: a fixed bijection of 64-bit words that spreads every input bit, for
 * deterministic hashing (path choice, block identities).
 */
#ifndef FABRICSIM_COMMON_MIX64_H
#define FABRICSIM_COMMON_MIX64_H

#include <cstdint>

namespace fabricsim
{

/// SplitMix64's finaliser of \p x.
inline uint64_t
Mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

} // namespace fabricsim

#endif
