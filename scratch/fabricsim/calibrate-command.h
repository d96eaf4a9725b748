/*
 * `fabricsim calibrate MEASUREMENTS... --scenario S.json [--fit p1,p2,...] --out DIR`: runs the
 * measured (collective, size, ranks) points - and DeepEP dispatch/combine points - on the
 * scenario's fabric, reports per-point and aggregate error (MAPE and worst point, per size
 * range), plots measured vs predicted bus bandwidth and, with --fit, fits named parameters
 * (Nelder-Mead on MAPE) and writes them as an overlay file later runs can include.
 */
#ifndef FABRICSIM_CALIBRATE_COMMAND_H
#define FABRICSIM_CALIBRATE_COMMAND_H

#include "ns3/calibration-run.h"

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace fabricsim
{

/// Parsed command line of `fabricsim calibrate`.
using CalibrateCommandOptions = CalibrationOptions;

/// Parses the arguments after "calibrate". \throws fabricsim::InputError naming the option
CalibrateCommandOptions ParseCalibrateArgs(const std::vector<std::string>& args);

/// Runs the command. \return 0 (errors are reported, not a failure)
int RunCalibrateCommand(const CalibrateCommandOptions& opt, std::ostream& out, std::ostream& err);

} // namespace fabricsim

#endif
