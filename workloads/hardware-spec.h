/*
 * Accelerator specification: peak compute per dtype, HBM, efficiencies, launch overhead,
 * scale-up and NIC bandwidth, price. Presets for common GPUs; any field can be overridden.
 */
#ifndef FABRICSIM_WORKLOADS_HARDWARE_SPEC_H
#define FABRICSIM_WORKLOADS_HARDWARE_SPEC_H

#include "dtype.h"

#include <nlohmann/json.hpp>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace fabricsim
{

class ComputeCalibration;

/**
 * \brief One accelerator (a rank) as the roofline sees it. All figures in base SI units.
 *
 * JSON fields (quantities take units, see ParseQuantity):
 *   preset            start from a built-in accelerator and override the fields given
 *   name              display name
 *   peak_flops        {"bf16": "989TFLOPS", "fp8": "1979TFLOPS", ...} dense tensor-core peaks
 *   hbm_capacity      "80GB"
 *   hbm_bw            "3.35TB/s"
 *   eta_compute       achievable fraction of peak FLOPs in GEMMs (default 0.7)
 *   eta_memory        achievable fraction of HBM bandwidth (default 0.85)
 *   launch_overhead   fixed cost per kernel (default "3us")
 *   scale_up_bw       NVLink / Infinity Fabric bandwidth per accelerator per direction
 *                     (default 0: no scale-up domain)
 *   collective_bw     bus bandwidth NCCL collectives reach over those links, where measured
 *                     (default 0: not known; the link rate stands for it)
 *   nic_bw            scale-out NIC bandwidth per accelerator, e.g. "400Gb/s" (default 0)
 *   price_per_hour    USD per accelerator-hour (default 0: unknown)
 *   compute_calibration  a compute calibration file (compute-calibration.h; relative to the
 *                     scenario's directory): kernels are priced by its curves at this
 *                     accelerator's peaks and bandwidth (default: none, the plain roofline)
 */
struct HardwareSpec
{
    std::string name;                        //!< display name
    std::map<std::string, double> peakFlops; //!< dense peak FLOP/s by dtype name ("bf16", "fp8")
    uint32_t sms = 0;                        //!< SMs (AMD: CUs); 0 unknown
    double hbmCapacityBytes = 0;             //!< HBM capacity
    double hbmBwBytesPerSec = 0;             //!< HBM bandwidth
    double etaCompute = 0.7;                 //!< achievable fraction of peak FLOPs (η_c)
    double etaMemory = 0.85;                 //!< achievable fraction of HBM bandwidth (η_m)
    double launchOverheadSec = 3e-6;         //!< per-kernel fixed overhead
    double scaleUpBwBytesPerSec = 0;         //!< scale-up bandwidth per direction (0: none)
    double collectiveBwBytesPerSec = 0;      //!< measured collective bus bandwidth (0: unknown)
    double nicBwBytesPerSec = 0;             //!< scale-out NIC bandwidth (0: none)
    double pricePerHour = 0;                 //!< USD per accelerator-hour (0: unknown)
    std::string computeCalibrationFile;      //!< compute_calibration as resolved ("" if none)
    std::shared_ptr<const ComputeCalibration> computeCalibration; //!< its curves (null if none)

    /**
     * \brief Parse an accelerator object (see the class comment); errors name \p file and
     * \p prefix.
     */
    static HardwareSpec FromJson(const nlohmann::json& j,
                                 const std::string& file = "",
                                 const std::string& prefix = "");

    /**
     * \brief The hardware field of a scenario: a preset name (string) or an object as FromJson.
     */
    static HardwareSpec Load(const nlohmann::json& v,
                             const std::string& file = "",
                             const std::string& field = "hardware");

    /// A built-in accelerator by case-insensitive name; InputError if unknown.
    static HardwareSpec Preset(const std::string& name);

    /// Names of the built-in accelerators.
    static std::vector<std::string> PresetNames();

    /**
     * \brief Peak FLOP/s for math in \p t. fp16 and bf16 stand in for each other; fp8 falls back
     * to the 16-bit peak on parts without fp8 (the weights are up-converted); fp32 without its
     * own entry runs as TF32 on tensor cores at half the 16-bit peak.
     */
    double PeakFlops(DType t) const;

    /// Sustained FLOP/s: PeakFlops(t) x etaCompute.
    double EffectiveFlops(DType t) const;

    /// Sustained HBM bandwidth: hbmBwBytesPerSec x etaMemory.
    double EffectiveHbmBw() const;
};

} // namespace fabricsim

#endif
