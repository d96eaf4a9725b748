/*
 * The calibration plot: measured vs predicted bus bandwidth over message size, one panel per
 * (collective, rank count), written as a self-contained SVG (no plotting dependency, the same
 * bytes for the same input).
 */
#ifndef FABRICSIM_CALIBRATION_BUSBW_PLOT_H
#define FABRICSIM_CALIBRATION_BUSBW_PLOT_H

#include "calibration-metrics.h"

#include <string>
#include <vector>

namespace fabricsim
{

/// SVG text of the plot of \p points under \p title.
std::string BusBwPlotSvg(const std::vector<PredictedPoint>& points, const std::string& title);

} // namespace fabricsim

#endif
