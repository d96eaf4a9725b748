/*
 * One collective measured on a fresh instance of a scenario's fabric, on the packet-level
 * fabric or the analytical backend: the building block of `fabricsim collective` and of the
 * tests that hold the two backends to each other and to measured systems. The measurement
 * itself is ns3::FabricCollectiveHelper::Run, which scenario programs call directly; this file
 * only turns a scenario into a fabric (or the analytical model) and collects the fabric totals.
 */
#ifndef FABRICSIM_COLLECTIVE_MEASURE_H
#define FABRICSIM_COLLECTIVE_MEASURE_H

#include "executor.h"
#include "fabric-backend.h"
#include "fabric-scenario.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace fabricsim
{

/// One size on one backend: warm-up then timed iterations, back to back on one fabric.
struct CollectiveMeasurement
{
    bool m_complete = false;
    std::vector<double> m_iterationUs; ///< timed iterations
    double m_timeUs = 0;               ///< mean of m_iterationUs
    ExecutionResult m_last;            ///< last iteration run (the stuck one when incomplete)
    std::string m_stuckReport;         ///< executor report plus undelivered transfers
    bool m_reachedStopTime = false;    ///< cut short by the scenario's stop_ns
    nlohmann::json m_fabric;           ///< packet backend: drops, pauses, retransmissions
};

/**
 * Runs \p schedule on \p bytes over a fresh instance of the scenario's fabric: schedule rank i
 * is host i. The executor reads its attributes (ns3::CollectiveExecutor) after the scenario's
 * attributes and \p ns3Args are applied. A stuck iteration ends the measurement.
 */
CollectiveMeasurement MeasureCollective(const FabricScenario& sc,
                                        BackendKind backend,
                                        const Schedule& schedule,
                                        uint64_t bytes,
                                        int warmup,
                                        int iters,
                                        const std::vector<std::string>& ns3Args = {});

/// Ranks per server when the first \p ranks hosts are numbered server-major with equal
/// servers (rank = server * L + local); 0 otherwise.
int ServerLocalSize(const Topology& topo, int ranks);

} // namespace fabricsim

#endif
