/*
 * `fabricsim fit-compute TABLE... --hardware GPU --out DIR`: fits the compute calibration
 * (workloads/compute-calibration-fit.h) on one GPU's measured kernel tables and reports its
 * error on the rows it did not use and, with --held-out, on another GPU's tables.
 */
#ifndef FABRICSIM_FIT_COMPUTE_COMMAND_H
#define FABRICSIM_FIT_COMPUTE_COMMAND_H

#include <iosfwd>
#include <string>
#include <vector>

namespace fabricsim
{

/// Parsed command line of `fabricsim fit-compute`.
struct FitComputeOptions
{
    std::vector<std::string> tables;  ///< the tables to fit on
    std::string hardware;             ///< their GPU's preset
    std::vector<std::string> heldOut; ///< another GPU's tables (--held-out)
    std::string heldOutHardware;      ///< its preset (--held-out-hardware)
    bool allRows = false;             ///< --rows all: fit on every row (default: even rows)
    bool gemmByN = true;              ///< --gemm-size m,n (default) or m: GEMM lines per n level
    bool moeByWidth = true; ///< --moe-size tokens,width (default) or tokens: MoE lines per level
                            ///< of inter / tp
    std::string base;       ///< --base: a calibration whose classes the tables lack are kept
    std::string outDir = "out";
};

/// Parses the arguments after "fit-compute". \throws fabricsim::InputError naming the option
FitComputeOptions ParseFitComputeArgs(const std::vector<std::string>& args);

/**
 * Runs the command: DIR/calibration.json (usable as hardware.compute_calibration) and
 * DIR/errors.json, and prints the error table (per class: the fit's own rows, the rows it left
 * out, the held-out GPU, and the uncalibrated roofline on each).
 * \return 0
 */
int RunFitComputeCommand(const FitComputeOptions& opt, std::ostream& out, std::ostream& err);

} // namespace fabricsim

#endif
