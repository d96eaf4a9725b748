/*
 * A topology cut into MPI ranks for ns-3's distributed engine: which rank simulates each node.
 * Every rank builds the whole topology and simulates the nodes given to it; frames cross ranks
 * on the links the cut crosses, and the smallest delay among those is the engine's lookahead.
 * Pure C++ (no ns-3).
 */
#ifndef FABRICSIM_PARTITION_H
#define FABRICSIM_PARTITION_H

#include "topology.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fabricsim
{

struct Partition
{
    uint32_t ranks = 1;
    std::vector<uint32_t> rankOf; ///< node id -> rank
    std::vector<double> load;     ///< rank -> summed node weight (ports plus one per node)
    uint32_t cutLinks = 0;        ///< links whose ends are on different ranks
    uint64_t lookaheadPs = 0;     ///< smallest delay of a cut link (0: none is cut)
};

/**
 * \brief Cuts \p topo into \p ranks, keeping together what the fabric keeps together: first
 * along the links of the largest delay when they split the fabric into at least \p ranks parts;
 * otherwise by tiers: the switches of the top tier are taken out, what stays connected (the pods
 * of a fat-tree, a leaf and its hosts, a server and its scale-up switch) is a unit, going one
 * tier down until there are at least \p ranks units. Units go to ranks largest first, each to the
 * least loaded; the switches taken out are spread the same way. Scale-up switches stay with
 * their servers. Deterministic.
 * \throws InputError (file, "--partition") when \p ranks exceeds what can be separated (more
 *         ranks than servers)
 */
Partition AutoPartition(const Topology& topo, uint32_t ranks, const std::string& file);

/**
 * \brief A partition from a JSON object naming every node's rank ({"host0": 0, "tor0": 1, ...}),
 * as read from \p file.
 * \throws InputError naming the file and node for an unknown or missing node name or a rank that
 *         is not an integer below \p ranks
 */
Partition PartitionFromJson(const nlohmann::json& doc,
                            const Topology& topo,
                            uint32_t ranks,
                            const std::string& file);

/// Fills load, cutLinks and lookaheadPs of \p p from its rankOf.
void DescribePartition(const Topology& topo, Partition& p);

} // namespace fabricsim

#endif
