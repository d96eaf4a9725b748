#include "seeded-stream.h"

#include <cmath>

namespace fabricsim
{

SeededStream::SeededStream(uint64_t seed, uint64_t stream)
{
    // Mix seed and stream so that neighbouring seeds do not give correlated streams.
    std::seed_seq seq{
        uint32_t(seed), uint32_t(seed >> 32), uint32_t(stream), uint32_t(stream >> 32)};
    m_gen.seed(seq);
}

double
SeededStream::Uniform()
{
    return double(m_gen() >> 11) * (1.0 / 9007199254740992.0);
}

double
SeededStream::Exponential(double rate)
{
    return -std::log1p(-Uniform()) / rate;
}

double
SeededStream::Normal()
{
    double u1 = 1.0 - Uniform(); // (0, 1]: log is finite
    double u2 = Uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

} // namespace fabricsim
