/*
 * A calibration run on a scenario (`fabricsim calibrate`): the measured points read and
 * filtered, the scenario read with an overlay's parameters applied (carried across GPU clocks),
 * the named parameters fitted on the points (Nelder-Mead on their MAPE), every point predicted
 * on the scenario as fitted, and summary.json's figures with the overlay of the fitted values.
 * Writing and printing them is the CLI's.
 */
#ifndef FABRICSIM_CALIBRATION_RUN_H
#define FABRICSIM_CALIBRATION_RUN_H

#include "calibrate-predictor.h"
#include "calibration-metrics.h"
#include "moe-report.h"
#include "nccl-tuner.h"
#include "parameter-fit.h"
#include "point-filter.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace fabricsim
{

/// What `fabricsim calibrate` is asked for.
struct CalibrationOptions
{
    std::vector<std::string> files;
    std::string scenario;
    std::vector<std::string> fit; ///< parameter names to fit
    std::string params;           ///< overlay whose parameters to apply first
    std::string outDir = "out";
    std::string backend = "analytical";
    PointFilter filter;       ///< --coll, --ranks, --dtype, --min-bytes, --max-bytes, --deepep-mode
    uint64_t fitMinBytes = 0; ///< points the fit scores (error reported on all)
    int maxEvals = 60;
    std::string deepepDispatchDtype = "fp8"; ///< normal-mode DeepEP dispatch payload
    std::vector<std::string> sets;
    std::vector<std::string> ns3Args;
};

/// What a calibration runs on, read and checked before anything is written.
struct CalibrationInputs
{
    MeasurementSet points;
    nlohmann::json doc; ///< the scenario with --params' parameters (carried) applied
    std::string name;   ///< the scenario's name
    TunerConfig tuner;
    std::map<std::string, double> applied; ///< --params' values
    std::map<std::string, double> carried; ///< those carried to this system's GPU clock
    double fromMhz = 0;                    ///< the clock --params was fitted at
    std::vector<FitDimension> dims;        ///< --fit's parameters
    std::vector<MeasuredPoint> fitPoints;  ///< the points the fit scores
};

/// The predictions of every point, after the fit when there is one.
struct CalibrationOutcome
{
    ParameterFit fit;
    nlohmann::json doc; ///< the scenario the points ran on (with the fitted values)
    std::vector<PredictedPoint> results;
    std::map<std::string, size_t> chosen; ///< "algorithm/protocol" -> points that took it
    std::vector<MoePrediction> moe;
};

/// \p doc with the parameters \p values applied (their --set assignments; \p file names the
/// source in errors).
nlohmann::json WithParameters(nlohmann::json doc,
                              const std::map<std::string, double>& values,
                              const std::string& file);

/// The points, scenario and parameters of \p opt, checked (InputError) before anything runs:
/// the scenario's simulator settings are applied.
CalibrationInputs ReadCalibrationInputs(const CalibrationOptions& opt);

/// Fits --fit's parameters (when given), then predicts every point on the scenario as fitted.
CalibrationOutcome PredictAndFit(const CalibrationOptions& opt,
                                 const CalibrationInputs& in,
                                 Predictor& pred);

/// summary.json without its "simulations" count; \p overlay receives the overlay of the fitted
/// values (left null without a fit).
nlohmann::json CalibrationSummary(const CalibrationOptions& opt,
                                  const CalibrationInputs& in,
                                  const CalibrationOutcome& o,
                                  nlohmann::json& overlay);

} // namespace fabricsim

#endif
