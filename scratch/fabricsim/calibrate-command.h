/*
 * `fabricsim calibrate MEASUREMENTS... --scenario S.json [--fit p1,p2,...] --out DIR`: runs the
 * measured (collective, size, ranks) points - and DeepEP dispatch/combine points - on the
 * scenario's fabric, reports per-point and aggregate error (MAPE and worst point, per size
 * range), plots measured vs predicted bus bandwidth and, with --fit, fits named parameters
 * (Nelder-Mead on MAPE) and writes them as an overlay file later runs can include.
 */
#ifndef FABRICSIM_CALIBRATE_COMMAND_H
#define FABRICSIM_CALIBRATE_COMMAND_H

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace fabricsim
{

/// Parsed command line of `fabricsim calibrate`.
struct CalibrateCommandOptions
{
    std::vector<std::string> files;
    std::string scenario;
    std::vector<std::string> fit; ///< parameter names to fit
    std::string params;           ///< overlay whose parameters to apply first
    std::string outDir = "out";
    std::string backend = "analytical";
    std::string coll;               ///< nccl-tests logs without a collective line or name
    std::vector<std::string> colls; ///< only these collectives (empty = all)
    std::vector<uint32_t> ranks;    ///< only these rank counts (empty = all)
    std::string dtype;              ///< only this dtype (empty = all)
    uint64_t minBytes = 0;
    uint64_t maxBytes = UINT64_MAX;
    uint64_t fitMinBytes = 0; ///< points the fit scores (error reported on all)
    int maxEvals = 60;
    std::string deepepDispatchDtype = "fp8"; ///< normal-mode DeepEP dispatch payload
    std::string deepepMode;                  ///< only "ll" or "normal" rows (empty = both)
    std::vector<std::string> sets;
    std::vector<std::string> ns3Args;
};

/// Parses the arguments after "calibrate". \throws fabricsim::InputError naming the option
CalibrateCommandOptions ParseCalibrateArgs(const std::vector<std::string>& args);

/// Runs the command. \return 0 (errors are reported, not a failure)
int RunCalibrateCommand(const CalibrateCommandOptions& opt, std::ostream& out, std::ostream& err);

} // namespace fabricsim

#endif
