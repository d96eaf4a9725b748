/*
 * A simulated serving run held against a measured one, metric by metric, in the measured
 * run's definitions (measured-run.h), beside another simulator's prediction where the run
 * carries one.
 */
#ifndef FABRICSIM_SERVING_COMPARISON_H
#define FABRICSIM_SERVING_COMPARISON_H

#include "measured-run.h"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fabricsim
{

struct ServingResult;

/**
 * \brief The finished requests of a simulated run as a measured run records them: queued when
 * its engine took it (vLLM's queued_ts: the first scheduling pass at or after the arrival),
 * scheduled when first given tokens, first and last token as the user sees them; in request
 * order.
 */
std::vector<MeasuredRequest> AsMeasuredRequests(const ServingResult& result);

/**
 * \brief Each measured request beside its simulated replay, one CSV row per request in
 * requests.jsonl's order: line, tokens, arrival (s from the first queued), then the measured
 * and the simulated wait (queued to first scheduled), TTFT, TPOT and E2E in ms. The replay's
 * request i is the i-th in arrival order (ArrivalOrder); a field it cannot give (not recorded,
 * not finished) is empty.
 */
std::string PerRequestCsv(const std::vector<MeasuredRequest>& measured,
                          const ServingResult& result);

/// One metric, measured and simulated (and the other simulator's, when known).
struct MetricComparison
{
    std::string name;                    //!< "TTFT Mean", "TPOT P99", "E2E Median", "Throughput"
    double measured = 0;                 //!< from the measured requests
    double simulated = 0;                //!< fabricsim's
    std::optional<double> other;         //!< the other simulator's (summary.txt "Sim")
    std::optional<double> otherMeasured; //!< summary.txt's own measured value for that row

    /// (simulated - measured) / measured x 100; 0 when both are 0.
    double ErrorPct() const;
    /// The other simulator's error against its own measured column, when known.
    std::optional<double> OtherErrorPct() const;
};

/**
 * \brief TTFT, TPOT and E2E (Mean, Median, P90, P95, P99; ms) and output throughput
 * (tokens/s), measured against simulated; \p upstream (summary.txt, may be null) adds the
 * other simulator's values (its "Latency" rows are E2E).
 */
std::vector<MetricComparison> CompareServing(const ServingLatencies& measured,
                                             const ServingLatencies& simulated,
                                             const std::map<std::string, UpstreamFigure>* upstream);

/// {"<name>": {"measured", "fabricsim", "error_pct", "other_sim", "other_sim_error_pct"}}.
nlohmann::json ComparisonJson(const std::vector<MetricComparison>& rows);

} // namespace fabricsim

#endif
