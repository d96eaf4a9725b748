#include "json-read.h"

#include "file-reader.h"
#include "json-reader.h"

#include <cctype>
#include <cmath>

namespace fabricsim
{

using nlohmann::json;

json
LoadJsonFile(const std::string& path)
{
    return ParseJson(ReadFileBounded(path, "JSON file"), path);
}

std::string
DirOf(const std::string& file)
{
    auto slash = file.rfind('/');
    return slash == std::string::npos ? "" : file.substr(0, slash + 1);
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
