/*
 * Entry points of the algorithm families and the ring phases they share. Internal to the
 * generators: callers use GenerateSchedule (generators.h), which checks the options first.
 */
#ifndef FABRICSIM_GENERATOR_ALGORITHMS_H
#define FABRICSIM_GENERATOR_ALGORITHMS_H

#include "generator-builder.h"
#include "generators.h"

#include <functional>
#include <string>
#include <vector>

namespace fabricsim
{
namespace gen
{

/// x mod n in [0, n).
inline int
Mod(int x, int n)
{
    return ((x % n) + n) % n;
}

/// "ring_allreduce" and the like.
std::string ScheduleName(const std::string& algorithm, CollectiveKind kind);

/// The data split the options ask for.
inline Split
SplitOf(const GeneratorOptions& opt)
{
    return Split{opt.channels, opt.chunksPerRank};
}

/// Where block g of a phase lives (the same offsets on every rank of the phase).
using LocOf = std::function<Loc(int block)>;

/**
 * Ring reduce-scatter over \p ring (global ranks in ring order) on \p channel: the rank at
 * position g ends with block g reduced over the ring, stored at \p result(g). Each block is
 * \p count contiguous chunks; a rank's own contribution to block g is at \p contrib(g).
 */
void RingReduceScatter(ScheduleBuilder& b,
                       const std::vector<int>& ring,
                       int channel,
                       int count,
                       const LocOf& contrib,
                       const LocOf& result);

/**
 * Ring allgather: the rank at position g owns block g at \p own(g); every rank ends with every
 * block g at \p dst(g) (the owner copies its block there when the places differ).
 */
void RingAllGather(ScheduleBuilder& b,
                   const std::vector<int>& ring,
                   int channel,
                   int count,
                   const LocOf& own,
                   const LocOf& dst);

/// Ring allreduce (reduce-scatter, then allgather, fused at the turn as NCCL does).
void RingAllReduce(ScheduleBuilder& b,
                   const std::vector<int>& ring,
                   int channel,
                   int count,
                   const LocOf& contrib,
                   const LocOf& result);

/// Family generators. Options are checked by GenerateSchedule; ranks >= 2.
Schedule GenerateRing(CollectiveKind kind, int ranks, const GeneratorOptions& opt);
Schedule GenerateTree(CollectiveKind kind, int ranks, const GeneratorOptions& opt);
Schedule GenerateRecursiveDoubling(CollectiveKind kind, int ranks, const GeneratorOptions& opt);
Schedule GenerateHalvingDoubling(CollectiveKind kind, int ranks, const GeneratorOptions& opt);
Schedule GenerateDirect(CollectiveKind kind, int ranks, const GeneratorOptions& opt);
Schedule GeneratePairwise(CollectiveKind kind, int ranks, const GeneratorOptions& opt);
Schedule GenerateBruck(CollectiveKind kind, int ranks, const GeneratorOptions& opt);
Schedule GenerateHierarchical(CollectiveKind kind, int ranks, const GeneratorOptions& opt);

} // namespace gen
} // namespace fabricsim

#endif
