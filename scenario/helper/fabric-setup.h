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

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace fabricsim
{

/// Seed, scheduler and attribute defaults. `ns3Args` are "--ns3::Type::Attr=value" strings.
void ConfigureSimulator(const FabricScenario& sc, const std::vector<std::string>& ns3Args);

/// The event scheduler runs use: ns3::FabricScheduler, or ns-3's SchedulerType global value
/// when the user set it to anything but ns-3's own default, ns3::MapScheduler (fabricsim's
/// --SchedulerType=NAME, or GlobalValue::Bind in a program).
ns3::ObjectFactory SchedulerFactory();

/// The largest seed ns-3's MRG32k3a accepts (its second modulus less one).
constexpr uint64_t kNs3MaxSeed = 4294944442ULL;

/// ns-3's (seed, run) for a scenario seed: every 64-bit seed its own pair. Seeds up to
/// kNs3MaxSeed are ns-3's seed itself with run 1 (as always); past it, with p = s - kNs3MaxSeed
/// - 1, seed = p mod kNs3MaxSeed + 1 and run = p / kNs3MaxSeed + 2, since ns-3's seed is never 0
/// nor past kNs3MaxSeed.
std::pair<uint32_t, uint64_t> Ns3SeedAndRun(uint64_t seed);

/// Build and install the fabric described by the scenario; \p systemIds, when given, is each
/// node's MPI rank (a run across ranks).
std::unique_ptr<ns3::FabricTopologyHelper> InstallFabric(const FabricScenario& sc,
                                                         const std::vector<uint32_t>& systemIds
                                                         = {});

/// Congestion-control factory for a scenario name; InputError naming `field` if unknown.
ns3::ObjectFactory CcFactory(const std::string& name,
                             const std::string& file,
                             const std::string& field);

} // namespace fabricsim

#endif
