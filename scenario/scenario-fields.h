/*
 * Field readers the scenario's block readers share: byte counts with units, host indexes and
 * lists, paths relative to the scenario file, and the limits on a flow's size and a traffic
 * window's end. Each throws fabricsim::InputError naming the file and field.
 */
#ifndef FABRICSIM_SCENARIO_FIELDS_H
#define FABRICSIM_SCENARIO_FIELDS_H

#include "fabric-scenario.h"
#include "json-reader.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace fabricsim
{

/// Byte sizes: integers, or strings with units ("100KB", "1MiB": common/units).
uint64_t GetBytes(const JsonObject& o, const std::string& key, uint64_t def);

/**
 * Flow sizes the model carries: its packets number within the NIC's 32-bit PSN space at the
 * scenario's MTU, and sending it over the slowest link takes at most half of ns-3's clock (106
 * days; the other half leaves room for headers, queueing and the start time). Topology and
 * transport are read before traffic, so both are known here. \p found replaces the size in the
 * message when given.
 */
void CheckFlowSize(const FabricScenario& sc,
                   uint64_t bytes,
                   const std::string& file,
                   const std::string& field,
                   const std::string& found = "");

/// Arrivals of a window fall before start + duration, which must still be a time ns-3 holds.
void CheckWindowEnd(uint64_t startNs,
                    uint64_t durationNs,
                    const std::string& file,
                    const std::string& path);

/// A host index of \p topo.
uint32_t GetHost(const nlohmann::json& v,
                 const Topology& topo,
                 const std::string& file,
                 const std::string& field);

/// An array of host indexes under \p key (empty when absent).
std::vector<uint32_t> GetHostList(const JsonObject& o,
                                  const Topology& topo,
                                  const std::string& key);

/// \p p relative to the scenario's directory \p dir (absolute paths as they are).
std::string Resolve(const std::string& dir, const std::string& p);

} // namespace fabricsim

#endif
