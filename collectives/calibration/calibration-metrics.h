/*
 * Prediction error of calibration points: signed percentage error per point, and aggregates
 * (mean absolute percentage error, worst point) overall, per size range, per collective and
 * per rank count.
 */
#ifndef FABRICSIM_CALIBRATION_METRICS_H
#define FABRICSIM_CALIBRATION_METRICS_H

#include "measurement-reader.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace fabricsim
{

/// A measured point with the simulator's prediction.
struct PredictedPoint
{
    MeasuredPoint measured;
    double predictedUs = 0;
    std::string choice; ///< "algorithm/protocol" the prediction took (empty when not recorded)

    /// (predicted - measured) / measured, in percent.
    double ErrorPct() const;
    /// nccl-tests bus bandwidth (GB/s, 1e9 bytes) of the measured and predicted times.
    double MeasuredBusBw() const;
    double PredictedBusBw() const;
};

/// Aggregate error of a set of points.
struct ErrorSummary
{
    size_t points = 0;
    double mape = 0;     ///< mean of |error| in percent
    double bias = 0;     ///< mean signed error in percent
    double worstPct = 0; ///< the largest |error| (signed)
    std::string worstAt; ///< "allreduce 8 ranks 1048576 B (file:line)"
};

/// Summary of \p points (an empty summary for none).
ErrorSummary Summarize(const std::vector<PredictedPoint>& points);

/// Size ranges of the report: "< 64 KiB", "64 KiB - 1 MiB", ">= 1 MiB".
std::string SizeRange(uint64_t bytes);

/// Overall, per size range, per collective, per ranks and per (collective, ranks) summaries.
nlohmann::json ErrorReport(const std::vector<PredictedPoint>& points);

/// One summary as JSON.
nlohmann::json ToJson(const ErrorSummary& s);

/// Per-point CSV (collective, ranks, bytes, dtype, measured_us, predicted_us, error_pct,
/// measured_busbw_gbps, predicted_busbw_gbps, source, choice).
std::string PointsCsv(const std::vector<PredictedPoint>& points);

/**
 * \brief The DeepEP points whose own table contradicts them: measured more than \p tolerance
 * (a fraction) slower than a point of the same mode, shape, SM budget, servers and GPU with more
 * tokens. A call's time cannot fall as its tokens grow, so no model that grows with the tokens
 * holds both within the tolerance: a slow sample. One flag per point of \p points, for the
 * dispatch (\p dispatch) or the combine times.
 */
std::vector<bool> ContradictedMoePoints(const std::vector<MoePoint>& points,
                                        bool dispatch,
                                        double tolerance = 0.15);

} // namespace fabricsim

#endif
