/*
 * Placement of a pool's ranks on topology hosts, and its split into engines.
 */
#ifndef FABRICSIM_SERVING_RANK_PLACEMENT_H
#define FABRICSIM_SERVING_RANK_PLACEMENT_H

#include "inference-scenario.h"
#include "step-program-builder.h"
#include "topology.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fabricsim
{

/**
 * \brief Hosts of the ranks of \p pool, pool rank i = (group x pp + stage) x tp + tpRank:
 * the pool's explicit list, else first + i (scale_up: TP groups on consecutive hosts, which a
 * rail-optimised topology puts in one server), else first + tpRank x accels_per_server + i / tp
 * (across_servers: each TP rank on another server). InputError naming \p field when the rule
 * runs out of servers or hosts.
 */
std::vector<uint32_t> PoolHosts(const PoolSpec& pool,
                                const PlacementSpec& placement,
                                const std::string& file,
                                const std::string& field);

/**
 * \brief Split a pool into engines: one per EP group with dp_attention (ep / tp attention groups
 * in lock step), else one per attention group (tp x pp ranks, dp replicas).
 */
std::vector<EngineLayout> SplitEngines(const PoolSpec& pool, const std::vector<uint32_t>& hosts);

/**
 * \brief InputError naming `topology.scale_up` when a pool's TP group has two ranks on
 * accelerators of one server (hosts of one group of \p topo) that no scale-up switch joins while
 * the hardware has a scale-up link: its all-reduces would cross the NICs without a word. A
 * topology that says `"scale_up": "none"` (Topology::scaleUpDeclined) asks for exactly that.
 */
void CheckTensorParallelScaleUp(const InferenceScenario& sc, const Topology& topo);

} // namespace fabricsim

#endif
