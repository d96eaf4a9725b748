#include "fuzz-targets.h"
#include "request-source.h"

#include <sstream>

namespace fabricsim
{

int
FuzzRequestTrace(const uint8_t* data, size_t size)
{
    return FuzzGuard(
        [&]()
        {
            const bool jsonl = size > 0 && data[0] == '{';
            LoadRequestTrace(
                FuzzScratchFile(data, size, jsonl ? "-requests.jsonl" : "-requests.csv"));
        });
}

} // namespace fabricsim
