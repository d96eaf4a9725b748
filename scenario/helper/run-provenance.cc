#include "run-provenance.h"

#include "provenance.h"

namespace fabricsim
{

std::string
ProvenanceText(const nlohmann::json& scenario, const std::vector<std::string>& ns3Args)
{
    return ProvenanceJson(scenario, ns3Args, FABRICSIM_SOURCE_DIR).dump(2) + "\n";
}

} // namespace fabricsim
