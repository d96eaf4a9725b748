#include "length-distribution.h"

#include "input-error.h"

#include <algorithm>
#include <cmath>

namespace fabricsim
{

using nlohmann::json;

LengthDistribution
LengthDistribution::Constant(uint64_t n)
{
    LengthDistribution d;
    d.kind = Kind::Constant;
    d.value = double(n);
    d.min = 1;
    d.max = double(kMaxTokens);
    return d;
}

namespace
{

/// \p n checked against kMaxTokens; InputError naming \p field otherwise.
uint64_t
TokenCount(uint64_t n, const std::string& file, const std::string& field)
{
    if (n > LengthDistribution::kMaxTokens)
    {
        throw fabricsim::InputError(
            file, field, "a token count of at most 10^12", std::to_string(n));
    }
    return n;
}

} // namespace

LengthDistribution
LengthDistribution::FromJson(const json& j, const std::string& file, const std::string& field)
{
    if (j.is_number())
    {
        // A bare count, read as the field it is.
        return Constant(TokenCount(JsonObject::ToUint(j, file, field, 1), file, field));
    }
    if (!j.is_object())
    {
        throw fabricsim::InputError(
            file, field, "a token count or a distribution object {\"dist\": ...}", DescribeJson(j));
    }
    JsonObject o(j, file, field);
    std::string kind = o.OptionalString("dist", "");
    o.CheckKeys({"dist", "value", "min", "max", "mean", "std"});
    LengthDistribution d;
    d.min = double(TokenCount(o.OptionalUint("min", 1, 1), file, o.Field("min")));
    d.max = double(TokenCount(o.OptionalUint("max", kMaxTokens, 1), file, o.Field("max")));
    if (d.max < d.min)
    {
        throw fabricsim::InputError(file,
                                    o.Field("max"),
                                    "a value >= min (" + std::to_string(uint64_t(d.min)) + ")",
                                    DescribeJson(j["max"]));
    }
    auto requireMean = [&]()
    {
        if (!o.Has("mean"))
        {
            o.Fail("mean", "a mean length > 0", "nothing");
        }
        return o.OptionalNumber("mean", 1, 1e-9, 1e12);
    };
    if (kind == "constant")
    {
        d.kind = Kind::Constant;
        d.value = double(TokenCount(o.Uint("value", 1), file, o.Field("value")));
        d.min = 1;
        d.max = double(kMaxTokens);
    }
    else if (kind == "uniform")
    {
        d.kind = Kind::Uniform;
        if (!o.Has("min") || !o.Has("max"))
        {
            throw fabricsim::InputError(file,
                                        o.Field(o.Has("min") ? "max" : "min"),
                                        "an integer bound (uniform needs min and max)",
                                        "nothing");
        }
    }
    else if (kind == "normal" || kind == "lognormal")
    {
        d.kind = kind == "normal" ? Kind::Normal : Kind::LogNormal;
        d.mean = requireMean();
        d.stddev = o.OptionalNumber("std", 0, 0, 1e12);
    }
    else if (kind == "exponential")
    {
        d.kind = Kind::Exponential;
        d.mean = requireMean();
    }
    else
    {
        throw fabricsim::InputError(file,
                                    o.Field("dist"),
                                    "\"constant\", \"uniform\", \"normal\", \"lognormal\" or "
                                    "\"exponential\"",
                                    "\"" + kind + "\"");
    }
    return d;
}

uint64_t
LengthDistribution::Sample(SeededStream& rng) const
{
    double x = value;
    switch (kind)
    {
    case Kind::Constant:
        return uint64_t(value);
    case Kind::Uniform:
        // Integers min..max inclusive, each equally likely.
        x = min + std::floor(rng.Uniform() * (max - min + 1));
        break;
    case Kind::Normal:
        x = mean + stddev * rng.Normal();
        break;
    case Kind::LogNormal:
    {
        // Parameters of the underlying normal from the mean and std of the lengths.
        double s2 = std::log1p((stddev * stddev) / (mean * mean));
        double mu = std::log(mean) - s2 / 2;
        x = std::exp(mu + std::sqrt(s2) * rng.Normal());
        break;
    }
    case Kind::Exponential:
        x = rng.Exponential(1.0 / mean);
        break;
    }
    x = std::round(x);
    return uint64_t(std::clamp(x, min, max));
}

uint64_t
LengthDistribution::Max() const
{
    return kind == Kind::Constant ? uint64_t(value) : uint64_t(max);
}

double
LengthDistribution::Mean() const
{
    switch (kind)
    {
    case Kind::Constant:
        return value;
    case Kind::Uniform:
        return (min + max) / 2;
    default:
        return mean;
    }
}

} // namespace fabricsim
