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
