/*
 * Which measured points a calibration runs: the points of measurement files (nccl-tests logs,
 * corpus CSV tables, DeepEP tables) kept by collective, rank count, dtype, size range and
 * DeepEP mode (fabricsim calibrate's --coll, --ranks, --dtype, --min-bytes, --max-bytes,
 * --deepep-mode).
 */
#ifndef FABRICSIM_CALIBRATION_POINT_FILTER_H
#define FABRICSIM_CALIBRATION_POINT_FILTER_H

#include "measurement-reader.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fabricsim
{

struct PointFilter
{
    std::string collectiveHint;           ///< nccl-tests logs without a collective line or name
    std::vector<std::string> collectives; ///< only these (nccl-tests names; empty = all)
    std::vector<uint32_t> ranks;          ///< only these rank counts (empty = all)
    std::string dtype;                    ///< only this dtype (empty = all)
    uint64_t minBytes = 0;
    uint64_t maxBytes = UINT64_MAX;
    std::string deepepMode; ///< only "ll" or "normal" DeepEP rows (empty = both)
};

/// The points of \p files that \p filter keeps, in file order (InputError on unreadable files).
MeasurementSet ReadFilteredMeasurements(const std::vector<std::string>& files,
                                        const PointFilter& filter);

} // namespace fabricsim

#endif
