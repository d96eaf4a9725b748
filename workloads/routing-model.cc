#include "routing-model.h"

#include "input-error.h"
#include "json-read.h"

#include <cmath>
#include <numeric>
#include <random>

namespace fabricsim
{

using nlohmann::json;

RoutingModel::RoutingModel()
    : m_skew(0.0)
    , m_seed(1)
{
}

RoutingModel
RoutingModel::Uniform()
{
    return RoutingModel();
}

RoutingModel
RoutingModel::Zipf(double s, uint64_t seed)
{
    RoutingModel r;
    r.m_skew = s;
    r.m_seed = seed;
    return r;
}

RoutingModel
RoutingModel::FromJson(const json& j, const std::string& file, const std::string& prefix)
{
    JsonObject o(j, file, prefix);
    std::string kind = o.OptionalString("kind", "uniform");
    if (kind == "uniform")
    {
        return Uniform();
    }
    if (kind == "zipf")
    {
        return Zipf(o.OptionalNumber("s", 1.0, 0.0, 10.0), o.OptionalUint("seed", 1));
    }
    throw fabricsim::InputError(
        file, o.Field("kind"), "\"uniform\" or \"zipf\"", "\"" + kind + "\"");
}

bool
RoutingModel::IsUniform() const
{
    return m_skew == 0.0;
}

double
RoutingModel::Skew() const
{
    return m_skew;
}

uint64_t
RoutingModel::Seed() const
{
    return m_seed;
}

std::vector<double>
RoutingModel::SelectionProbabilities(uint32_t numExperts, uint32_t topK) const
{
    std::vector<double> pi(numExperts, numExperts ? double(topK) / numExperts : 0.0);
    if (IsUniform() || numExperts == 0)
    {
        return pi;
    }
    // Popularity rank of each expert: a seeded Fisher-Yates permutation.
    std::vector<uint32_t> rank(numExperts);
    std::iota(rank.begin(), rank.end(), 0);
    std::mt19937_64 rng(m_seed);
    for (uint32_t i = numExperts - 1; i > 0; --i)
    {
        uint32_t j = uint32_t(rng() % (uint64_t(i) + 1));
        std::swap(rank[i], rank[j]);
    }
    std::vector<double> weight(numExperts);
    for (uint32_t e = 0; e < numExperts; ++e)
    {
        weight[e] = std::pow(double(rank[e] + 1), -m_skew);
    }
    // Water-fill: pi_e = k w_e / sum(w) over the uncapped experts, capping at 1.
    std::vector<bool> capped(numExperts, false);
    double mass = topK;
    for (;;)
    {
        double sum = 0;
        for (uint32_t e = 0; e < numExperts; ++e)
        {
            sum += capped[e] ? 0.0 : weight[e];
        }
        bool changed = false;
        double newMass = mass;
        for (uint32_t e = 0; e < numExperts; ++e)
        {
            if (!capped[e])
            {
                pi[e] = mass * weight[e] / sum;
                if (pi[e] > 1.0)
                {
                    pi[e] = 1.0;
                    capped[e] = true;
                    newMass -= 1.0;
                    changed = true;
                }
            }
        }
        mass = newMass;
        if (!changed)
        {
            break;
        }
    }
    return pi;
}

double
ExpectedDistinctExperts(uint32_t numExperts, uint32_t topK, double tokens)
{
    if (numExperts == 0)
    {
        return 0.0;
    }
    return numExperts * (1.0 - std::pow(1.0 - double(topK) / numExperts, tokens));
}

double
ExpectedDistinctExperts(const std::vector<double>& pi,
                        uint32_t first,
                        uint32_t count,
                        double tokens)
{
    double hit = 0;
    for (uint32_t e = first; e < first + count && e < pi.size(); ++e)
    {
        hit += 1.0 - std::pow(1.0 - pi[e], tokens);
    }
    return hit;
}

double
ExpectedAssignments(const std::vector<double>& pi, uint32_t first, uint32_t count, double tokens)
{
    double sum = 0;
    for (uint32_t e = first; e < first + count && e < pi.size(); ++e)
    {
        sum += pi[e];
    }
    return tokens * sum;
}

} // namespace fabricsim
