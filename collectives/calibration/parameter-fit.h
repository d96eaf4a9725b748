/*
 * Fitting named model parameters to measured collective points: Nelder-Mead (nelder-mead.h)
 * on the mean absolute percentage error of the points at or above a size, each evaluation a
 * prediction of those points with the candidate values applied (the caller's predictor).
 */
#ifndef FABRICSIM_CALIBRATION_PARAMETER_FIT_H
#define FABRICSIM_CALIBRATION_PARAMETER_FIT_H

#include "measurement-reader.h"
#include "nelder-mead.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace fabricsim
{

/// Predicted times (us) of points with the named parameter values applied.
using PointPredictor = std::function<std::vector<double>(
    const std::map<std::string, double>& values, const std::vector<MeasuredPoint>& points)>;

/// Mean |predicted - measured| / measured in percent over the points of at least \p minBytes
/// (0 when there are none).
double Mape(const std::vector<MeasuredPoint>& points,
            const std::vector<double>& predictedUs,
            uint64_t minBytes);

/// The points of at least \p minBytes: those a fit scores (and the only ones it simulates).
std::vector<MeasuredPoint> PointsAtOrAbove(const std::vector<MeasuredPoint>& points,
                                           uint64_t minBytes);

struct ParameterFit
{
    FitResult result;
    std::map<std::string, double> fitted; ///< the best values by parameter name
};

/// Fits \p dims to \p points (already those of at least \p minBytes) in at most \p maxEvals
/// predictions.
ParameterFit FitParameters(const std::vector<FitDimension>& dims,
                           const std::vector<MeasuredPoint>& points,
                           uint64_t minBytes,
                           int maxEvals,
                           const PointPredictor& predict);

} // namespace fabricsim

#endif
