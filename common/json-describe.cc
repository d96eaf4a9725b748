#include "json-describe.h"

namespace fabricsim
{

std::string
DescribeJson(const nlohmann::json& value)
{
    // Bytes from text files or --set may not be UTF-8; a report must not throw on them.
    std::string s = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    if (s.size() > 60)
    {
        s = s.substr(0, 57) + "...";
    }
    return s;
}

} // namespace fabricsim
