/*
 * NCCL-like choice of algorithm and protocol for calibration against nccl-tests, and the
 * hardware facts of a measured system that the choice and the carrying of fitted latencies
 * need. NCCL's tuner picks, per call, the (algorithm, protocol) its cost model says is fastest;
 * fabricsim simulates every candidate and keeps the fastest.
 *
 *   protocols      LL (8-byte lines, half of each line is payload, cheapest synchronisation),
 *                  LL128 (120 of 128 bytes payload), Simple (all payload, a full flag
 *                  synchronisation per step). The executor already models each protocol's
 *                  payload fraction and buffer; the fitted Simple costs scale to the others by
 *                  the ratios of NCCL's own tuning model (per NVLink ring step LL 0.6 us, LL128
 *                  1.9 us, Simple 3.4 us; per call LL 6.6 us, LL128 14 us, Simple 8.4 us, NVLS
 *                  25 us; LL at 1/2 of Simple's bandwidth, at most llMaxBw). The fitted
 *                  launch latency stands for the whole fixed cost of a Simple ring call, which
 *                  NCCL models as base + ring steps x per-step latency, so the other protocols
 *                  get it scaled by the ratio of those wholes for the collective and GPU count
 *                  (LL 0.27-0.61 of Simple on 2-8 GPUs, LL128 0.73-1.35). Ratios, not values:
 *                  nothing here is fitted.
 *   in-network     a switch that reduces (NVLink SHARP, "NVLS" in NCCL): all-reduce moves each
 *   reduction      GPU's whole buffer up once for the switch to reduce (multimem loads) and its
 *                  reduced share back once to be multicast (multimem stores): S (1 + 1/n) bytes
 *                  per direction of every GPU's link, against 2 S (n - 1) / n for a ring,
 *                  at NCCL's NVLS efficiency (0.85 of the ring's rate on Hopper).
 *   GPU clock      launch and per-step costs are GPU work (kernel start, flag polling, fences),
 *                  counted in SM cycles: carried to another GPU they scale by the clock ratio.
 *   own-share      out-of-place all-gather copies the rank's own input into its slot of the
 *   copy           output, reduce-scatter's last ring step reduces into the output with no send
 *                  beside it: S / n bytes of local HBM work on the SMs that also drive the
 *                  links, not hidden behind the transfers. Charged at a fraction of the GPU's
 *                  memory bandwidth (LocalCopyEfficiency; 0 = not charged). All-reduce fuses
 *                  that write into a step that also sends; all-to-all's own block is a separate
 *                  self send / receive that runs beside the peer transfers.
 */
#ifndef FABRICSIM_NCCL_TUNER_H
#define FABRICSIM_NCCL_TUNER_H

#include "schedule-ir.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace fabricsim
{

/// NCCL's latency model (src/graph/tuning.cc), in us: base latency of a ring call and latency
/// of one NVLink ring step per protocol, and the NVLS algorithm's NVLink latency.
namespace nccl_latency
{
inline constexpr double kSimpleBase = 8.4;
inline constexpr double kSimpleStep = 3.4;
inline constexpr double kLL128Base = 14.0;
inline constexpr double kLL128Step = 1.9;
inline constexpr double kLLBase = 6.6;
inline constexpr double kLLStep = 0.6;
inline constexpr double kNvls = 25.0;
} // namespace nccl_latency

/// The tuner's configuration (what ns3::NcclTuner's attributes describe).
struct TunerConfig
{
    /// Protocol candidates, tried in this order.
    std::vector<Protocol> protocols{Protocol::kSimple, Protocol::kLL128, Protocol::kLL};
    /// Per-step cost of LL128 and LL relative to Simple (NCCL's NVLink ring hwLat 1.9/3.4,
    /// 0.6/3.4).
    double ll128StepScale = nccl_latency::kLL128Step / nccl_latency::kSimpleStep;
    double llStepScale = nccl_latency::kLLStep / nccl_latency::kSimpleStep;
    /// Fixed cost of a call relative to Simple's ring; 0 = from NCCL's latency model for the
    /// collective and GPU count (LaunchScale below), a positive value = that ratio always.
    double ll128LaunchScale = 0;
    double llLaunchScale = 0;
    /// NVLS: NCCL's NVLS NVLink latency (25 us) over the ring Simple base latency (8.4 us), not
    /// over the whole ring latency (0 selects that: measured, it makes the in-switch candidate
    /// win too early, see docs/validation.md).
    double nvlsLaunchScale = nccl_latency::kNvls / nccl_latency::kSimpleBase;
    /// LL's bandwidth relative to Simple's: every 8-byte store carries a flag (NCCL's ring
    /// model in 2.28: 1/2 for every collective; older releases 1/3, all-reduce 1/4).
    double llBandwidthScale = 0.5;
    double llAllReduceBandwidthScale = 0.5;
    /// Most bus bandwidth LL reaches in bytes/s, whatever the links (NCCL's llMaxBw on one
    /// node: Hopper 141 GB/s, Ampere 87.7 GB/s: the SMs, not the links, set LL's pace); 0 =
    /// no cap.
    double llMaxBytesPerSecond = 0;
    /// Link rate of the in-switch all-reduce relative to the ring's (NCCL's nvlsEfficiency for
    /// Hopper: 0.85).
    double nvlsBandwidthScale = 0.85;
    /// The switch reduces in the network (NVLS): all-reduce gets the in-switch candidate.
    bool inNetworkReduction = false;
    /// SM clock of the system's GPUs in MHz; 0 = not given (latencies carry unscaled).
    double gpuClockMhz = 0;
    /// Rate of the own-share copy as a fraction of the GPU's memory bandwidth; 0 = off.
    double localCopyEfficiency = 0;

    /**
     * Time (us) the own share of a \p kind of \p bytes over \p ranks GPUs adds, serial to the
     * ring: S / n at localCopyEfficiency x \p memoryBytesPerSecond for all-gather and
     * reduce-scatter on 2 or more GPUs; 0 otherwise or when either rate is 0.
     */
    double OwnShareCopyUs(CollectiveKind kind,
                          uint64_t bytes,
                          int ranks,
                          double memoryBytesPerSecond) const;

    /// Per-step cost of \p p relative to Simple.
    double StepScale(Protocol p) const;
    /**
     * Fixed cost of a \p p call of \p kind over \p ranks GPUs relative to Simple's: the
     * configured ratio, or when it is 0 NCCL's whole ring latency (base + steps x NVLink
     * per-step latency, steps 2 (n - 1) for all-reduce, n - 1 otherwise) of \p p over Simple's.
     */
    double LaunchScale(Protocol p, CollectiveKind kind, int ranks) const;
    /// Fixed cost of an in-switch all-reduce over \p ranks GPUs relative to Simple's ring: the
    /// configured ratio, or NCCL's NVLS latency (25 us) over Simple's whole ring latency.
    double NvlsLaunchScale(int ranks) const;
    /// Link rate \p p achieves relative to Simple's, beyond its payload fraction (which the
    /// executor applies: LL 1/2, LL128 120/128).
    double RateScale(Protocol p, CollectiveKind kind) const;
    /// RateScale on links of \p linkBytesPerSecond (after the fitted efficiency), lowered so
    /// that LL's payload rate stays within llMaxBytesPerSecond.
    double RateScale(Protocol p, CollectiveKind kind, double linkBytesPerSecond) const;
};

/**
 * Parses a protocol list such as "Simple,LL128,LL" (case-insensitive, no repeats, at least
 * one). \throws fabricsim::InputError naming \p field otherwise
 */
std::vector<Protocol> ParseProtocolList(const std::string& text, const std::string& field);

/**
 * Bytes an in-switch all-reduce of \p bytes over \p ranks GPUs moves over each GPU's link in
 * each direction: S up for the reduction loads plus S / n up for the multicast stores; S / n
 * reduced data down plus S multicast down.
 */
double InSwitchAllReduceLinkBytes(uint64_t bytes, int ranks);

/**
 * Fitted latency parameters carried from a system clocked at \p fromMhz to one at \p toMhz:
 * launch_overhead and step_latency (GPU work, SM cycles) scale by fromMhz / toMhz; link and
 * message terms and the link efficiency do not. Unchanged when either clock is 0.
 */
std::map<std::string, double> CarryAcrossClocks(const std::map<std::string, double>& values,
                                                double fromMhz,
                                                double toMhz);

} // namespace fabricsim

#endif
