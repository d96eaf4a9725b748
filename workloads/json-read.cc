#include "json-read.h"

#include "input-error.h"
#include "json-reader.h"

#include <cctype>
#include <cmath>
#include <fstream>
#include <sstream>

namespace fabricsim
{

using nlohmann::json;

std::string
JsonWhere::Field(const std::string& key) const
{
    return JsonPath(prefix, key);
}

JsonWhere
JsonWhere::Child(const std::string& key) const
{
    return JsonWhere{file, Field(key)};
}

const json*
FindField(const json& obj, const std::string& key)
{
    if (!obj.is_object())
    {
        return nullptr;
    }
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null())
    {
        return nullptr;
    }
    return &*it;
}

double
ReadQuantity(
    const json& v, UnitKind kind, const std::string& file, const std::string& field, bool allowZero)
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

json
LoadJsonFile(const std::string& path)
{
    std::ifstream in(path);
    if (!in)
    {
        throw fabricsim::InputError(
            path, "", "a readable JSON file", "no such file or not readable");
    }
    std::stringstream text;
    text << in.rdbuf();
    return ParseJson(text.str(), path);
}

std::string
NormalizeName(const std::string& s)
{
    std::string base = s;
    auto slash = base.rfind('/');
    if (slash != std::string::npos)
    {
        base = base.substr(slash + 1);
    }
    std::string out;
    for (unsigned char c : base)
    {
        if (std::isalnum(c))
        {
            out.push_back(char(std::tolower(c)));
        }
    }
    return out;
}

} // namespace fabricsim
