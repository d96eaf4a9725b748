/*
 * The collectives fabricsim knows (MSCCL's `coll`) and their names. Apart from the schedule
 * IR, so that the Collective API and the serving layer's ops name a collective without the
 * whole IR.
 */
#ifndef FABRICSIM_COLLECTIVE_KIND_H
#define FABRICSIM_COLLECTIVE_KIND_H

#include <optional>
#include <string>

namespace fabricsim
{

/// Collective a schedule implements (MSCCL `coll`).
enum class CollectiveKind
{
    kAllReduce,
    kAllGather,
    kReduceScatter,
    kAllToAll,
    kBroadcast,
    kReduce,
    kCustom ///< no built-in post-condition
};

/// Canonical lower-case name: allreduce, allgather, reducescatter, alltoall, broadcast,
/// reduce, custom.
std::string ToString(CollectiveKind kind);
/// Parses a collective name; accepts MSCCL spellings (reduce_scatter and reducescatter,
/// all_reduce, all-to-all, ...), case-insensitive. nullopt when unknown.
std::optional<CollectiveKind> ParseCollectiveKind(const std::string& name);
} // namespace fabricsim

#endif
