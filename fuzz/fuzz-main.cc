// libFuzzer entry of one target; FABRICSIM_FUZZ_TARGET names its function (see fuzz-targets.h).
#include "fuzz-targets.h"

extern "C" int
LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    return fabricsim::FABRICSIM_FUZZ_TARGET(data, size);
}
