/*
 * Turns a parsed scenario into an installed ns-3 fabric: simulator settings (picosecond time,
 * seed, scheduler), attribute defaults from the scenario and then from --ns3:: command-line
 * overrides (which win), and the topology helper with NICs, switches and routes.
 */
#ifndef FABRICSIM_FABRIC_SETUP_H
#define FABRICSIM_FABRIC_SETUP_H

#include "fabric-scenario.h"

#include "ns3/fabric-topology-helper.h"
#include "ns3/object-factory.h"

#include <memory>
#include <string>
#include <vector>

namespace fabricsim
{

/// Seed, scheduler and attribute defaults. `ns3Args` are "--ns3::Type::Attr=value" strings.
void ConfigureSimulator(const FabricScenario& sc, const std::vector<std::string>& ns3Args);

/// Build and install the fabric described by the scenario.
std::unique_ptr<ns3::FabricTopologyHelper> InstallFabric(const FabricScenario& sc);

/// Congestion-control factory for a scenario name; InputError naming `field` if unknown.
ns3::ObjectFactory CcFactory(const std::string& name,
                             const std::string& file,
                             const std::string& field);

} // namespace fabricsim

#endif
