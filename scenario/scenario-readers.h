/*
 * One reader per block of a fabric scenario (docs/scenario.md), called by ParseFabricScenario
 * in the order the blocks depend on each other: topology, transport, switch, traffic (flow sizes
 * are checked against the topology's rates and the transport's MTU), link events, pcap,
 * monitor, deadlock (its default follows the switch's watchdog), routes. Each checks every key
 * and value of its block and throws fabricsim::InputError naming the file and field.
 */
#ifndef FABRICSIM_SCENARIO_READERS_H
#define FABRICSIM_SCENARIO_READERS_H

#include "fabric-scenario.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace fabricsim
{

/// "transport" into \p spec (transport-reader.cc).
void ReadTransport(const nlohmann::json& t, const std::string& file, TransportSpec& spec);

/// "switch" into \p spec (switch-reader.cc).
void ReadSwitch(const nlohmann::json& s, const std::string& file, SwitchSpec& spec);

/// "traffic" into sc.flows, sc.poisson and sc.incasts; sc's file, dir, topology and transport
/// must be read already (traffic-reader.cc).
void ReadTraffic(const nlohmann::json& t, FabricScenario& sc);

/// "link_events" into sc.linkEvents (monitor-reader.cc).
void ReadLinkEvents(const nlohmann::json& le, FabricScenario& sc);

/// "pcap" into sc.pcapHosts and sc.pcapSwitches (monitor-reader.cc).
void ReadPcap(const nlohmann::json& pc, FabricScenario& sc);

/// "monitor" into \p spec (monitor-reader.cc).
void ReadMonitor(const nlohmann::json& m, const std::string& file, MonitorSpec& spec);

/// "deadlock" (nullptr when absent) into \p spec: its default on_detect is "report" when
/// \p watchdog resolves deadlocks itself (monitor-reader.cc).
void ReadDeadlock(const nlohmann::json* d,
                  const PfcWatchdogSpec& watchdog,
                  const std::string& file,
                  DeadlockSpec& spec);

/// "routes": forced next hops, refused when they loop (routes-reader.cc).
std::vector<RouteOverride> ReadRoutes(const nlohmann::json& routes,
                                      const Topology& topo,
                                      const std::string& file);

} // namespace fabricsim

#endif
