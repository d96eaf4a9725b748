/*
 * Internal helpers shared by the topology builders: typed access to JSON keys with errors that
 * name file and field. Not installed; builders include it directly.
 */
#ifndef FABRICSIM_TOPOLOGY_JSON_H
#define FABRICSIM_TOPOLOGY_JSON_H

#include "json-describe.h"
#include "topology.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace fabricsim
{

/**
 * Reject keys of `spec` not in `valid`.
 * \param prefix the field path of `spec` ("topology", "topology.nodes[2]")
 */
void CheckKeys(const nlohmann::json& spec,
               const std::string& file,
               const std::string& prefix,
               const std::vector<std::string>& valid);

/// Require `spec` to be a JSON object.
void RequireObject(const nlohmann::json& spec, const std::string& file, const std::string& field);

/**
 * Required (or, with `deflt`, optional) unsigned integer key in [minValue, maxValue].
 * \param deflt value used when the key is absent; negative means the key is required
 */
uint32_t GetUint(const nlohmann::json& spec,
                 const std::string& file,
                 const std::string& prefix,
                 const std::string& key,
                 uint32_t minValue,
                 uint32_t maxValue = 1000000,
                 int64_t deflt = -1);

/**
 * Parse a link object {"rate", "delay", "loss_rate"} where every key is optional and falls
 * back to `deflt`. An absent object gives `deflt`.
 */
LinkSpec ParseLinkSpec(const nlohmann::json& spec,
                       const std::string& file,
                       const std::string& field,
                       const LinkSpec& deflt);

/// The link specs every builder accepts: "host_link" and "fabric_link".
struct CommonLinks
{
    LinkSpec host;   ///< host (endpoint) to first switch
    LinkSpec fabric; ///< switch to switch
};

/// Parse "host_link" (default 100 Gbps, 1 us, loss 0) and "fabric_link" (default: host_link).
CommonLinks ParseCommonLinks(const nlohmann::json& spec, const std::string& file);

/// The keys every builder accepts, followed by `extra`.
std::vector<std::string> CommonKeys(std::vector<std::string> extra);

// Builders: `spec` is the "topology" object with its keys already checked by the builder.
Topology BuildSingleSwitch(const nlohmann::json& spec, const std::string& file);
Topology BuildRing(const nlohmann::json& spec, const std::string& file);
Topology BuildLeafSpine(const nlohmann::json& spec, const std::string& file);
Topology BuildFatTree(const nlohmann::json& spec, const std::string& file);
Topology BuildRailOptimized(const nlohmann::json& spec, const std::string& file);
Topology BuildTorus(const nlohmann::json& spec, const std::string& file);
Topology BuildDragonfly(const nlohmann::json& spec, const std::string& file);
Topology BuildCustom(const nlohmann::json& spec, const std::string& file);

} // namespace fabricsim

#endif
