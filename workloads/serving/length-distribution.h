/*
 * Token-count distributions for synthetic requests, sampled by the platform-independent
 * SeededStream (common/seeded-stream.h).
 */
#ifndef FABRICSIM_SERVING_LENGTH_DISTRIBUTION_H
#define FABRICSIM_SERVING_LENGTH_DISTRIBUTION_H

#include "json-read.h"
#include "seeded-stream.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace fabricsim
{

/**
 * \brief Distribution of a token count (prompt or output length).
 *
 * JSON: a number (constant), or {"dist": "constant", "value": n},
 * {"dist": "uniform", "min": a, "max": b} (integers, both inclusive),
 * {"dist": "normal", "mean": m, "std": s}, {"dist": "lognormal", "mean": m, "std": s} (mean and
 * standard deviation of the lengths themselves), {"dist": "exponential", "mean": m}. Every kind
 * accepts "min" (default 1) and "max" (default kMaxTokens) as clamps; samples are rounded to the
 * nearest integer. Every count given is at most kMaxTokens, so that a request's prompt + output
 * cannot wrap 64 bits (2^64 - 1 prompt tokens once passed the KV-cache check as 1 token).
 */
struct LengthDistribution
{
    /// Largest token count a scenario may give (10^12: far past any KV cache).
    static constexpr uint64_t kMaxTokens = 1000000000000;

    /// The distribution family.
    enum class Kind
    {
        Constant,
        Uniform,
        Normal,
        LogNormal,
        Exponential
    };

    Kind kind = Kind::Constant;      //!< family
    double value = 1;                //!< constant value
    double mean = 0;                 //!< mean (normal, lognormal, exponential)
    double stddev = 0;               //!< standard deviation (normal, lognormal)
    double min = 1;                  //!< lower clamp (uniform: lower bound)
    double max = double(kMaxTokens); //!< upper clamp (uniform: upper bound)

    /// A constant \p n.
    static LengthDistribution Constant(uint64_t n);

    /// Parse (see the class comment); errors name \p file and \p field.
    static LengthDistribution FromJson(const nlohmann::json& j,
                                       const std::string& file,
                                       const std::string& field);

    /// One sample (>= 1).
    uint64_t Sample(SeededStream& rng) const;

    /// Largest value a sample can take.
    uint64_t Max() const;

    /// Mean of the unclamped distribution (constant: the value; uniform: (min + max) / 2).
    double Mean() const;
};

} // namespace fabricsim

#endif
