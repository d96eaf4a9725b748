/*
 * The roofline's estimate of one measured kernel call (kernel-tables.h) and its error against
 * the measurement, summarised per op class and dtype: the baseline the compute calibration
 * starts from.
 */
#ifndef FABRICSIM_WORKLOADS_KERNEL_ROOFLINE_H
#define FABRICSIM_WORKLOADS_KERNEL_ROOFLINE_H

#include "hardware-spec.h"
#include "kernel-tables.h"
#include "roofline.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <vector>

namespace fabricsim
{

/**
 * \brief The roofline op of one call. No launch overhead: the tables are timed inside CUDA
 * graphs. GEMM: 2mnk FLOPs; bytes X, W and Y (fp8: X read in bf16 and written and read in
 * fp8 by the quantisation step, W in fp8, Y in bf16). Context attention: 4 h d isl (isl + 1) / 2
 * FLOPs per sequence (causal), Q, K, V read, O written, K and V written to the cache.
 * Generation: 4 h d (step + 1) FLOPs per sequence, its K and V read, q and o. MoE (balanced
 * routing): 6 H I' FLOPs per (token, local expert) pair, I' = inter / tp, tokens x topk / ep
 * pairs; the weights of the local experts a batch touches, E' (1 - (1 - k / E)^T) of the
 * E' = E / ep, tokens in and out and the pairs' intermediate.
 */
ComputeOp KernelRooflineOp(const HardwareSpec& hw, const GemmTime& g);
ComputeOp KernelRooflineOp(const HardwareSpec& hw, const AttentionTime& a, bool context);
ComputeOp KernelRooflineOp(const HardwareSpec& hw, const MoeTime& m);
ComputeOp KernelRooflineOp(const HardwareSpec& hw, const ElementwiseTime& e);

/**
 * \brief The roofline op of one kernel call of the serving loop (roofline.h), by the formulas
 * of its table's rows; a prompt chunk after a cached prefix also attends to the prefix (4 h d
 * isl x cached more FLOPs) and reads its K and V.
 */
ComputeOp KernelShapeOp(const HardwareSpec& hw, const KernelShape& s);

/// The size variable of a shape, as CalibrationCurve keys it (GEMM m, prefill isl, decode
/// cached + 1, MoE tokens).
double KernelShapeSize(const KernelShape& s);

/// The second size variable of a shape, as a curve by levels keys it: GEMM n, MoE the
/// per-expert FFN width on the rank (inter / tp); 1 for the other kernels.
double KernelShapeLevel(const KernelShape& s);

/// The roofline op of row \p row of \p table (whichever kind the table holds), costed on \p hw.
ComputeOp KernelRooflineOp(const HardwareSpec& hw, const KernelTable& table, size_t row);

/// The dtype of row \p row ("bfloat16", "fp8", ...).
const std::string& KernelRowDtype(const KernelTable& table, size_t row);

/// The math dtype of a table's dtype name ("fp8_block" computes at the fp8 peak).
DType KernelMathDtype(const std::string& name);

/// The measured latency of row \p row, in ns.
double MeasuredRowNs(const KernelTable& table, size_t row);

/// Which rows of a table a fit uses or an error summary covers (the row's index in its table).
using RowFilter = std::function<bool(size_t row)>;

/// A model's op for row \p row of a table (timeNs its prediction).
using RowPricer = std::function<ComputeOp(const KernelTable& table, size_t row)>;

/// One class of rows (op and dtype) and the roofline's error over them.
struct KernelErrorClass
{
    std::string op;          //!< op_name
    std::string dtype;       //!< the row's dtype
    size_t rows = 0;         //!< rows
    double mape = 0;         //!< mean |predicted - measured| / measured, %
    double medianError = 0;  //!< median signed error, %
    double worstError = 0;   //!< the signed error of largest magnitude, %
    double computeBound = 0; //!< share of rows the roofline calls compute-bound
};

/// The rows of \p table that \p use keeps (all when empty), priced by \p price, against
/// their measurements, per dtype.
std::vector<KernelErrorClass> KernelErrors(const KernelTable& table,
                                           const RowPricer& price,
                                           const RowFilter& use = {});

/// Every row of \p table against the roofline on \p hw, per dtype.
std::vector<KernelErrorClass> KernelRooflineErrors(const KernelTable& table,
                                                   const HardwareSpec& hw);

/// {"op", "dtype", "rows", "mape_pct", "median_error_pct", "worst_error_pct", "compute_bound"}.
nlohmann::json ToJson(const KernelErrorClass& c);

} // namespace fabricsim

#endif
