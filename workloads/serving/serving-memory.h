/*
 * What a serving run holds in memory, estimated before it starts: requests are materialised up
 * front and every request, output token and step leaves a record, so a request count of 10^9
 * (or a trace of a billion lines) would otherwise end in the memory limit part-way through.
 */
#ifndef FABRICSIM_SERVING_SERVING_MEMORY_H
#define FABRICSIM_SERVING_SERVING_MEMORY_H

#include <cstdint>
#include <string>

namespace fabricsim
{

/// Held per request (request, sequence state, record), per output token (its timestamp and
/// scheduler state) and per step (step record): measured on a one-GPU Llama-3-8B run (1e5 to
/// 4e5 requests: 245 B + 20 B per token; 1e5 steps at max_num_seqs 1: 2.3 kB each), rounded up.
struct ServingMemoryCost
{
    static constexpr double kPerRequest = 320;
    static constexpr double kPerOutputToken = 32;
    static constexpr double kPerStep = 3072;
    /// A timeline holds its slices until written: per rank, model layer and recorded step,
    /// 12.7-12.8 kB measured (Llama-3-70B TP 8, 80 layers, 200 steps: 1.63 GB; Qwen3-30B-A3B
    /// EP 32, 48 layers, 16 steps: 0.31 GB), rounded up. Recorded programs are streamed to disk.
    static constexpr double kTimelinePerRankLayerStep = 16384;
};

/// Bytes a timeline of \p steps steps of engines of \p engineRanks ranks holds for a model of
/// \p layers layers.
double EstimateTimelineBytes(double steps, double engineRanks, double layers);

/// Bytes a run of \p requests generating \p outputTokens in all holds, with at most
/// \p maxNumSeqs sequences per step (so at least outputTokens / maxNumSeqs steps).
double EstimateServingBytes(double requests, double outputTokens, double maxNumSeqs);

/// Throws InputError(\p file, \p field) when that estimate plus \p recordingBytes (a timeline,
/// EstimateTimelineBytes) exceeds the memory limit (MemoryLimitBytes, `--memory-limit`), stating
/// the estimate and the limit.
void CheckServingFitsMemory(double requests,
                            double outputTokens,
                            double maxNumSeqs,
                            const std::string& file,
                            const std::string& field,
                            double recordingBytes = 0);

} // namespace fabricsim

#endif
