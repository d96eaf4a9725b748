#include "input-error.h"

namespace fabricsim
{

InputError::~InputError() = default;

std::string
InputError::Format(const std::string& file,
                   const std::string& field,
                   const std::string& expected,
                   const std::string& found)
{
    std::string s = (file.empty() ? std::string("<input>") : file);
    if (!field.empty())
    {
        s += ": field '" + field + "'";
    }
    s += ": expected " + expected;
    if (!found.empty())
    {
        s += ", found " + found;
    }
    return s;
}

} // namespace fabricsim
