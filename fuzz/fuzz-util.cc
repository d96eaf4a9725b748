#include "fuzz-targets.h"

#include <unistd.h>

#include <fstream>

namespace fabricsim
{

std::string
FuzzScratchFile(const uint8_t* data, size_t size, const std::string& suffix)
{
    const std::string path = "/tmp/fabricsim-fuzz-" + std::to_string(::getpid()) + suffix;
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), std::streamsize(size));
    return path;
}

} // namespace fabricsim
