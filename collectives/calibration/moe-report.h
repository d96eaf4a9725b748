/*
 * DeepEP points measured beside predicted: moe.csv, and the error per mode and direction by
 * token range, SM budget (normal mode), EP size (across servers) and with the points their
 * own table contradicts left out (ContradictedMoePoints).
 */
#ifndef FABRICSIM_CALIBRATION_MOE_REPORT_H
#define FABRICSIM_CALIBRATION_MOE_REPORT_H

#include "measurement-reader.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace fabricsim
{

/// Predicted dispatch and combine times (us) of one DeepEP point.
struct MoePrediction
{
    double dispatchUs = 0;
    double combineUs = 0;
};

/// moe.csv: one line per point of \p moe with its prediction \p predicted (same order).
std::string MoeCsv(const std::vector<MoePoint>& moe, const std::vector<MoePrediction>& predicted);

/// summary.json's "moe": {group: {points, mape_pct, bias_pct, worst_pct}}.
nlohmann::json MoeErrorReport(const std::vector<MoePoint>& moe,
                              const std::vector<MoePrediction>& predicted);

} // namespace fabricsim

#endif
