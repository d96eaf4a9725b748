/*
 * ns-3's distributed engine for one run across MPI ranks (the MPI build, FABRICSIM_MPI): which
 * kernel, starting and stopping MPI around a run, and the rank of this process.
 */
#ifndef FABRICSIM_DISTRIBUTED_ENGINE_H
#define FABRICSIM_DISTRIBUTED_ENGINE_H

#include <cstdint>
#include <string>
#include <vector>

namespace fabricsim
{

/// ns-3's two distributed kernels, by their TypeId names: granted time windows (the default)
/// and null messages.
const std::vector<std::string>& DistributedKernels();

/**
 * Starts MPI and selects \p kernel (one of DistributedKernels()) as ns-3's simulator engine for
 * this process; call before anything touches ns3::Simulator. Returns false (MPI started all the
 * same, so that the caller can report and stop) when \p kernel is not one of them.
 */
bool StartDistributedEngine(int* argc, char*** argv, const std::string& kernel);

/// This process's rank and the number of ranks (after StartDistributedEngine).
uint32_t DistributedRank();
uint32_t DistributedRanks();

/// Ends MPI for this process (MPI_Finalize); the last call of a distributed run.
void StopDistributedEngine();

} // namespace fabricsim

#endif
