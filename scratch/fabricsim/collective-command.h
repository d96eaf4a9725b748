/*
 * `fabricsim collective`: nccl-tests-style runs of one collective over a size sweep on the
 * fabric of a scenario (ranks = its hosts / accelerators in order), on the packet-level fabric
 * or the analytical backend. Prints the nccl-tests table and writes DIR/collective.json,
 * DIR/collective.csv and DIR/timing.json.
 */
#ifndef FABRICSIM_COLLECTIVE_COMMAND_H
#define FABRICSIM_COLLECTIVE_COMMAND_H

#include "executor.h"
#include "fabric-scenario.h"
#include "schedule-source.h"

#include "ns3/collective-measure.h"

#include <nlohmann/json.hpp>

#include <iosfwd>
#include <string>
#include <vector>

namespace fabricsim
{

/// Parsed command line of `fabricsim collective`.
struct CollectiveCommandOptions
{
    std::string scenario;
    std::string coll;
    ScheduleSourceOptions schedule; ///< --algo or --schedule, --channels, --chunks, --proto, --root
    uint64_t minBytes = 32ULL << 20;
    uint64_t maxBytes = 32ULL << 20;
    uint64_t factor = 2;
    int iters = 1;  ///< timed iterations (nccl-tests: 20; a deterministic simulation needs fewer)
    int warmup = 0; ///< warm-up iterations (nccl-tests: 1)
    std::string backend = "packet";
    std::string outDir; ///< empty: no files (only the table)
    int ranks = 0;      ///< 0 = every host of the scenario
    int localSize = -1; ///< -1 = from the topology's server groups
    std::vector<std::string> sets;
    std::vector<std::string> ns3Args;
};

/// Parses the arguments after "collective". \throws fabricsim::InputError naming the option
CollectiveCommandOptions ParseCollectiveArgs(const std::vector<std::string>& args);

/// Runs the command. \return 0 when every size completed, 1 when a collective got stuck
int RunCollectiveCommand(const CollectiveCommandOptions& opt, std::ostream& out, std::ostream& err);

} // namespace fabricsim

#endif
