/*
 * Chakra execution-trace import and export. Import: every node of every rank's .et file becomes
 * an op (COMP nodes compute, COMM_COLL collectives with comm_type and comm_size in bytes,
 * COMM_SEND / COMM_RECV point-to-point), with control and data dependencies as edges.
 * Export: an imported or recorded trace as one .et per rank that ASTRA-sim's feeder reads.
 */
#ifndef FABRICSIM_TRACES_CHAKRA_IMPORT_H
#define FABRICSIM_TRACES_CHAKRA_IMPORT_H

#include "chakra-trace.h"
#include "trace-ir.h"

#include <string>
#include <vector>

namespace fabricsim
{

/// Import settings.
struct ChakraImportOptions
{
    /// CPU ops (is_cpu_op) take their recorded time on a CPU lane. Off by default, as in
    /// ASTRA-sim: a CPU op's duration includes its nested children and the GPU work it
    /// launched, so counting it serially would count time twice.
    bool cpuOps = false;
    /// Control dependencies become edges too. Off by default, as in ASTRA-sim's feeder: in
    /// traces from PyTorch they tie a CPU op to the kernel it launched in both directions
    /// (the kernel's data dependency is the CPU op), which would make cycles.
    bool ctrlDeps = false;
    /// Ranks in the job when the files do not say (Chakra has no world size); 0 = the files.
    uint32_t worldSize = 0;
};

/**
 * Import one .et per rank: rank from a "<name>.<rank>.et" file name, else the position in
 * \p files; then CompleteRanks.
 * \throws fabricsim::InputError naming file, node and field on malformed input
 */
ImportedTrace ImportChakra(const std::vector<std::string>& files,
                           const ChakraImportOptions& opt = {});

/// Import one decoded trace as rank \p rank into \p out (no CompleteRanks).
void ImportChakraTrace(const ChakraTrace& trace,
                       const std::string& file,
                       uint32_t rank,
                       const ChakraImportOptions& opt,
                       ImportedTrace& out);

/// The rank a "<name>.<rank>.et" file name carries, or -1.
int64_t RankFromChakraName(const std::string& path);

/// True when \p head (the first bytes of a file) can start a Chakra stream (not JSON or gzip).
bool LooksLikeChakra(std::string_view head);

/**
 * The trace of rank \p rank as Chakra nodes (ids = op index + 1). Compute ops become COMP
 * nodes (is_cpu_op for host ops); sized collectives COMM_COLL with comm_type, comm_size
 * (bytes) and involved_dim; sends and receives COMM_SEND / COMM_RECV; unsized communication a
 * COMP node of its recorded duration. Durations are whole microseconds as Chakra wants; the
 * exact picoseconds, dependency lags and start offsets ride in fabricsim_* attributes, which
 * ASTRA-sim ignores and ImportChakra reads back.
 */
ChakraTrace ExportChakra(const ImportedTrace& trace, uint32_t rank);

/// Write DIR/\p prefix.<rank>.et for every rank; returns the paths written.
std::vector<std::string> ExportChakraFiles(const ImportedTrace& trace,
                                           const std::string& dir,
                                           const std::string& prefix);

} // namespace fabricsim

#endif
