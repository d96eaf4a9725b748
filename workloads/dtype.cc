#include "dtype.h"

#include <algorithm>
#include <cctype>

namespace fabricsim
{

double
DTypeBytes(DType t)
{
    switch (t)
    {
    case DType::Fp32:
        return 4.0;
    case DType::Fp16:
    case DType::Bf16:
        return 2.0;
    case DType::Fp8:
        return 1.0;
    }
    return 2.0;
}

std::string
DTypeName(DType t)
{
    switch (t)
    {
    case DType::Fp32:
        return "fp32";
    case DType::Fp16:
        return "fp16";
    case DType::Bf16:
        return "bf16";
    case DType::Fp8:
        return "fp8";
    }
    return "bf16";
}

std::optional<DType>
ParseDType(const std::string& name)
{
    std::string s = name;
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    if (s.rfind("torch.", 0) == 0)
    {
        s = s.substr(6);
    }
    if (s == "bfloat16" || s == "bf16")
    {
        return DType::Bf16;
    }
    if (s == "float16" || s == "fp16" || s == "half")
    {
        return DType::Fp16;
    }
    if (s == "float32" || s == "fp32" || s == "float")
    {
        return DType::Fp32;
    }
    if (s == "fp8" || s == "e4m3" || s == "e5m2" || s.rfind("float8", 0) == 0
        || s.rfind("fp8_", 0) == 0)
    {
        return DType::Fp8;
    }
    return std::nullopt;
}

} // namespace fabricsim
