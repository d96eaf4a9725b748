/*
 * `fabricsim-mpi run` across MPI ranks: the RunDistribution of ns-3's distributed engine. Each
 * rank builds the whole fabric and simulates the nodes the partition gives it (`--partition
 * auto` or a file naming each node's rank); cut links carry frames through ns-3's MpiInterface
 * (remote-links); each rank's end-of-run notice travels the same way to a control device on one
 * node of every other rank; the outputs' shares are gathered to rank 0 with MPI_Gatherv.
 */
#ifndef FABRICSIM_RUN_ACROSS_RANKS_H
#define FABRICSIM_RUN_ACROSS_RANKS_H

#include "control-channel.h"
#include "partition.h"
#include "remote-links.h"

#include "ns3/run-distribution.h"

#include <memory>
#include <string>
#include <vector>

namespace fabricsim
{

class RunAcrossRanks : public RunDistribution
{
  public:
    /// \p partition: "auto" or the path of a partition file; \p kernel: ns-3's engine in use.
    RunAcrossRanks(std::string partition, std::string kernel);

    uint32_t Rank() const override;
    uint32_t Ranks() const override;
    std::vector<uint32_t> Partition(const FabricScenario& sc) override;
    void Connect(ns3::FabricTopologyHelper& fabric, RunEnd& end) override;
    void ConnectDetector(ns3::DeadlockDetector& detector, ns3::Time delay) override;
    std::vector<std::string> Gather(const std::string& mine) override;

    /// The partition in use (after Partition).
    const fabricsim::Partition& GetPartition() const
    {
        return m_part;
    }

  private:
    /// What a run across ranks cannot do yet, as InputError (nothing with one rank).
    void RefuseWhatRanksLack(const FabricScenario& sc) const;
    /// Ends every rank's run through MPI_Abort after saying which rank failed and why.
    [[noreturn]] void AbortRun(const std::string& why) const;
    /// Null messages need a cut link between every pair of ranks (ns-3's channel bundles).
    void CheckNullMessagePairs(const Topology& topo) const;

    std::string m_partitionArg;
    std::string m_kernel;
    fabricsim::Partition m_part;
    std::unique_ptr<RemoteLinks> m_links;
    std::unique_ptr<ControlChannel> m_control;
};

} // namespace fabricsim

#endif
