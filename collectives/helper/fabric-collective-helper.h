/*
 * ns-3 style helper that runs collectives over an installed fabric: it owns the packet-level
 * Transport on a FabricTopologyHelper (or wraps any other Transport, e.g. the analytical one),
 * maps schedule ranks to hosts, generates schedules, runs them warm-up plus timed iterations
 * back to back, and reports time, algbw and busbw the way nccl-tests does. It also hands out
 * the Collective API over the same transport for workload drivers. `fabricsim collective` is
 * built on it, so a scenario program and the CLI measure a collective the same way.
 */
#ifndef FABRICSIM_FABRIC_COLLECTIVE_HELPER_H
#define FABRICSIM_FABRIC_COLLECTIVE_HELPER_H

#include "executor.h"
#include "generators.h"
#include "nccl-report.h"
#include "schedule-collectives.h"
#include "transport.h"

#include "ns3/fabric-topology-helper.h"
#include "ns3/nstime.h"
#include "ns3/object-factory.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ns3
{

/**
 * \brief One collective measured by FabricCollectiveHelper::Run: warm-up, then timed iterations.
 */
struct CollectiveRunResult
{
    bool complete = false;           //!< every iteration finished on every rank
    std::vector<double> iterationUs; //!< simulated time of each timed iteration
    double timeUs = 0;               //!< mean of iterationUs (0 when none finished)
    fabricsim::ExecutionResult last; //!< last iteration run (the stuck one when incomplete)
    std::string stuckReport;         //!< executor report plus undelivered transfers
    bool reachedStopTime = false;    //!< it stopped at the transport's stop time (a user cap)
    fabricsim::NcclRow row;          //!< nccl-tests row (#wrong = -1: not checked here)
};

/**
 * \brief Runs collective schedules over a fabric (see the file comment).
 *
 * \code
 *   FabricTopologyHelper fabric(topo);
 *   fabric.Install();
 *   FabricCollectiveHelper coll(fabric);
 *   coll.SetCongestionControl("dcqcn");
 *   fabricsim::Schedule ring = coll.Generate(fabricsim::CollectiveKind::kAllReduce, "ring");
 *   CollectiveRunResult r = coll.Run(ring, 64 << 20);
 *   std::cout << r.timeUs << " us, busbw " << r.row.m_busbwGbps << " GB/s\n";
 * \endcode
 *
 * The transport is created on first use and kept: iterations and later runs go back to back
 * on one fabric (leftover congestion-control state included), as consecutive collectives do.
 */
class FabricCollectiveHelper
{
  public:
    /// Packet-level backend: queue pairs on the installed \p fabric (which must outlive this).
    explicit FabricCollectiveHelper(FabricTopologyHelper& fabric);
    /**
     * \brief Any other backend (e.g. fabricsim::AnalyticalTransport). \p transport and
     * \p topology (its hosts are the transport's ranks; optional, for GetLocalSize and the
     * Collective API's scale-up domain) must outlive this.
     */
    explicit FabricCollectiveHelper(fabricsim::Transport& transport,
                                    const fabricsim::Topology* topology = nullptr);
    ~FabricCollectiveHelper();

    FabricCollectiveHelper(const FabricCollectiveHelper&) = delete;
    FabricCollectiveHelper& operator=(const FabricCollectiveHelper&) = delete;

    /// Congestion control of every queue pair, by scenario name ("dcqcn", "hpcc", ...).
    /// Throws fabricsim::InputError for unknown names. Default: dcqcn. Packet backend only.
    void SetCongestionControl(const std::string& name);
    /// Congestion control of every queue pair, as a factory.
    void SetCongestionControl(const ObjectFactory& cc);
    /// Traffic class of the collective's data (default 3). Packet backend only.
    void SetPriority(uint8_t priority);
    /// Watchdog: a run stops at this absolute simulated time with work left, and the
    /// collective is reported stuck (default 100 s; 0 = none). Packet backend only.
    void SetStopTime(Time stop);
    /// Stall watchdog: a run stops once messages are in flight and none has been delivered
    /// for this long (default 0 = none). Packet backend only.
    void SetStallTime(Time stall);

    /**
     * \brief Schedule rank i runs on host \p hosts[i] (default: host i). The mapping applies
     * to Run(); the Collective API addresses hosts directly.
     */
    void SetRankHosts(const std::vector<uint32_t>& hosts);
    /// Host of each rank (the mapping, or 0..n-1 over all hosts).
    std::vector<uint32_t> GetRankHosts() const;
    /// Ranks Run() can use: the mapping's size, else every host of the transport.
    uint32_t GetNRanks() const;

    /// Executor tunables (default: the ns3::CollectiveExecutor attributes when first needed).
    void SetExecutorConfig(const fabricsim::ExecutorConfig& config);
    /// The executor tunables in use.
    fabricsim::ExecutorConfig GetExecutorConfig() const;

    /**
     * \brief Ranks per server when the ranks' hosts are numbered server-major with equal
     * servers of at least two ranks (rank = server x L + local), else 0: the local size a
     * hierarchical algorithm needs. 0 when the helper was given no topology.
     */
    int GetLocalSize() const;

    /**
     * \brief Generate \p algorithm for \p kind on GetNRanks() ranks; a zero opt.localSize is
     * filled in from GetLocalSize(). Throws fabricsim::InputError when the algorithm cannot run.
     */
    fabricsim::Schedule Generate(fabricsim::CollectiveKind kind,
                                 const std::string& algorithm,
                                 fabricsim::GeneratorOptions opt = {}) const;

    /**
     * \brief Run \p schedule on \p bytes (nccl-tests size convention) \p warmup + \p iters
     * times back to back; a stuck iteration ends the run (result incomplete, report filled).
     * Throws fabricsim::InputError when the schedule's rank count exceeds the ranks available or
     * the schedule cannot be executed at all.
     */
    CollectiveRunResult Run(const fabricsim::Schedule& schedule,
                            uint64_t bytes,
                            int warmup = 0,
                            int iters = 1);

    /// The Collective API over this helper's transport (global rank = host), created on
    /// first use with \p options (default: scale-up domain size from the topology, and "auto"
    /// timing its candidates on an idle flow-model copy of it).
    fabricsim::ScheduleCollectives& GetCollectiveApi();
    /// Options the Collective API is created with (call before GetCollectiveApi).
    void SetCollectiveOptions(const fabricsim::CollectiveOptions& options);

    /// The transport (created on first use).
    fabricsim::Transport& GetTransport();
    /// The fabric, or nullptr on another backend.
    FabricTopologyHelper* GetFabric() const
    {
        return m_fabric;
    }

    /// Run the backend's event loop until no work is left (or the watchdog).
    void RunEventLoop();

    /**
     * \brief Ranks per server for hosts \p hosts of \p topo (see GetLocalSize); 0 when the
     * hosts are not numbered server-major with equal servers of at least two.
     */
    static int ServerLocalSize(const fabricsim::Topology& topo, const std::vector<uint32_t>& hosts);
    /// Size of the largest scale-up domain: the most accelerators any server has.
    static int ScaleUpDomainSize(const fabricsim::Topology& topo);

  private:
    FabricTopologyHelper* m_fabric = nullptr;
    fabricsim::Transport* m_external = nullptr;
    const fabricsim::Topology* m_topology = nullptr; //!< the fabric's, or the one given
    std::unique_ptr<fabricsim::Transport> m_owned;
    ObjectFactory m_cc;
    bool m_ccSet = false;
    uint8_t m_priority = 3;
    Time m_stop = Seconds(100);
    Time m_stall = Seconds(0);
    std::vector<uint32_t> m_rankHosts;
    std::optional<fabricsim::ExecutorConfig> m_config;
    std::optional<fabricsim::CollectiveOptions> m_collectiveOptions;
    std::unique_ptr<fabricsim::ScheduleCollectives> m_api;
};

} // namespace ns3

#endif
