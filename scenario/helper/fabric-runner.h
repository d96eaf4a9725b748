/*
 * Runs a fabric scenario end to end: installs the fabric, expands the traffic (explicit flows,
 * HPCC flow files, Poisson arrivals from a flow-size CDF, incasts), runs until every flow is
 * done, a PFC deadlock or the stop time, and writes summary.json, fct.csv, pfc.csv, the monitor
 * series (queue.csv, link_util.csv, qp_rate.csv, cnp.csv, pause.csv) and pcaps atomically into
 * the output directory.
 */
#ifndef FABRICSIM_FABRIC_RUNNER_H
#define FABRICSIM_FABRIC_RUNNER_H

#include "fabric-scenario.h"
#include "traffic-expansion.h"

#include "ns3/fabric-topology-helper.h"

#include <iosfwd>
#include <string>
#include <vector>

namespace fabricsim
{

struct RunOptions
{
    std::string outDir = "out";
    std::vector<std::string> ns3Args; ///< --ns3::Type::Attr=value
    bool progress = false;            ///< progress on stderr (when it is a terminal)
    nlohmann::json scenario;          ///< the document as read, for provenance.json (or null)
    /// A run across MPI ranks (run-distribution.h); null: this process runs it all.
    class RunDistribution* distribution = nullptr;
};

/**
 * Run the scenario. Returns the process exit code: 0 on success, 1 when frame conservation
 * fails, 3 when the deadlock detector stopped the run. Throws InputError on bad input.
 */
int RunFabricScenario(const FabricScenario& sc, const RunOptions& opt, std::ostream& out);

/// Arm a stderr progress line (simulated time, events/s, ETA) until `stop`.
void StartProgress(ns3::Time stop);

} // namespace fabricsim

#endif
