#include "units.h"

#include <cctype>
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
    while (!u.empty() && std::isspace(static_cast<unsigned char>(u.back())))
    {
        u.pop_back();
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

} // namespace fabricsim
