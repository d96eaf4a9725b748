/*
 * Checked conversions between bytes, bits per second and picoseconds, the units every layer
 * keeps time, rate and size in. A product such as bytes x 8e12 overflows 64 bits from about
 * 2.3 MB on, and a wrapped figure looks like any other; so each conversion here works in 128
 * bits where it must and throws UnitOverflow when the result does not fit, instead of wrapping.
 */
#ifndef FABRICSIM_COMMON_UNIT_CONVERSIONS_H
#define FABRICSIM_COMMON_UNIT_CONVERSIONS_H

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace fabricsim
{

/**
 * \brief A time, rate or size that does not fit the type that holds it. Values a user gives are
 * checked where they are read (InputError, exit 2); this one means a computed figure would have
 * wrapped, and the run stops rather than report it.
 */
class UnitOverflow : public std::overflow_error
{
  public:
    explicit UnitOverflow(const std::string& what);
    ~UnitOverflow() override;
};

namespace units
{

inline constexpr int64_t kPsPerSecond = 1000000000000;
/// The latest time in ns that ns-3's Time (int64 ps) holds: about 106 days. A time a user gives
/// in ns must not exceed it, or converting it to ps wraps.
inline constexpr uint64_t kMaxNs = uint64_t(std::numeric_limits<int64_t>::max()) / 1000;
inline constexpr uint64_t kBitPsPerByteSecond
    = 8 * uint64_t(kPsPerSecond); //!< bytes x this / bps = ps

/// Throws UnitOverflow saying \p what overflowed; out of line so the callers stay small.
[[noreturn]] void ThrowOverflow(const char* what, const std::string& detail);

/**
 * \brief Time in ps to put \p bytes on a wire of \p bitsPerSecond, rounded down (as the NIC and
 * the links serialise). Exact for any bytes and rate: 128-bit intermediate.
 * \throws UnitOverflow when the rate is 0 or the time exceeds what int64 ps hold (106 days).
 */
inline int64_t
TransmitPs(uint64_t bytes, uint64_t bitsPerSecond)
{
    // Fast path: the product fits 64 bits (frames, and flows up to 2.3 MB).
    constexpr uint64_t kMaxBytes64 = std::numeric_limits<uint64_t>::max() / kBitPsPerByteSecond;
    if (bitsPerSecond == 0)
    {
        ThrowOverflow("transmission time", "rate of 0 bit/s");
    }
    unsigned __int128 ps = bytes <= kMaxBytes64
                               ? (bytes * kBitPsPerByteSecond) / bitsPerSecond
                               : ((unsigned __int128)bytes * kBitPsPerByteSecond) / bitsPerSecond;
    if (ps > (unsigned __int128)std::numeric_limits<int64_t>::max())
    {
        ThrowOverflow("transmission time",
                      std::to_string(bytes) + " bytes at " + std::to_string(bitsPerSecond)
                          + " bit/s");
    }
    return int64_t(ps);
}

/// The longest time in seconds that int64 ps hold (about 106 days).
inline constexpr double kMaxSeconds = 9223372.036854775807;

/**
 * \brief Seconds to picoseconds, rounded to nearest.
 * \throws UnitOverflow naming \p what when \p seconds is negative, not finite or past kMaxSeconds.
 */
inline int64_t
SecondsToPs(double seconds, const char* what)
{
    // 2^63 ps as a double; a product at or above it does not fit.
    if (!(seconds >= 0) || !(seconds * 1e12 < 9223372036854775808.0))
    {
        ThrowOverflow(what, std::to_string(seconds) + " s");
    }
    return int64_t(std::llround(seconds * 1e12));
}

/**
 * \brief A model's floating-point time in ps, rounded to nearest (roofline costs, scaled trace
 * durations, transfer times). \throws UnitOverflow naming \p what when negative, not finite or
 * past int64 ps (106 days).
 */
inline int64_t
RoundPs(double ps, const char* what)
{
    if (!(ps >= 0) || !(ps < 9223372036854775808.0))
    {
        ThrowOverflow(what, std::to_string(ps) + " ps");
    }
    return int64_t(std::llround(ps));
}

/// A floating-point time in ns to ps: RoundPs(ns x 1000).
inline int64_t
NsToPs(double ns, const char* what)
{
    return RoundPs(ns * 1e3, what);
}

/// Picoseconds to put \p bytes through \p bytesPerSecond: RoundPs(bytes / rate x 1e12).
inline int64_t
BytesAtRatePs(double bytes, double bytesPerSecond, const char* what)
{
    return RoundPs(bytes / bytesPerSecond * 1e12, what);
}

/**
 * \brief A byte or token count a model computed in floating point, rounded to nearest.
 * \throws UnitOverflow naming \p what when negative, not finite or 2^64 or more.
 */
inline uint64_t
RoundCount(double bytes, const char* what)
{
    if (!(bytes >= 0) || !(bytes < 18446744073709551616.0))
    {
        ThrowOverflow(what, std::to_string(bytes));
    }
    return bytes < 9223372036854775808.0 ? uint64_t(std::llround(bytes))
                                         : uint64_t(std::round(bytes));
}

/**
 * \brief a + b in T (ps as int64_t, bytes as uint64_t); b converts to a's type.
 * \throws UnitOverflow naming \p what when the sum does not fit.
 */
template <typename T>
T
CheckedAdd(T a, std::common_type_t<T> b, const char* what)
{
    T sum = 0;
    if (__builtin_add_overflow(a, b, &sum))
    {
        ThrowOverflow(what, std::to_string(a) + " + " + std::to_string(b));
    }
    return sum;
}

/// a x b in T; throws UnitOverflow naming \p what when the product does not fit.
template <typename T>
T
CheckedMul(T a, std::common_type_t<T> b, const char* what)
{
    T product = 0;
    if (__builtin_mul_overflow(a, b, &product))
    {
        ThrowOverflow(what, std::to_string(a) + " x " + std::to_string(b));
    }
    return product;
}

} // namespace units
} // namespace fabricsim

#endif
