#include "text-file.h"

#include "input-error.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace fabricsim
{

std::string
ReadTextFile(const std::string& path)
{
    struct stat st;
    if (stat(path.c_str(), &st) != 0)
    {
        throw fabricsim::InputError(path, "", "a readable file", std::strerror(errno));
    }
    if (S_ISDIR(st.st_mode))
    {
        throw fabricsim::InputError(path, "", "a readable file", "a directory");
    }
    std::ifstream in(path, std::ios::binary);
    if (!in)
    {
        throw fabricsim::InputError(path, "", "a readable file", std::strerror(errno));
    }
    std::ostringstream ss;
    ss << in.rdbuf();
    if (in.bad())
    {
        throw fabricsim::InputError(path, "", "a readable file", "a read error");
    }
    return ss.str();
}

void
WriteTextFileAtomic(const std::string& path, const std::string& content)
{
    const std::string tmp = path + ".tmp";
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out)
        {
            throw std::runtime_error("cannot write " + tmp + ": " + std::strerror(errno));
        }
        out << content;
        out.flush();
        if (!out)
        {
            std::remove(tmp.c_str());
            throw std::runtime_error("cannot write " + tmp + ": " + std::strerror(errno));
        }
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0)
    {
        const std::string reason = std::strerror(errno);
        std::remove(tmp.c_str());
        throw std::runtime_error("cannot rename " + tmp + " to " + path + ": " + reason);
    }
}

} // namespace fabricsim
