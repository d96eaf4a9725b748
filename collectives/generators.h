/*
 * Schedule generators: the classic and NCCL algorithms as schedule IR programs that the
 * validator proves correct and the executor runs.
 */
#ifndef FABRICSIM_GENERATORS_H
#define FABRICSIM_GENERATORS_H

#include "schedule-ir.h"

#include <string>
#include <vector>

namespace fabricsim
{

struct GeneratorOptions
{
    int channels = 1;      ///< parallel channels (each its own threadblocks / QPs)
    int chunksPerRank = 1; ///< pipelining: split each rank's share into this many chunks
    uint32_t root = 0;     ///< broadcast / reduce
    /// hierarchical algorithms: ranks per scale-up domain (e.g. 8 GPUs per host); ranks are
    /// numbered host-major (rank = host * localSize + local).
    int localSize = 0;
    Protocol protocol = Protocol::kSimple;
};

/**
 * Generate `algorithm` for collective `kind` on `ranks` ranks.
 * Algorithms: "ring", "tree" (double binary tree), "rhd" (recursive halving-doubling),
 * "rd" (recursive doubling), "direct", "pairwise", "bruck", "hierarchical".
 * \throws fabricsim::InputError when the algorithm does not exist, does not support the collective,
 * or cannot handle this rank count (message names the constraint)
 *
 * The schedule passes ValidateSchedule for `kind` both in place and out of place (it declares
 * both; pairwise alltoall is out of place only), has its has_dep flags set, and is the same for
 * the same request. Every algorithm handles every rank count (recursive doubling and
 * halving-doubling fold the ranks beyond the largest power of two). Algorithms, chunk counts
 * and costs: docs/schedule-ir.md, "Algorithms".
 */
Schedule GenerateSchedule(CollectiveKind kind,
                          const std::string& algorithm,
                          int ranks,
                          const GeneratorOptions& opt = {});

/// Algorithms that support `kind` (for help texts and error messages).
std::vector<std::string> AlgorithmsFor(CollectiveKind kind);

/// A rooted tree over ranks 0..n-1.
struct RankTree
{
    int m_root = 0;
    std::vector<int> m_parent;                ///< -1 at the root
    std::vector<std::vector<int>> m_children; ///< at most two per rank, in order
};

/**
 * Tree \p which (0 or 1) of NCCL's double binary tree on \p ranks ranks. Tree 0 is the
 * balanced binary tree in which a rank's level is its lowest set bit (rank 0 is the root with
 * one child, odd ranks are leaves); tree 1 is its mirror (rank -> n-1-rank) when n is even and
 * tree 0 shifted by one rank when n is odd, so each rank is interior in at most one of the two
 * (when n is odd, one rank is interior in both).
 */
RankTree DoubleBinaryTree(int ranks, int which);

} // namespace fabricsim

#endif
