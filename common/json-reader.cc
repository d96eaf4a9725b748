#include "json-reader.h"

#include "input-error.h"
#include "json-describe.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>

namespace fabricsim
{

using nlohmann::json;

namespace
{

/// Builds the document like nlohmann's own DOM parser, and refuses what that one lets through:
/// a key twice in one object (it keeps the last) and unbounded nesting (it recurses on).
class StrictSax
{
  public:
    StrictSax(json& root,
              const std::string& file,
              const std::string& path,
              const JsonLimits& limits)
        : m_root(root)
        , m_file(file)
        , m_path(path)
        , m_limits(limits)
    {
    }

    bool null()
    {
        Put(json(nullptr));
        return true;
    }

    bool boolean(bool v)
    {
        Put(json(v));
        return true;
    }

    bool number_integer(json::number_integer_t v)
    {
        Put(json(v));
        return true;
    }

    bool number_unsigned(json::number_unsigned_t v)
    {
        Put(json(v));
        return true;
    }

    bool number_float(json::number_float_t v, const json::string_t&)
    {
        Put(json(v));
        return true;
    }

    bool string(json::string_t& v)
    {
        Put(json(std::move(v)));
        return true;
    }

    bool binary(json::binary_t& v)
    {
        Put(json(std::move(v)));
        return true;
    }

    bool start_object(std::size_t)
    {
        return Open(json::object());
    }

    bool key(json::string_t& k)
    {
        if (m_stack.back().value->contains(k))
        {
            throw InputError(m_file,
                             JsonPath(m_stack.back().path, k),
                             "each key once in an object",
                             "\"" + k + "\" a second time");
        }
        m_key = k;
        return true;
    }

    bool end_object()
    {
        m_stack.pop_back();
        return true;
    }

    bool start_array(std::size_t)
    {
        return Open(json::array());
    }

    bool end_array()
    {
        m_stack.pop_back();
        return true;
    }

    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e)
    {
        throw InputError(m_file, m_path, "valid JSON", e.what());
    }

  private:
    struct Open_
    {
        json* value;
        std::string path;
    };

    /// Place \p v where the parser is; returns it with its path.
    Open_ Put(json&& v)
    {
        if (m_stack.empty())
        {
            m_root = std::move(v);
            return {&m_root, m_path};
        }
        Open_& top = m_stack.back();
        if (top.value->is_array())
        {
            const size_t i = top.value->size();
            top.value->push_back(std::move(v));
            return {&top.value->back(), JsonIndex(top.path, i)};
        }
        json& slot = (*top.value)[m_key];
        slot = std::move(v);
        return {&slot, JsonPath(top.path, m_key)};
    }

    bool Open(json&& container)
    {
        Open_ at = Put(std::move(container));
        if (m_stack.size() >= m_limits.maxDepth)
        {
            throw InputError(m_file,
                             at.path,
                             "JSON nested at most " + std::to_string(m_limits.maxDepth) + " deep",
                             "deeper nesting");
        }
        m_stack.push_back(std::move(at));
        return true;
    }

    json& m_root;
    const std::string& m_file;
    const std::string& m_path;
    const JsonLimits& m_limits;
    std::vector<Open_> m_stack;
    std::string m_key;
};

std::string
RangeText(uint64_t min, uint64_t max)
{
    return max == UINT64_MAX
               ? "an integer >= " + std::to_string(min)
               : "an integer from " + std::to_string(min) + " to " + std::to_string(max);
}

} // namespace

json
ParseJson(std::string_view text,
          const std::string& file,
          const std::string& path,
          const JsonLimits& limits)
{
    json root;
    StrictSax sax(root, file, path, limits);
    json::sax_parse(text.begin(), text.end(), &sax);
    return root;
}

std::string
NearestName(const std::string& name, const std::vector<std::string>& candidates)
{
    auto lower = [](std::string s)
    {
        for (char& c : s)
        {
            c = char(std::tolower(static_cast<unsigned char>(c)));
        }
        return s;
    };
    const std::string a = lower(name);
    const size_t limit = std::min<size_t>(3, std::max<size_t>(1, a.size() / 3));
    std::string best;
    size_t bestDist = limit + 1;
    for (const std::string& cand : candidates)
    {
        const std::string b = lower(cand);
        // Edit distance counting a swap of neighbours as one edit (optimal string alignment);
        // a length gap past the limit cannot match.
        if ((a.size() > b.size() ? a.size() - b.size() : b.size() - a.size()) > limit)
        {
            continue;
        }
        std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
        for (size_t i = 0; i <= a.size(); ++i)
        {
            for (size_t j = 0; j <= b.size(); ++j)
            {
                if (i == 0 || j == 0)
                {
                    d[i][j] = i + j;
                    continue;
                }
                d[i][j] = std::min(
                    {d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1])});
                if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                {
                    d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
                }
            }
        }
        const std::vector<size_t>& row = d[a.size()];
        if (row[b.size()] < bestDist && cand != name)
        {
            bestDist = row[b.size()];
            best = cand;
        }
    }
    return best;
}

std::string
DidYouMean(const std::string& name, const std::vector<std::string>& candidates)
{
    const std::string n = NearestName(name, candidates);
    return n.empty() ? "" : " (did you mean \"" + n + "\"?)";
}

std::vector<json>
ReadJsonLines(const std::string& path, const std::string& what, const FileLimits& limits)
{
    LineReader r(path, what, limits);
    std::vector<json> records;
    std::string line;
    while (r.Next(line))
    {
        if (line.find_first_not_of(" \t") != std::string::npos)
        {
            records.push_back(ParseJson(line, path, r.Where()));
        }
    }
    return records;
}

std::string
JsonPath(const std::string& parent, const std::string& key)
{
    return parent.empty() ? key : parent + "." + key;
}

std::string
JsonIndex(const std::string& parent, size_t i)
{
    return parent + "[" + std::to_string(i) + "]";
}

JsonObject::JsonObject(const json& value, std::string file, std::string path)
    : m_value(&value)
    , m_file(std::move(file))
    , m_path(std::move(path))
{
    if (!value.is_object())
    {
        throw InputError(m_file, m_path, "a JSON object", DescribeJson(value));
    }
}

std::string
JsonObject::Field(const std::string& key) const
{
    return JsonPath(m_path, key);
}

const json*
JsonObject::Find(const std::string& key) const
{
    auto it = m_value->find(key);
    return it == m_value->end() || it->is_null() ? nullptr : &*it;
}

void
JsonObject::CheckKeys(const std::vector<std::string>& known, const std::string& note) const
{
    for (auto it = m_value->begin(); it != m_value->end(); ++it)
    {
        bool ok = false;
        for (const auto& k : known)
        {
            ok = ok || k == it.key();
        }
        if (!ok)
        {
            std::string list;
            for (const auto& k : known)
            {
                list += (list.empty() ? "" : ", ") + k;
            }
            Fail(it.key(),
                 "a known key (one of: " + list + (note.empty() ? "" : "; " + note) + ")",
                 "unknown key \"" + it.key() + "\"" + DidYouMean(it.key(), known));
        }
    }
}

JsonObject
JsonObject::Object(const std::string& key) const
{
    return JsonObject(Require(key, "a JSON object"), m_file, Field(key));
}

std::optional<JsonObject>
JsonObject::OptionalObject(const std::string& key) const
{
    const json* v = Find(key);
    if (!v)
    {
        return std::nullopt;
    }
    return JsonObject(*v, m_file, Field(key));
}

const json&
JsonObject::Require(const std::string& key, const std::string& expected) const
{
    const json* v = Find(key);
    if (!v)
    {
        Fail(key, expected, "nothing (the key is required)");
    }
    return *v;
}

void
JsonObject::Fail(const std::string& key,
                 const std::string& expected,
                 const std::string& found) const
{
    throw InputError(m_file, Field(key), expected, found);
}

std::optional<uint64_t>
JsonObject::MemberUint(const json& obj, const std::string& key)
{
    if (!obj.is_object())
    {
        return std::nullopt;
    }
    auto it = obj.find(key);
    return it == obj.end() ? std::nullopt : AsUint(*it);
}

std::string
JsonObject::MemberString(const json& obj, const std::string& key)
{
    if (!obj.is_object())
    {
        return "";
    }
    auto it = obj.find(key);
    return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::optional<uint64_t>
JsonObject::AsUint(const json& v)
{
    if (v.is_number_unsigned())
    {
        return v.get<uint64_t>();
    }
    if (v.is_number_integer()) // signed: as built in C++, or negative in a file
    {
        return v.get<int64_t>() >= 0 ? std::optional<uint64_t>(uint64_t(v.get<int64_t>()))
                                     : std::nullopt;
    }
    if (v.is_number_float())
    {
        // Whole floats up to 2^53, where every integer is still exact.
        const double d = v.get<double>();
        if (std::isfinite(d) && d >= 0 && d == std::floor(d) && d <= 9007199254740992.0)
        {
            return uint64_t(d);
        }
    }
    return std::nullopt;
}

uint64_t
JsonObject::ToUint(
    const json& v, const std::string& file, const std::string& field, uint64_t min, uint64_t max)
{
    const std::optional<uint64_t> x = AsUint(v);
    if (!x || *x < min || *x > max)
    {
        throw InputError(file, field, RangeText(min, max), DescribeJson(v));
    }
    return *x;
}

int64_t
JsonObject::ToInt(
    const json& v, const std::string& file, const std::string& field, int64_t min, int64_t max)
{
    int64_t x = 0;
    bool ok = false;
    if (v.is_number_unsigned())
    {
        ok = v.get<uint64_t>() <= uint64_t(INT64_MAX);
        x = ok ? int64_t(v.get<uint64_t>()) : 0;
    }
    else if (v.is_number_integer())
    {
        x = v.get<int64_t>();
        ok = true;
    }
    else if (v.is_number_float())
    {
        const double d = v.get<double>();
        ok = std::isfinite(d) && d == std::floor(d) && std::fabs(d) <= 9007199254740992.0;
        x = ok ? int64_t(d) : 0;
    }
    if (!ok || x < min || x > max)
    {
        throw InputError(file,
                         field,
                         "an integer from " + std::to_string(min) + " to " + std::to_string(max),
                         DescribeJson(v));
    }
    return x;
}

double
JsonObject::ToNumber(
    const json& v, const std::string& file, const std::string& field, double lo, double hi)
{
    if (!v.is_number() || !std::isfinite(v.get<double>()) || !(v.get<double>() >= lo)
        || !(v.get<double>() <= hi))
    {
        std::ostringstream e;
        e << "a number in [" << lo << ", " << hi << "]";
        throw InputError(file, field, e.str(), DescribeJson(v));
    }
    return v.get<double>();
}

uint64_t
JsonObject::Uint(const std::string& key, uint64_t min, uint64_t max) const
{
    return ToUint(Require(key, RangeText(min, max)), m_file, Field(key), min, max);
}

uint64_t
JsonObject::OptionalUint(const std::string& key, uint64_t def, uint64_t min, uint64_t max) const
{
    const json* v = Find(key);
    return v ? ToUint(*v, m_file, Field(key), min, max) : def;
}

int64_t
JsonObject::Int(const std::string& key, int64_t min, int64_t max) const
{
    return ToInt(Require(key, "an integer"), m_file, Field(key), min, max);
}

int64_t
JsonObject::OptionalInt(const std::string& key, int64_t def, int64_t min, int64_t max) const
{
    const json* v = Find(key);
    return v ? ToInt(*v, m_file, Field(key), min, max) : def;
}

const json&
JsonObject::Array(const std::string& key) const
{
    const json& v = Require(key, "an array");
    if (!v.is_array())
    {
        Fail(key, "an array", DescribeJson(v));
    }
    return v;
}

std::vector<uint64_t>
JsonObject::UintArray(const std::string& key, bool required, uint64_t min, uint64_t max) const
{
    std::vector<uint64_t> out;
    if (!required && !Has(key))
    {
        return out;
    }
    const json& a = Array(key);
    for (size_t i = 0; i < a.size(); ++i)
    {
        out.push_back(ToUint(a[i], m_file, JsonIndex(Field(key), i), min, max));
    }
    return out;
}

double
JsonObject::Number(const std::string& key, double lo, double hi) const
{
    return ToNumber(Require(key, "a number"), m_file, Field(key), lo, hi);
}

double
JsonObject::OptionalNumber(const std::string& key, double def, double lo, double hi) const
{
    const json* v = Find(key);
    return v ? ToNumber(*v, m_file, Field(key), lo, hi) : def;
}

double
JsonObject::Quantity(const std::string& key, UnitKind kind, bool allowZero) const
{
    return ReadQuantity(Require(key, UnitHint(kind)), kind, m_file, Field(key), allowZero);
}

double
JsonObject::OptionalQuantity(const std::string& key,
                             UnitKind kind,
                             double def,
                             bool allowZero) const
{
    const json* v = Find(key);
    return v ? ReadQuantity(*v, kind, m_file, Field(key), allowZero) : def;
}

bool
JsonObject::Bool(const std::string& key) const
{
    const json& v = Require(key, "true or false");
    if (!v.is_boolean())
    {
        Fail(key, "true or false", DescribeJson(v));
    }
    return v.get<bool>();
}

bool
JsonObject::OptionalBool(const std::string& key, bool def) const
{
    return Has(key) ? Bool(key) : def;
}

std::string
JsonObject::String(const std::string& key) const
{
    const json& v = Require(key, "a string");
    if (!v.is_string())
    {
        Fail(key, "a string", DescribeJson(v));
    }
    return v.get<std::string>();
}

std::string
JsonObject::OptionalString(const std::string& key, const std::string& def) const
{
    return Has(key) ? String(key) : def;
}

} // namespace fabricsim
