/*
 * A fabric scenario's traffic as flows: its explicit flows and flow files, Poisson arrivals from
 * a flow-size CDF, and incasts, refused before anything is built when they would not fit the
 * memory limit.
 */
#ifndef FABRICSIM_TRAFFIC_EXPANSION_H
#define FABRICSIM_TRAFFIC_EXPANSION_H

#include "fabric-scenario.h"

#include "ns3/fabric-topology-helper.h"

#include <vector>

namespace fabricsim
{

/// Expand the scenario's generated traffic into flows (deterministic for a seed).
std::vector<FlowSpec> ExpandTraffic(const FabricScenario& sc,
                                    const ns3::FabricTopologyHelper& fabric);

} // namespace fabricsim

#endif
