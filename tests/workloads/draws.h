/*
 * Closed forms of drawing without replacement, shared by the EP exchange tests.
 */
#ifndef FABRICSIM_TESTS_WORKLOADS_DRAWS_H
#define FABRICSIM_TESTS_WORKLOADS_DRAWS_H

#include <cstdint>

namespace fabricsim
{

/// C(n - s, m) / C(n, m): m draws without replacement from n all miss s marked ones.
inline double
AllMiss(double n, double s, uint32_t m)
{
    double p = 1;
    for (uint32_t i = 0; i < m; ++i)
    {
        p *= (n - s - i) / (n - i);
    }
    return p;
}

} // namespace fabricsim

#endif
