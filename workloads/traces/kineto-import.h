/*
 * PyTorch profiler (Kineto) Chrome-trace import, plain or gzip JSON (ts and dur in
 * microseconds). Per rank, the GPU ops of the chosen profiler steps in stream order with their
 * measured durations become compute ops; NCCL kernels (ncclKernel_* and ncclDevKernel_*) become
 * collectives whose type, size, dtype and group come from the kernel's collective metadata or,
 * where a trace has none, from the CPU op that launched it (record_param_comms with the same
 * fields, or the nccl:<collective> annotation's input shape and type). A kernel that cannot be
 * sized is kept with its recorded duration and listed, never guessed.
 *
 * Dependencies are inferred from the recorded timeline: stream order, with the recorded gap kept
 * as host time; a collective waits for the latest op that ended before it on each compute
 * stream; a compute op that began right after another stream's op ended, after its own stream
 * sat idle, waits for it (the CUDA event waits NCCL and DDP insert).
 */
#ifndef FABRICSIM_TRACES_KINETO_IMPORT_H
#define FABRICSIM_TRACES_KINETO_IMPORT_H

#include "trace-ir.h"

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace fabricsim
{

/// Import settings.
struct KinetoOptions
{
    int64_t step = -1; ///< import ProfilerStep#step only; -1 = every profiler step in the trace
    /// A compute op that starts within this time of another stream's op ending, after its own
    /// stream idled at least m_minIdlePs, is taken to have waited for it.
    int64_t waitWindowPs = 10000000;
    int64_t minIdlePs = 5000000;
    /// Ranks in the job when the traces do not say (no distributedInfo); 0 = the traces.
    uint32_t worldSize = 0;
};

/**
 * Import one file per rank (rank from distributedInfo, else the position in \p files) and
 * complete the world (CompleteRanks).
 * \throws fabricsim::InputError naming the file and field on unreadable or malformed traces
 */
ImportedTrace ImportKineto(const std::vector<std::string>& files, const KinetoOptions& opt = {});

/// Import one already-read trace text as rank \p defaultRank into \p out (no CompleteRanks).
void ImportKinetoText(std::string_view text,
                      const std::string& file,
                      uint32_t defaultRank,
                      const KinetoOptions& opt,
                      ImportedTrace& out);

/// True when \p head (the start of a file, decompressed) looks like a Chrome-trace JSON.
bool LooksLikeKineto(std::string_view head);

} // namespace fabricsim

#endif
