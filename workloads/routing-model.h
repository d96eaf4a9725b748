/*
 * How MoE tokens pick experts, in expectation: the per-expert selection probability, the
 * expected number of distinct experts hit, and the per-destination all-to-all bytes.
 */
#ifndef FABRICSIM_WORKLOADS_ROUTING_MODEL_H
#define FABRICSIM_WORKLOADS_ROUTING_MODEL_H

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace fabricsim
{

/**
 * \brief Expert routing distribution.
 *
 * Uniform: each token picks k distinct experts, each expert with probability k / E.
 * Zipf(s, seed): expert popularity follows rank^-s; which expert gets which rank is a
 * permutation drawn from \p seed (mt19937_64 + Fisher-Yates, identical on every platform). The
 * selection probability of expert e is pi_e = k w_e / sum(w), capped at 1 with the excess
 * spread over the others in proportion to w (a token cannot pick one expert twice), so
 * sum(pi) = k. s = 0 is uniform.
 *
 * JSON: {"kind": "uniform"} or {"kind": "zipf", "s": 1.0, "seed": 1}.
 */
class RoutingModel
{
  public:
    /// Uniform routing.
    RoutingModel();

    /// Uniform routing.
    static RoutingModel Uniform();

    /// Zipf-skewed routing with exponent \p s >= 0, expert order drawn from \p seed.
    static RoutingModel Zipf(double s, uint64_t seed);

    /// Parse {"kind": ..., "s": ..., "seed": ...}; errors name \p file and \p prefix.
    static RoutingModel FromJson(const nlohmann::json& j,
                                 const std::string& file = "",
                                 const std::string& prefix = "routing");

    /// True for uniform routing.
    bool IsUniform() const;

    /// Zipf exponent (0 for uniform).
    double Skew() const;

    /// Seed of the expert permutation.
    uint64_t Seed() const;

    /**
     * \brief Probability that one token selects each expert (size E, each in [0, 1], sum k).
     */
    std::vector<double> SelectionProbabilities(uint32_t numExperts, uint32_t topK) const;

  private:
    double m_skew;   //!< Zipf exponent, 0 = uniform
    uint64_t m_seed; //!< permutation seed
};

/**
 * \brief Expected distinct experts hit by \p tokens tokens under uniform routing:
 * E (1 - (1 - k/E)^T).
 */
double ExpectedDistinctExperts(uint32_t numExperts, uint32_t topK, double tokens);

/**
 * \brief Expected distinct experts hit among experts [first, first + count) when one token
 * selects expert e with probability pi[e]: sum of 1 - (1 - pi_e)^T.
 */
double ExpectedDistinctExperts(const std::vector<double>& pi,
                               uint32_t first,
                               uint32_t count,
                               double tokens);

/**
 * \brief Expected token-expert assignments landing on experts [first, first + count):
 * T x sum(pi_e).
 */
double ExpectedAssignments(const std::vector<double>& pi,
                           uint32_t first,
                           uint32_t count,
                           double tokens);

} // namespace fabricsim

#endif
