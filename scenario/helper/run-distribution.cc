#include "run-distribution.h"

namespace fabricsim
{

namespace
{
RunDistribution* g_active = nullptr;
} // namespace

RunDistribution*
ActiveRunDistribution()
{
    return g_active;
}

void
SetActiveRunDistribution(RunDistribution* distribution)
{
    g_active = distribution;
}

} // namespace fabricsim
