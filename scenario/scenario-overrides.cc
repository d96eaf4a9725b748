// --set overrides and the scenario file read before them (docs/scenario.md: every JSON input
// is read by one layer, with the field paths --set uses).
#include "fabric-scenario.h"
#include "file-reader.h"
#include "input-error.h"
#include "json-describe.h"
#include "json-reader.h"

#include <sstream>

namespace fabricsim
{

using nlohmann::json;

void
ApplySet(json& doc, const std::string& assignment, const std::string& file)
{
    auto eq = assignment.find('=');
    if (eq == std::string::npos || eq == 0)
    {
        throw InputError(file, "--set", "key.path=value", "\"" + assignment + "\"");
    }
    std::string path = assignment.substr(0, eq);
    std::string text = assignment.substr(eq + 1);
    json value;
    try
    {
        value = ParseJson(text, file, "--set " + path);
    }
    catch (const InputError& e)
    {
        if (e.Expected() != "valid JSON")
        {
            throw; // JSON, but with a key twice or nested too deep
        }
        value = text; // bare words are strings: --set transport.cc=hpcc
    }
    json* cur = &doc;
    std::stringstream ss(path);
    std::string part;
    std::vector<std::string> parts;
    while (std::getline(ss, part, '.'))
    {
        parts.push_back(part);
    }
    for (size_t i = 0; i < parts.size(); ++i)
    {
        const std::string& k = parts[i];
        if (k.empty())
        {
            throw InputError(file, "--set " + path, "a dotted key path", "an empty component");
        }
        bool last = i + 1 == parts.size();
        if (cur->is_array())
        {
            size_t idx = 0;
            try
            {
                idx = std::stoul(k);
            }
            catch (...)
            {
                throw InputError(
                    file, "--set " + path, "an array index at '" + k + "'", "\"" + k + "\"");
            }
            if (idx >= cur->size())
            {
                throw InputError(
                    file, "--set " + path, "an index < " + std::to_string(cur->size()), k);
            }
            cur = &(*cur)[idx];
        }
        else
        {
            if (!cur->is_object() && !cur->is_null())
            {
                throw InputError(
                    file, "--set " + path, "an object at '" + k + "'", DescribeJson(*cur));
            }
            cur = &(*cur)[k];
        }
        if (last)
        {
            *cur = value;
        }
    }
}

json
LoadScenarioJson(const std::string& path, const std::vector<std::string>& sets)
{
    json doc = ParseJson(ReadFileBounded(path, "scenario file"), path);
    if (!doc.is_object())
    {
        throw InputError(path, "", "a JSON object at the top level", DescribeJson(doc));
    }
    for (auto& s : sets)
    {
        ApplySet(doc, s, path);
    }
    return doc;
}

} // namespace fabricsim
