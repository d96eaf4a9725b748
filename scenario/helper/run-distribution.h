/*
 * What a `run` across MPI ranks adds to the run of one process (docs/performance.md, "One run
 * across ranks"): the rank of every node, the cut links and the end-of-run notices wired through
 * ns-3's MPI interface, and the ranks' shares of the outputs gathered to rank 0, which writes
 * them. The MPI build implements it (scenario/mpi/run-across-ranks); fabricsim-mpi makes its
 * implementation the active one before it runs the command line.
 */
#ifndef FABRICSIM_RUN_DISTRIBUTION_H
#define FABRICSIM_RUN_DISTRIBUTION_H

#include "fabric-scenario.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{
class DeadlockDetector;
class FabricTopologyHelper;
class Time;
} // namespace ns3

namespace fabricsim
{

class RunEnd;

class RunDistribution
{
  public:
    virtual ~RunDistribution() = default;

    virtual uint32_t Rank() const = 0;
    virtual uint32_t Ranks() const = 0;

    /// Each node's rank (topology ids); InputError naming the partition or the scenario when
    /// the fabric cannot be cut so (or the scenario asks for what runs across ranks lack).
    virtual std::vector<uint32_t> Partition(const FabricScenario& sc) = 0;

    /// After the fabric is installed with those ranks: wires the cut links and the notices of
    /// \p end (RunEnd::SetBroadcast; a notice arrives as RunEnd::Heard).
    virtual void Connect(ns3::FabricTopologyHelper& fabric, RunEnd& end) = 0;

    /// After Connect: each check of \p detector decided on every rank's snapshot, \p delay
    /// after it was taken (DeadlockDetector::SetDecision), the snapshots sent as notices are.
    virtual void ConnectDetector(ns3::DeadlockDetector& detector, ns3::Time delay) = 0;

    /// Every rank's \p mine, in rank order, on rank 0; empty on the others. Collective.
    virtual std::vector<std::string> Gather(const std::string& mine) = 0;
};

/// The distribution `run` uses (null: one process, the default).
RunDistribution* ActiveRunDistribution();
void SetActiveRunDistribution(RunDistribution* distribution);

} // namespace fabricsim

#endif
