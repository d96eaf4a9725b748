/*
 * A size sweep of one collective on a scenario's fabric, as `fabricsim collective` runs it
 * (nccl-tests' -b / -e / -f): each size aligned to whole elements per rank, its schedule from a
 * ScheduleSource, measured on a fresh fabric (MeasureCollective), and turned into an nccl-tests
 * row and collective.json's row. Printing is the caller's.
 */
#ifndef FABRICSIM_COLLECTIVE_SWEEP_H
#define FABRICSIM_COLLECTIVE_SWEEP_H

#include "collective-measure.h"
#include "nccl-report.h"
#include "schedule-source.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <vector>

namespace fabricsim
{

struct CollectiveSweepOptions
{
    BackendKind backend = BackendKind::kPacket;
    int warmup = 0; ///< warm-up iterations per size
    int iters = 1;  ///< timed iterations per size
    uint32_t root = 0;
    std::vector<std::string> ns3Args; ///< --ns3::Type::Attr=value, applied to every fabric
};

/// One size of a sweep.
struct CollectiveSweepRow
{
    uint64_t requested = 0; ///< the size asked for
    uint64_t bytes = 0;     ///< aligned to whole elements per rank; 0: too small, skipped
    std::string name;       ///< the schedule's name (the algorithm, or the file's schedule)
    CollectiveMeasurement m;
    NcclRow row;         ///< the nccl-tests row (its m_complete from the measurement)
    nlohmann::json json; ///< collective.json's row (with "stuck" when it did not complete)
    double wallS = 0;    ///< wall-clock seconds the size took
};

/**
 * Measures \p sizes in order on \p ranks hosts of \p sc, calling \p onRow after each (skipped
 * sizes too), so that a killed sweep keeps what it reported.
 */
void MeasureCollectiveSweep(const FabricScenario& sc,
                            CollectiveKind kind,
                            int ranks,
                            ScheduleSource& source,
                            const std::vector<uint64_t>& sizes,
                            const CollectiveSweepOptions& opt,
                            const std::function<void(const CollectiveSweepRow&)>& onRow);

/// The executor's settings (its ns3::CollectiveExecutor attributes) as collective.json
/// records them.
nlohmann::json ExecutorConfigJson(const ExecutorConfig& cfg);

} // namespace fabricsim

#endif
