/*
 * Serving metrics: per-request latencies (TTFT, TPOT, ITL, E2E), throughput, SLO goodput, cost,
 * MFU / MBU, and the per-step split of time into compute, exposed communication per kind,
 * synchronisation wait and idle.
 */
#ifndef FABRICSIM_SERVING_METRICS_H
#define FABRICSIM_SERVING_METRICS_H

#include "chrome-trace.h"
#include "inference-scenario.h"
#include "step-executor.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace fabricsim
{

/**
 * \brief Summary of a sample: mean and percentiles (linear interpolation between order
 * statistics, as numpy's default).
 */
struct Distribution
{
    size_t count = 0; //!< samples
    double mean = 0;  //!< mean
    double p50 = 0;   //!< median
    double p90 = 0;   //!< 90th percentile
    double p99 = 0;   //!< 99th percentile
    double max = 0;   //!< largest

    /// Summarise \p samples (empty: all zero).
    static Distribution Of(std::vector<double> samples);

    /// {"count", "mean", "p50", "p90", "p99", "max"}.
    nlohmann::json ToJson() const;
};

/// The \p p-th percentile (0..100) of sorted \p v, interpolating linearly.
double Percentile(const std::vector<double>& sorted, double p);

/**
 * \brief What happened to one request.
 */
struct RequestRecord
{
    uint64_t id = 0;                 //!< request id
    int64_t arrivalPs = 0;           //!< arrival
    uint64_t promptTokens = 0;       //!< LLM prompt tokens
    uint64_t outputTokens = 0;       //!< tokens to generate
    std::vector<int64_t> tokenPs;    //!< when each output token was produced
    uint32_t preemptions = 0;        //!< times preempted
    uint64_t cachedPromptTokens = 0; //!< prompt tokens found in the prefix cache when admitted
    uint64_t decodeCachedTokens = 0; //!< disaggregated: prompt tokens the decode engine held
    /// Disaggregated KV transfer start (-1: none): bulk when the sends start, layer-wise when
    /// prefill admits the request (its sends overlap the prefill).
    int64_t kvTransferStartPs = -1;
    int64_t kvTransferEndPs = -1; //!< its end
    uint64_t kvTransferBytes = 0; //!< its bytes
    /// Launch of the first step that computed its prompt (-1: none yet): arrival to here is
    /// queueing, from here to the first token prefill.
    int64_t prefillStartPs = -1;
    /// When its engine's loop took it (-1: not yet): the first launch decision at or after the
    /// arrival, vLLM's queued_ts; the measured runs' TTFT and E2E count from here.
    int64_t queuedPs = -1;
    /// When a scheduling decision first gave it tokens (-1: not yet): vLLM's scheduled_ts; with
    /// async scheduling one step before the launch that runs them.
    int64_t scheduledPs = -1;

    /// All tokens produced.
    bool Finished() const
    {
        return !tokenPs.empty() && tokenPs.size() >= outputTokens;
    }

    /// When the first token reaches the user: when prefill produced it, or, disaggregated, no
    /// earlier than the end of the KV transfer, since the decode instance streams the tokens
    /// and must hold the KV cache first (DistServe's definition).
    int64_t FirstTokenPs() const;
    /// First token (as it reaches the user) - arrival, in ms.
    double TtftMs() const;
    /// (last - first) / (tokens - 1) in ms; 0 when one token.
    double TpotMs() const;
    /// Gaps between consecutive tokens as the user sees them (the first from FirstTokenPs), in ms.
    std::vector<double> ItlMs() const;
    /// Completion - arrival, in ms.
    double E2eMs() const;
    /// True when TTFT <= ttft_ms and (single token or TPOT <= tpot_ms).
    bool MeetsSlo(const SloSpec& slo) const;
};

/**
 * \brief One engine step: size and where the time went (means over its ranks).
 */
struct StepRecord
{
    uint64_t step = 0;                    //!< step id
    uint32_t pool = 0;                    //!< pool
    uint32_t engine = 0;                  //!< engine in the pool
    uint32_t virtualEngine = 0;           //!< pipeline virtual engine
    int64_t launchPs = 0;                 //!< submitted
    int64_t endPs = 0;                    //!< last rank done
    uint32_t sequences = 0;               //!< sequences in the step
    uint64_t prefillTokens = 0;           //!< prompt (and recompute) tokens
    uint64_t decodeTokens = 0;            //!< decode tokens
    double computePs = 0;                 //!< mean compute per rank
    std::map<std::string, double> commPs; //!< mean exposed communication per category
    double syncPs = 0;                    //!< mean sync wait
    double idlePs = 0;                    //!< mean idle (duration - the rest)
    double flops = 0;                     //!< FLOPs over all ranks
    double hbmBytes = 0;                  //!< HBM bytes over all ranks

    /// Fill the timing fields from executor statistics.
    void SetTiming(const StepStats& stats);

    /// Duration in ps.
    int64_t DurationPs() const
    {
        return endPs - launchPs;
    }

    /// JSON (times in ms).
    nlohmann::json ToJson() const;
};

/**
 * \brief Everything a serving run produced. Metrics are computed from the records on demand.
 */
struct ServingResult
{
    std::vector<RequestRecord> requests; //!< per request, by id
    std::vector<StepRecord> steps;       //!< per step, in completion order
    SloSpec slo;                         //!< SLOs of the scenario
    uint32_t accelerators = 0;           //!< accelerators used
    double pricePerHour = 0;             //!< USD per accelerator-hour
    double peakFlops = 0;                //!< peak FLOP/s per accelerator (model's math dtype)
    double hbmBwBytesPerSec = 0;         //!< HBM bandwidth per accelerator
    nlohmann::json pools = nlohmann::json::array(); //!< per pool: layout and KV budget
    std::vector<std::string> incomplete; //!< why requests did not finish (empty when all did)
    uint64_t warmupRequests = 0; //!< warm-up requests run first and left out of every figure
    bool prefixCaching = false;  //!< prefix caching on: hits reported
    std::vector<nlohmann::json> programTrace; //!< recorded programs (JSON lines), if asked
    std::shared_ptr<ChromeTrace> timeline;    //!< timeline, if asked

    /// Time from the first arrival to the last token of a finished request, in seconds: the
    /// span the rates (tokens/s, requests/s, goodput, cost) are over.
    double DurationSec() const;
    /// Time from the first arrival to the last token of any request, in seconds: the span of
    /// the work executed, which MFU and MBU are over.
    double SpanSec() const;
    /// Requests that produced all their tokens.
    size_t Completed() const;
    /// TTFT of finished requests (ms).
    Distribution Ttft() const;
    /// TPOT of finished requests with at least two tokens (ms).
    Distribution Tpot() const;
    /// All inter-token gaps (ms).
    Distribution Itl() const;
    /// E2E of finished requests (ms).
    Distribution E2e() const;
    /// Prompt tokens of finished requests per second.
    double PromptTokensPerSec() const;
    /// Generated tokens per second.
    double GenerationTokensPerSec() const;
    /// Share of requests that meet both SLOs (unfinished ones do not).
    double SloAttainment() const;
    /// Requests per second that meet both SLOs.
    double GoodputRequestsPerSec() const;
    /// USD per million generated tokens: price x accelerators x hours / (tokens / 1e6).
    double CostPerMillionTokens() const;
    /// Achieved FLOPs / (accelerators x peak x duration).
    double Mfu() const;
    /// Achieved HBM bytes / (accelerators x bandwidth x duration).
    double Mbu() const;
    /// Prefix caching: prompt tokens of the requests admitted, those found in the cache when
    /// first admitted (computed by none of their steps), their ratio, requests with a hit;
    /// disaggregated, also the tokens the decode engines already held (not transferred).
    nlohmann::json PrefixCacheJson() const;
    /// Sum over steps of each step's mean per-rank breakdown (ms): compute, comm, sync, idle.
    nlohmann::json Breakdown() const;

    /**
     * \brief Metrics JSON: ttft_ms, tpot_ms, itl_ms, e2e_ms (mean, p50, p90, p99),
     * throughput_tokens_per_s and its prompt / generation parts, requests_per_s, slo
     * attainment and goodput (when SLOs are set), cost_per_million_tokens, mfu, mbu, pools,
     * KV transfer time and its part after the first token (disaggregation),
     * the step breakdown, and per step records when \p perStep.
     */
    nlohmann::json ToJson(bool perStep = true) const;

    /// Write the recorded programs as JSON lines to \p out (its errors are the caller's to
    /// check: OutputDir::Commit does).
    void WriteProgramTrace(std::ostream& out) const;
};

} // namespace fabricsim

#endif
