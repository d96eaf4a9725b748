/*
 * nccl-tests conventions: message sizes with K/M/G suffixes, the size sweep, element counts,
 * algorithm and bus bandwidth (GB = 1e9 bytes, busbw factors per collective), and the result
 * table in nccl-tests' layout, plus the same rows as JSON and CSV.
 */
#ifndef FABRICSIM_NCCL_REPORT_H
#define FABRICSIM_NCCL_REPORT_H

#include "schedule-ir.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace fabricsim
{

/// Element type of the simulated buffers (nccl-tests' default: float).
constexpr uint32_t kNcclTypeBytes = 4;

/**
 * Parses a size as nccl-tests does: a number with an optional K, M or G suffix (powers of
 * 1024, either case, an optional trailing B). \throws fabricsim::InputError naming \p field
 */
uint64_t ParseNcclSize(const std::string& text, const std::string& field);

/// min, min*f, ... up to max (nccl-tests -b -e -f); f >= 2 required by the caller.
std::vector<uint64_t> SizeSweep(uint64_t minBytes, uint64_t maxBytes, uint64_t factor);

/**
 * The size nccl-tests actually runs for a requested size: whole elements, and for allgather,
 * reducescatter and alltoall a multiple of ranks elements. 0 when fewer elements than that.
 */
uint64_t AlignedSize(CollectiveKind kind, uint64_t bytes, int ranks);

/// nccl-tests' count column: elements of the buffer (allreduce, broadcast, reduce) or per rank
/// (allgather, reducescatter, alltoall).
uint64_t ElementCount(CollectiveKind kind, uint64_t bytes, int ranks);

/// busbw / algbw: 2(n-1)/n allreduce; (n-1)/n allgather, reducescatter, alltoall; 1 otherwise.
double BusBandwidthFactor(CollectiveKind kind, int ranks);

/// One size of a sweep.
struct NcclRow
{
    uint64_t m_sizeBytes = 0;
    uint64_t m_count = 0;
    std::string m_type = "float";
    std::string m_redop = "sum"; ///< "sum", or "none" for data movement only
    int m_root = -1;
    double m_timeUs = 0;
    double m_algbwGbps = 0;
    double m_busbwGbps = 0;
    int64_t m_wrong = 0; ///< -1 = not checked (N/A)
    bool m_complete = true;
};

/// A row for \p kind on \p ranks: count, redop, root and bandwidths from the time.
NcclRow MakeNcclRow(
    CollectiveKind kind, int ranks, uint64_t bytes, double timeUs, int64_t wrong, int root = 0);

/// Header lines of the nccl-tests table (column titles and units).
std::string NcclTableHeader();

/// One table line: the out-of-place and in-place columns (the executor's timing does not
/// depend on buffer aliasing, so both groups hold the simulated time).
std::string NcclTableLine(const NcclRow& row);

/// "# Avg bus bandwidth    : x" over the complete rows, as nccl-tests closes its output.
std::string NcclAverageLine(const std::vector<NcclRow>& rows);

/// Mean busbw over complete rows (0 when none).
double AverageBusBandwidth(const std::vector<NcclRow>& rows);

/// Rows as JSON objects (size_bytes, count, type, redop, root, time_us, algbw_gbps, busbw_gbps,
/// wrong, complete).
nlohmann::json NcclRowsJson(const std::vector<NcclRow>& rows);

/// Rows as CSV with a header line (same columns as the JSON).
std::string NcclRowsCsv(const std::vector<NcclRow>& rows);

} // namespace fabricsim

#endif
