/*
 * Compute calibration: per kernel class (op and dtype) a curve of roofline parameters over the
 * class's size variable, fitted on one GPU's measured kernel tables (kernel-tables.h) and carried
 * to another by its peak FLOP/s and HBM bandwidth. A kernel call costs
 *
 *     t = overhead + max(F / (peak x eta_compute), B / (hbm_bw x eta_memory))
 *
 * with F and B the FLOPs and HBM bytes of its roofline op (kernel-roofline.h) and the three
 * parameters read off the curve at its size. On another GPU than the fitted one, the memory
 * term splits: B / hbm_bw at the nominal rate plus the fitted GPU's shortfall below it,
 * B (1 / eta_memory - 1) / hbm_bw_fit x sms_fit / sms, which is latency (bytes in flight per SM)
 * and does not shrink with a faster memory. The fit and its file format: compute-calibration-fit.h
 * and docs/inference.md "Compute calibration".
 */
#ifndef FABRICSIM_WORKLOADS_COMPUTE_CALIBRATION_H
#define FABRICSIM_WORKLOADS_COMPUTE_CALIBRATION_H

#include "hardware-spec.h"
#include "kernel-roofline.h"
#include "kernel-tables.h"
#include "roofline.h"

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

namespace fabricsim
{

/// The parameters of a class at one size (a power of two).
struct CalibrationPoint
{
    double log2Size = 0;   //!< log2 of the size variable
    double overheadNs = 0; //!< fixed cost per call
    double etaCompute = 1; //!< achieved fraction of peak FLOP/s
    double etaMemory = 1;  //!< achieved fraction of HBM bandwidth
    size_t rows = 0;       //!< rows the fit used at this size
    double fitMape = 0;    //!< MAPE over those rows, %
    double log2N = 0;      //!< curves by level: log2 of the level (GEMM n, MoE inter / tp)
};

/**
 * \brief One class's curve. The size variable: GEMM m, context attention isl (new tokens per
 * sequence), generation attention step + 1 (the context each query reads), MoE num_tokens,
 * elementwise bytes (read + written: where the working set leaves the L2 matters more than the
 * token count).
 * Between points the parameters are linear in log2 size; outside, the end point holds. A GEMM
 * curve may be by n (byN): one line of m per level of n (power of two), the points ordered by
 * level then size; between levels the parameters are linear in log2 n, outside the end level
 * holds (a GEMM's tiling, and so its efficiency at a given m, depends on n as much as on m).
 * A MoE curve may be by levels of the per-expert FFN width on the rank (inter / tp: the N of
 * each expert's gate-up GEMM and the K of its down GEMM), for the same reason.
 */
struct CalibrationCurve
{
    KernelOp op = KernelOp::Gemm;         //!< the table
    std::string dtype;                    //!< the table's dtype ("bfloat16", "fp8", ...)
    std::vector<CalibrationPoint> points; //!< by log2N, then increasing log2Size; at least one
    bool byN = false;                     //!< GEMM, MoE: one line per level (log2N)
    /// Where this curve was fitted when not where the file's others were (a calibration that
    /// takes some classes from another: fit-compute --base): device, hardware, source, rows.
    /// Empty: the file's fitted_on.
    std::map<std::string, std::string> fittedOn;
    /// The GPU the curve was fitted on (FitComputeCalibration, or ResolveFitHardware from its
    /// preset name): HBM bandwidth (0: unknown, the curve carries by efficiency alone) and SMs.
    double fitHbmBwBytesPerSec = 0;
    uint32_t fitSms = 0;

    /// The parameters at \p size (>= 1) and, for a curve by levels, level \p n (GEMM n, MoE
    /// inter / tp: KernelShapeLevel).
    CalibrationPoint At(double size, double n = 1) const;
};

/// The size variable of row \p row of \p table (see CalibrationCurve).
double KernelRowSize(const KernelTable& table, size_t row);

/// A row's level (KernelShapeLevel): GEMM n, MoE inter / tp, 1 for the other tables.
double KernelRowN(const KernelTable& table, size_t row);

/**
 * \brief A calibration: the curves of every class it was fitted on, and where it came from.
 */
class ComputeCalibration
{
  public:
    std::string device;                   //!< the GPU it was fitted on (tables' device)
    std::string hardware;                 //!< the preset whose peaks the fit divided by
    std::string source;                   //!< framework and version of the tables
    std::string rows;                     //!< which rows the fit used
    std::vector<CalibrationCurve> curves; //!< one per (op, dtype)

    /// Look up the preset each curve was fitted on (its own fitted_on hardware, else the
    /// file's) and note its HBM bandwidth and SMs; a name that is no preset leaves them 0.
    void ResolveFitHardware();

    /// The curve of (op, dtype), nullptr if the calibration has none.
    const CalibrationCurve* Find(KernelOp op, const std::string& dtype) const;

    /**
     * \brief Time of \p op's FLOPs and bytes (as KernelRooflineOp gives them) on \p hw with the
     * parameters of \p curve at \p size (and GEMM \p n), math at \p dtype's peak: fills
     * computeNs, memoryNs, timeNs (overhead included). Returns the parameters it used.
     */
    static CalibrationPoint Cost(const HardwareSpec& hw,
                                 const CalibrationCurve& curve,
                                 double size,
                                 DType dtype,
                                 ComputeOp& op,
                                 double n = 1);

    /// The file form: {"format", "version", "fitted_on", "model", "curves": [...]}.
    nlohmann::json ToJson() const;

    /**
     * \brief Parse the file form; InputError naming \p file and the field for a wrong format
     * or version, an unknown op, a duplicate class, points out of order (by log2_n, then
     * log2_size), log2_n on some points only or on a curve other than GEMM or MoE, or a parameter
     * out of range (overhead 0-1 h, efficiencies in (0, 4]).
     */
    static ComputeCalibration FromJson(const nlohmann::json& j, const std::string& file);

    /// Read and parse a calibration file (bounded read, as every JSON input).
    static ComputeCalibration Read(const std::string& path);
};

/// The table dtype whose curve prices math in \p d ("bfloat16" for 16-bit, "fp8"; "" for none).
std::string CalibrationDtype(DType d);

/**
 * \brief The curve \p cal prices shape \p s with: a block-scaled fp8 shape takes the
 * "fp8_block" curve of its op where the calibration has one (the corpus has MoE rows of it, no
 * GEMM rows), else the per-tensor "fp8" one; other shapes their CalibrationDtype's. nullptr when
 * the calibration has neither.
 */
const CalibrationCurve* CalibrationCurveFor(const ComputeCalibration& cal, const KernelShape& s);

/**
 * \brief Price the kernels of \p op (its shapes) with \p cal on \p hw: each shape costs its
 * curve's overhead plus the slower of its compute and memory terms, its FLOPs and bytes as
 * KernelShapeOp gives them; the prompt chunks of one attention op share one overhead (one
 * varlen kernel runs them all); the fused MoE takes the op's own FLOPs and bytes (they carry the
 * routing model's load on this rank). Sets computeNs and memoryNs to the sums of the shapes'
 * terms, kernelNs to the calibrated total (measured inside CUDA graphs, so the gaps between
 * kernels are in it) and timeNs to the larger of it and kernels x launch_overhead (eager launches
 * are asynchronous: they show only when the kernels are shorter). An op
 * without shapes, or with a shape whose class the calibration lacks, keeps its roofline cost.
 */
void CalibrateOp(const HardwareSpec& hw, const ComputeCalibration& cal, ComputeOp& op);

/// The calibrated op of row \p row of \p table on \p hw (a class the calibration lacks
/// prices as the plain roofline at hw's efficiencies).
ComputeOp CalibratedRowOp(const ComputeCalibration& cal,
                          const HardwareSpec& hw,
                          const KernelTable& table,
                          size_t row);

} // namespace fabricsim

#endif
