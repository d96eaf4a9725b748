/*
 * Internal helpers shared by the topology builders: the link objects every builder reads and
 * the builders themselves, all over the common JSON layer (json-reader.h). Not installed;
 * builders include it directly.
 */
#ifndef FABRICSIM_TOPOLOGY_JSON_H
#define FABRICSIM_TOPOLOGY_JSON_H

#include "json-describe.h"
#include "json-reader.h"
#include "topology.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace fabricsim
{

/**
 * Parse a link object {"rate", "delay", "loss_rate"} where every key is optional and falls
 * back to `deflt`.
 */
LinkSpec ParseLinkSpec(const JsonObject& link, const LinkSpec& deflt);

/// The link specs every builder accepts: "host_link" and "fabric_link".
struct CommonLinks
{
    LinkSpec host;   ///< host (endpoint) to first switch
    LinkSpec fabric; ///< switch to switch
};

/// Parse "host_link" (default 100 Gbps, 1 us, loss 0) and "fabric_link" (default: host_link).
CommonLinks ParseCommonLinks(const JsonObject& spec);

/// The keys every builder accepts, followed by `extra`.
std::vector<std::string> CommonKeys(std::vector<std::string> extra);

// Builders: `spec` is the "topology" object; each checks its keys.
Topology BuildSingleSwitch(const JsonObject& spec);
Topology BuildRing(const JsonObject& spec);
Topology BuildLeafSpine(const JsonObject& spec);
Topology BuildFatTree(const JsonObject& spec);
Topology BuildRailOptimized(const JsonObject& spec);
Topology BuildTorus(const JsonObject& spec);
Topology BuildDragonfly(const JsonObject& spec);
Topology BuildCustom(const JsonObject& spec);

} // namespace fabricsim

#endif
