/*
 * A measured serving run as vLLM records it in LLMServingSim's bench format (requests.jsonl
 * with each request's engine timestamps; summary.txt with the measured figures beside another
 * simulator's), and its metrics in that format's definitions: fabricsim's predictions are held
 * against the very numbers upstream reports.
 */
#ifndef FABRICSIM_SERVING_MEASURED_RUN_H
#define FABRICSIM_SERVING_MEASURED_RUN_H

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace fabricsim
{

/// One request of a measured run; times in seconds on the engine's monotonic clock.
struct MeasuredRequest
{
    uint64_t inputTokens = 0;  //!< input_toks (prompt)
    uint64_t outputTokens = 0; //!< output_toks (generated, exact: min = max tokens)
    double arrivalS = -1;      //!< arrival_time (wall clock, epoch; -1: not recorded)
    double queuedS = 0;        //!< queued_ts: when the engine took the request
    double scheduledS = -1;    //!< scheduled_ts: first scheduled (-1: not recorded)
    double firstTokenS = 0;    //!< first_token_ts
    double lastTokenS = 0;     //!< last_token_ts
};

/// Per-request latencies (ms, in request order) and the run's output throughput.
struct ServingLatencies
{
    std::vector<double> ttftMs;    //!< first token - queued (queueing included)
    std::vector<double> tpotMs;    //!< (last - first) / max(1, output - 1)
    std::vector<double> e2eMs;     //!< last token - queued
    double outputTokensPerSec = 0; //!< output tokens / (last token - first queued)
};

/// Reads requests.jsonl (input_toks, output_toks, queued_ts, first_token_ts, last_token_ts;
/// scheduled_ts where present; other keys ignored). Errors name the file and "line N.key".
std::vector<MeasuredRequest> ReadMeasuredRequests(const std::string& path);

/// The metrics of \p reqs in upstream's definitions (its README and validator).
ServingLatencies LatenciesOf(const std::vector<MeasuredRequest>& reqs);

/**
 * \brief When each request of \p reqs reached the engine, in seconds from the first: its
 * arrival_time offset where every request records one (the engine takes a request only
 * between steps, so queued_ts lags the arrival by up to a step), else its queued_ts offset.
 */
std::vector<double> ReplayArrivals(const std::vector<MeasuredRequest>& reqs);

/// The order of \p reqs by ReplayArrivals (stable): the order a replay's requests arrive in.
std::vector<size_t> ArrivalOrder(const std::vector<MeasuredRequest>& reqs);

/// One row of summary.txt: the measured value and the other simulator's.
struct UpstreamFigure
{
    double measured = 0;
    double simulated = 0;
};

/// summary.txt by metric name ("TTFT Mean", "TPOT P99", "Latency Median", ...).
std::map<std::string, UpstreamFigure> ReadUpstreamSummary(const std::string& path);

/// A statistic as summary.txt names it: "Mean", "Median", "P90", "P95" or "P99" (percentiles
/// interpolated linearly, as numpy's default).
double SummaryStatistic(const std::vector<double>& samples, const std::string& stat);

} // namespace fabricsim

#endif
