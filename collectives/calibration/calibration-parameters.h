/*
 * The named model parameters calibration fits, how each maps onto a scenario (link objects of
 * the topology, ns-3 attributes of the collective executor and the analytical backend), and the
 * overlay file that carries fitted values to later runs.
 *
 *   link_efficiency   fraction of the nominal link rate the collectives achieve (rate x f on
 *                     every link object with a rate: host_link, fabric_link, scale_up, global_link)
 *   hop_latency       per-hop latency in ns (the delay of those link objects)
 *   launch_overhead   per-operation launch overhead in us (ns3::CollectiveExecutor::LaunchLatency)
 *   step_latency      per-step synchronisation cost in us (ns3::CollectiveExecutor::StepLatency)
 *   message_overhead  per-message software overhead in us (ns3::AnalyticalBackend::MessageOverhead)
 *   local_copy_efficiency  rate of the own-share copy of all-gather / reduce-scatter as a
 *                     fraction of the GPU's memory bandwidth (ns3::NcclTuner::LocalCopyEfficiency)
 */
#ifndef FABRICSIM_CALIBRATION_PARAMETERS_H
#define FABRICSIM_CALIBRATION_PARAMETERS_H

#include "nelder-mead.h"

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

namespace fabricsim
{

/// Names of the parameters, in documentation order.
std::vector<std::string> CalibrationParameterNames();

/**
 * The fit range and start of \p name on the scenario \p doc (start = the scenario's current
 * value). \throws fabricsim::InputError naming \p field when the name is unknown or the scenario
 * gives the parameter nothing to act on (no link rate for link_efficiency)
 */
FitDimension CalibrationDimension(const std::string& name,
                                  const nlohmann::json& doc,
                                  const std::string& field);

/// True when the scenario's topology gives a link rate that link_efficiency can scale.
bool HasRatedLinks(const nlohmann::json& doc);

/// The lowest rate (bytes/s) among the scenario's rated links; 0 when it gives none.
double SlowestLinkBytesPerSecond(const nlohmann::json& doc, const std::string& file);

/// The scenario's current value of \p name (1 for link_efficiency).
double CurrentParameterValue(const std::string& name, const nlohmann::json& doc);

/**
 * The --set assignments ("key.path=value") that give \p doc these parameter values; relative
 * ones (link_efficiency) act on \p doc's own rates, so the same values carry to another system.
 */
std::vector<std::string> ParameterAssignments(const std::map<std::string, double>& values,
                                              const nlohmann::json& doc,
                                              const std::string& file);

/// The overlay file: {"fabricsim_overlay": 1, "parameters": {...}, "set": [...], ...}.
nlohmann::json MakeOverlay(const std::map<std::string, double>& values,
                           const nlohmann::json& doc,
                           const std::string& file,
                           const nlohmann::json& provenance);

/**
 * The "set" list of an overlay file, for `--overlay FILE` on any command that takes --set.
 * \throws fabricsim::InputError naming \p path on an unreadable or malformed overlay
 */
std::vector<std::string> ReadOverlaySets(const std::string& path);

/// The "parameters" object of an overlay file (to carry a fit to another scenario).
std::map<std::string, double> ReadOverlayParameters(const std::string& path);

/**
 * The "gpu_clock_mhz" of an overlay file: the SM clock of the system it was fitted on, or 0
 * when the file does not say. \throws fabricsim::InputError when present but not a positive number
 */
double ReadOverlayGpuClock(const std::string& path);

/**
 * Replace each "--overlay FILE" (or --overlay=FILE) in \p args by "--set" pairs of the file's
 * assignments, before the command's own --set options so those win.
 */
std::vector<std::string> ExpandOverlayArgs(const std::vector<std::string>& args);

} // namespace fabricsim

#endif
