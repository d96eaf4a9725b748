/*
 * Measured collective timings for calibration: nccl-tests text logs in their standard format
 * and the CSV tables of the shared corpus (aiconfigurator layout: message_size in ELEMENTS,
 * latency in MILLISECONDS), plus the DeepEP dispatch/combine tables (microseconds). Every point
 * is normalised to the nccl-tests size convention in bytes and a time in microseconds.
 */
#ifndef FABRICSIM_CALIBRATION_MEASUREMENT_READER_H
#define FABRICSIM_CALIBRATION_MEASUREMENT_READER_H

#include "schedule-ir.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace fabricsim
{

/// One measured (collective, size, ranks) point.
struct MeasuredPoint
{
    CollectiveKind kind = CollectiveKind::kAllReduce;
    uint32_t ranks = 0;
    uint64_t bytes = 0; ///< nccl-tests size convention
    double timeUs = 0;  ///< measured time of one collective
    std::string dtype;  ///< as the source names it ("half", "float", ...)
    std::string device; ///< "" when the source does not say
    std::string source; ///< file:line
};

/// One DeepEP dispatch + combine measurement (8 ranks on one node).
struct MoePoint
{
    std::string mode;    ///< "ll" (low latency) or "normal"
    uint32_t tokens = 0; ///< per rank
    uint32_t hidden = 0;
    uint32_t topk = 0;
    uint32_t experts = 0;
    uint32_t sms = 0;   ///< normal mode: SMs given to the kernels
    uint32_t nodes = 1; ///< node_num: servers of 8 GPUs the EP group spans
    std::string device; ///< the GPU ("NVIDIA H200"), where the table names it
    double dispatchUs = 0;
    double combineUs = 0;
    std::string source;
};

/// What a measurement file holds.
struct MeasurementSet
{
    std::vector<MeasuredPoint> collectives;
    std::vector<MoePoint> moe;
};

/**
 * Parse the corpus CSV layout (header with op_name, nccl_dtype, num_gpus, message_size,
 * latency; device optional) or a DeepEP table (header with dispatch_avg_t_us or
 * dispatch_transmit_us). \throws fabricsim::InputError naming \p file, the line and the column
 */
MeasurementSet ParseMeasurementCsv(std::string_view text, const std::string& file);

/**
 * Parse an nccl-tests log: the collective from a "# Collective test starting: <name>_perf" line,
 * else from \p file's name (all_reduce_perf.txt) or \p collectiveHint; ranks from the
 * "#  Rank N ..." lines (else nThread x nGpus); per size row the out-of-place time.
 * \throws fabricsim::InputError naming \p file and line on malformed rows or a missing collective
 */
std::vector<MeasuredPoint> ParseNcclTestsLog(std::string_view text,
                                             const std::string& file,
                                             const std::string& collectiveHint = "");

/// Read \p path: CSV when its first line has commas and names columns, else an nccl-tests log.
MeasurementSet ReadMeasurements(const std::string& path, const std::string& collectiveHint = "");

/// The collective of an nccl-tests binary or corpus op name ("all_reduce_perf", "alltoall").
bool CollectiveOfTestName(const std::string& name, CollectiveKind& kind);

} // namespace fabricsim

#endif
