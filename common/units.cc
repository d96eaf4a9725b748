#include "units.h"

#include "input-error.h"
#include "json-describe.h"

#include <cctype>
#include <cmath>
#include <cstdlib>

namespace fabricsim
{

namespace
{

/// Scale of an SI / binary prefix at the start of \p u; advances \p pos past it.
std::optional<double>
PrefixScale(const std::string& u, size_t& pos, bool allowBinary)
{
    if (pos >= u.size())
    {
        return 1.0;
    }
    double scale = 1.0;
    switch (u[pos])
    {
    case 'k':
    case 'K':
        scale = 1e3;
        break;
    case 'M':
        scale = 1e6;
        break;
    case 'G':
        scale = 1e9;
        break;
    case 'T':
        scale = 1e12;
        break;
    case 'P':
        scale = 1e15;
        break;
    default:
        return 1.0;
    }
    // A bare "T" or "P" in FLOPS units is a prefix too ("TFLOPS"); "B"/"b" alone has no prefix.
    ++pos;
    if (pos < u.size() && u[pos] == 'i')
    {
        if (!allowBinary)
        {
            return std::nullopt;
        }
        ++pos;
        const double exps[] = {10, 20, 30, 40, 50};
        int idx = scale == 1e3 ? 0 : scale == 1e6 ? 1 : scale == 1e9 ? 2 : scale == 1e12 ? 3 : 4;
        return double(1ULL << int(exps[idx]));
    }
    return scale;
}

} // namespace

std::optional<double>
ParseQuantity(const std::string& text, UnitKind kind)
{
    // Space may stand between the number and its unit, nowhere else: "16MB " is a typo to name,
    // not a size.
    if (text.empty() || std::isspace(static_cast<unsigned char>(text.front()))
        || std::isspace(static_cast<unsigned char>(text.back())))
    {
        return std::nullopt;
    }
    const char* begin = text.c_str();
    char* end = nullptr;
    double value = std::strtod(begin, &end);
    if (end == begin)
    {
        return std::nullopt;
    }
    std::string u(end);
    while (!u.empty() && std::isspace(static_cast<unsigned char>(u.front())))
    {
        u.erase(u.begin());
    }
    if (u.empty())
    {
        return value;
    }
    size_t pos = 0;
    switch (kind)
    {
    case UnitKind::Seconds:
    {
        if (u == "s")
        {
            return value;
        }
        if (u == "ms")
        {
            return value * 1e-3;
        }
        if (u == "us")
        {
            return value * 1e-6;
        }
        if (u == "ns")
        {
            return value * 1e-9;
        }
        if (u == "ps")
        {
            return value * 1e-12;
        }
        return std::nullopt;
    }
    case UnitKind::Bytes:
    {
        auto scale = PrefixScale(u, pos, true);
        if (!scale || u.substr(pos) != "B")
        {
            return std::nullopt;
        }
        return value * *scale;
    }
    case UnitKind::BytesPerSec:
    {
        auto scale = PrefixScale(u, pos, true);
        if (!scale)
        {
            return std::nullopt;
        }
        std::string rest = u.substr(pos);
        if (rest == "B/s" || rest == "Bps")
        {
            return value * *scale;
        }
        if (rest == "b/s" || rest == "bps" || rest == "bit/s")
        {
            return value * *scale / 8.0;
        }
        return std::nullopt;
    }
    case UnitKind::FlopsPerSec:
    {
        auto scale = PrefixScale(u, pos, false);
        if (!scale)
        {
            return std::nullopt;
        }
        std::string rest = u.substr(pos);
        if (rest == "FLOPS" || rest == "FLOP/s" || rest == "flops" || rest == "flop/s")
        {
            return value * *scale;
        }
        return std::nullopt;
    }
    }
    return std::nullopt;
}

std::string
UnitHint(UnitKind kind)
{
    switch (kind)
    {
    case UnitKind::Bytes:
        return "a size like \"80GB\" or \"64GiB\" (a bare number is bytes)";
    case UnitKind::BytesPerSec:
        return "a bandwidth like \"3.35TB/s\" or \"400Gb/s\" (a bare number is bytes/s)";
    case UnitKind::FlopsPerSec:
        return "a rate like \"989TFLOPS\" (a bare number is FLOP/s)";
    case UnitKind::Seconds:
        return "a duration like \"3us\" (a bare number is seconds)";
    }
    return "";
}

namespace
{

/// Split "  12.5Gbps " into number and unit; false when no number leads the text.
bool
SplitNumberUnit(const std::string& text, double& number, std::string& unit)
{
    const char* begin = text.c_str();
    while (std::isspace(static_cast<unsigned char>(*begin)))
    {
        ++begin;
    }
    char* end = nullptr;
    number = std::strtod(begin, &end);
    if (end == begin || !std::isfinite(number))
    {
        return false;
    }
    unit = end;
    while (!unit.empty() && std::isspace(static_cast<unsigned char>(unit.back())))
    {
        unit.pop_back();
    }
    while (!unit.empty() && std::isspace(static_cast<unsigned char>(unit.front())))
    {
        unit.erase(0, 1);
    }
    return true;
}

/// Bits per second of one rate unit ("Gbps", "G", "GBps", "gb/s"); 0 when unknown.
double
RateUnit(std::string unit)
{
    double scale = 1;
    if (!unit.empty())
    {
        switch (unit[0])
        {
        case 'k':
        case 'K':
            scale = 1e3;
            break;
        case 'm':
        case 'M':
            scale = 1e6;
            break;
        case 'g':
        case 'G':
            scale = 1e9;
            break;
        case 't':
        case 'T':
            scale = 1e12;
            break;
        default:
            scale = 0;
        }
        if (scale != 0)
        {
            unit.erase(0, 1);
        }
        else
        {
            scale = 1;
        }
    }
    // Case matters only here: capital B means bytes, as in ns-3's DataRate.
    if (unit.empty() || unit == "bps" || unit == "b/s" || unit == "bit/s")
    {
        return scale;
    }
    if (unit == "Bps" || unit == "B/s")
    {
        return scale * 8;
    }
    return 0;
}

} // namespace

namespace
{

/// Rates a link may have: whole bits per second as the models hold them (uint64), and far
/// below where bytes x 8e12 / rate loses meaning.
double
CheckRateRange(double bps,
               const nlohmann::json& value,
               const std::string& file,
               const std::string& field)
{
    if (!(bps >= 1 && bps <= 1e15))
    {
        throw fabricsim::InputError(
            file, field, "a rate from 1bps to 1000Tbps", DescribeJson(value));
    }
    return bps;
}

} // namespace

double
ReadQuantity(const nlohmann::json& v,
             UnitKind kind,
             const std::string& file,
             const std::string& field,
             bool allowZero)
{
    std::optional<double> x;
    if (v.is_number())
    {
        x = v.get<double>();
    }
    else if (v.is_string())
    {
        x = ParseQuantity(v.get<std::string>(), kind);
    }
    if (!x || !std::isfinite(*x) || *x < 0 || (!allowZero && *x == 0))
    {
        std::string hint = UnitHint(kind);
        hint += allowZero ? ", >= 0" : ", > 0";
        throw fabricsim::InputError(file, field, hint, DescribeJson(v));
    }
    return *x;
}

double
ParseRate(const nlohmann::json& value, const std::string& file, const std::string& field)
{
    const std::string expected = "a rate like \"100Gbps\"";
    if (value.is_number())
    {
        const double bps = value.get<double>();
        if (!(bps > 0) || !std::isfinite(bps))
        {
            throw fabricsim::InputError(file, field, expected, DescribeJson(value));
        }
        return CheckRateRange(bps, value, file, field);
    }
    if (!value.is_string())
    {
        throw fabricsim::InputError(file, field, expected, DescribeJson(value));
    }
    const std::string text = value.get<std::string>();
    double number = 0;
    std::string unit;
    // A bare number in a string is refused: "100" is far more likely a mistake than 100 b/s.
    if (!SplitNumberUnit(text, number, unit) || unit.empty() || !(number > 0))
    {
        throw fabricsim::InputError(file, field, expected, DescribeJson(value));
    }
    const double scale = RateUnit(unit);
    if (scale == 0)
    {
        throw fabricsim::InputError(file, field, expected, DescribeJson(value));
    }
    return CheckRateRange(number * scale, value, file, field);
}

uint64_t
ParseDelay(const nlohmann::json& value, const std::string& file, const std::string& field)
{
    const std::string expected = "a delay like \"1us\" (units ps, ns, us, ms, s)";
    double ps = 0;
    if (value.is_number())
    {
        ps = value.get<double>() * 1e3;
    }
    else if (value.is_string())
    {
        double number = 0;
        std::string unit;
        if (!SplitNumberUnit(value.get<std::string>(), number, unit))
        {
            throw fabricsim::InputError(file, field, expected, DescribeJson(value));
        }
        double scale = 0;
        if (unit == "ps")
        {
            scale = 1;
        }
        else if (unit == "ns")
        {
            scale = 1e3;
        }
        else if (unit == "us")
        {
            scale = 1e6;
        }
        else if (unit == "ms")
        {
            scale = 1e9;
        }
        else if (unit == "s")
        {
            scale = 1e12;
        }
        if (scale == 0)
        {
            throw fabricsim::InputError(file, field, expected, DescribeJson(value));
        }
        ps = number * scale;
    }
    else
    {
        throw fabricsim::InputError(file, field, expected, DescribeJson(value));
    }
    if (!(ps >= 0) || ps > 1e18)
    {
        throw fabricsim::InputError(file, field, expected, DescribeJson(value));
    }
    return static_cast<uint64_t>(std::llround(ps));
}

} // namespace fabricsim
