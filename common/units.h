/*
 * Quantities with units as users write them in JSON: "80GB", "3.35TB/s", "400Gb/s", "989TFLOPS",
 * "3us"; and link rates and delays ("100Gbps", "1us") as the topology and scenario files give them.
 */
#ifndef FABRICSIM_COMMON_UNITS_H
#define FABRICSIM_COMMON_UNITS_H

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace fabricsim
{

/**
 * \brief What a quantity measures; decides the accepted units and the base unit returned.
 */
enum class UnitKind
{
    Bytes,       //!< base: bytes. B, KB, MB, GB, TB (1e3 steps), KiB, MiB, GiB, TiB (2^10 steps)
    BytesPerSec, //!< base: bytes/s. GB/s, TB/s, ... and bit rates b/s, Gb/s, Gbps, Tbps (÷ 8)
    FlopsPerSec, //!< base: FLOP/s. FLOPS, GFLOPS, TFLOPS, PFLOPS (also "TFLOP/s")
    Seconds      //!< base: seconds. s, ms, us, ns, ps
};

/**
 * \brief Parse "number[ ]unit" into the base unit of \p kind. A bare number is taken as already
 * in the base unit. Prefixes k/K, M, G, T, P are decimal; Ki, Mi, Gi, Ti are binary (bytes only).
 * In rates, an upper-case "B" means bytes and a lower-case "b" bits.
 * \return the value in base units, or nothing when the text does not parse or the unit is wrong.
 */
std::optional<double> ParseQuantity(const std::string& text, UnitKind kind);

/**
 * \brief Name of the base unit of \p kind and an example, for error messages.
 */
std::string UnitHint(UnitKind kind);

/**
 * \brief A quantity with units (see ParseQuantity) read from JSON: a number is taken in base
 * units, a string parsed; it must be finite and > 0 (>= 0 when \p allowZero).
 * \throws fabricsim::InputError naming file and field otherwise
 */
double ReadQuantity(const nlohmann::json& v,
                    UnitKind kind,
                    const std::string& file,
                    const std::string& field,
                    bool allowZero = false);

/**
 * Parse a link rate: a JSON number is bits/s; a string is a number and a unit such as
 * "100Gbps", "400G", "3.6Tbps" (bits) or "450GBps" (bytes, capital B).
 * \throws fabricsim::InputError naming file and field when the value is not a positive rate
 */
double ParseRate(const nlohmann::json& value, const std::string& file, const std::string& field);

/**
 * Parse a delay: a JSON number is nanoseconds; a string is a number and a unit among
 * ps, ns, us, ms, s ("1us", "500ns", "0.001ms").
 * \returns the delay in picoseconds
 * \throws fabricsim::InputError naming file and field when the value is not a non-negative delay
 */
uint64_t ParseDelay(const nlohmann::json& value, const std::string& file, const std::string& field);

} // namespace fabricsim

#endif
