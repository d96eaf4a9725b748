#include "text-file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace fabricsim
{

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
