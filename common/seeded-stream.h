/*
 * A seeded random stream whose samples are identical on every platform (std:: distributions
 * differ between standard libraries; mt19937_64 does not): request sampling, drawn routing.
 */
#ifndef FABRICSIM_COMMON_SEEDED_STREAM_H
#define FABRICSIM_COMMON_SEEDED_STREAM_H

#include <cstdint>
#include <random>

namespace fabricsim
{

/**
 * \brief A seeded random stream whose samples are identical on every platform: mt19937_64 bits
 * turned into doubles, exponentials and normals by explicit formulas.
 */
class SeededStream
{
  public:
    /// Stream \p stream of seed \p seed (streams of one seed are independent).
    SeededStream(uint64_t seed, uint64_t stream);

    /// Uniform in [0, 1) with 53 random bits.
    double Uniform();
    /// Exponential with rate \p rate (> 0): -ln(1 - U) / rate.
    double Exponential(double rate);
    /// Standard normal (Box-Muller, one value per call).
    double Normal();

  private:
    std::mt19937_64 m_gen; //!< the bit source
};

} // namespace fabricsim

#endif
