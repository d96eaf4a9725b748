/*
 * Fitting a compute calibration (compute-calibration.h) on measured kernel tables: per class
 * (op, dtype) and per power-of-two size, the overhead and the two efficiencies that minimise the
 * mean absolute percentage error over that size's rows.
 */
#ifndef FABRICSIM_WORKLOADS_COMPUTE_CALIBRATION_FIT_H
#define FABRICSIM_WORKLOADS_COMPUTE_CALIBRATION_FIT_H

#include "compute-calibration.h"

#include <vector>

namespace fabricsim
{

/// What a fit uses.
struct CalibrationFitOptions
{
    RowFilter use;             //!< the rows of each table it fits on (all when empty)
    size_t minRows = 4;        //!< a size with fewer rows gets no point (its neighbours cover it)
    double regulariser = 1e-4; //!< pull towards hw's efficiencies, so an efficiency the rows do
                               //!< not constrain (eta_compute of memory-bound sizes) stays there
    bool gemmByN = true;    //!< GEMM curves get one line of m per power-of-two level of n (a table
                            //!< with no level of enough rows falls back to one line of m)
    bool moeByWidth = true; //!< MoE curves get one line of tokens per power-of-two level of the
                            //!< per-expert width on the rank (inter / tp), with the same fallback
};

/**
 * \brief The fixed half of a table's rows a calibration is fitted on: bit 32 of the row index
 * through splitmix64's mixer, so the split is pseudo-random but the same everywhere (row parity
 * would follow the tables' grid order and leave whole shapes out). The other half is held out.
 */
bool CalibrationFitRow(size_t row);

/**
 * \brief Fit a calibration on \p tables (timed on \p hw; its peaks and HBM bandwidth divide the
 * FLOPs and bytes). Each size (by levels: each size of each level) is fitted on its own: a
 * log-spaced grid of both efficiencies over [0.02, 2], refined twice around the best, the overhead
 * for each pair the exact optimum (a weighted median of measured minus roofline, weights 1 /
 * measured, clamped at 0). InputError when the tables are of different devices or a class has no
 * size with enough rows.
 */
ComputeCalibration FitComputeCalibration(const std::vector<KernelTable>& tables,
                                         const HardwareSpec& hw,
                                         const CalibrationFitOptions& options = {});

} // namespace fabricsim

#endif
