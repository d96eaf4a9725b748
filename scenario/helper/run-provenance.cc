#include "run-provenance.h"

#include "fabric-setup.h"
#include "provenance.h"

#include "ns3/global-value.h"
#include "ns3/string.h"

namespace fabricsim
{

std::string
ProvenanceText(const nlohmann::json& scenario, const std::vector<std::string>& ns3Args)
{
    nlohmann::json j = ProvenanceJson(scenario, ns3Args, FABRICSIM_SOURCE_DIR);
    // The engine the process runs on (fabricsim-mpi: ns-3's distributed one) and its event
    // scheduler (--SchedulerType).
    ns3::StringValue simulator;
    ns3::GlobalValue::GetValueByName("SimulatorImplementationType", simulator);
    j["ns3_engine"]
        = {{"simulator", simulator.Get()}, {"scheduler", SchedulerFactory().GetTypeId().GetName()}};
    return j.dump(2) + "\n";
}

} // namespace fabricsim
