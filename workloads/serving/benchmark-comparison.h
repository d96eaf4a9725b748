/*
 * A serving benchmark's measured figures beside a replay's (`fabricsim validate-serving
 * RESULTS...`): the simulated figure by vLLM bench serve's name, the error, the frontend costs
 * fitted on TTFT residuals, and the data's own oddities per sweep (points alike but for their
 * concurrency).
 */
#ifndef FABRICSIM_SERVING_BENCHMARK_COMPARISON_H
#define FABRICSIM_SERVING_BENCHMARK_COMPARISON_H

#include "benchmark-result.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace fabricsim
{

/// A simulated figure by vLLM bench serve's name (output_throughput, median_ttft_ms, ...) from
/// a serving run's summary.json; nullopt for a name it does not have.
std::optional<double> SimulatedFigure(const nlohmann::json& summary, const std::string& name);

/// (simulated - measured) / measured in percent (infinite when only the measured is 0).
double FigureErrorPct(double measured, double simulated);

/// The median of \p v (NaN when empty).
double MedianOf(std::vector<double> v);

/// The grouping key of a sweep: the points that differ only in concurrency.
std::string SweepKey(const BenchmarkResult& r);

/**
 * The data's oddities, counted per sweep (points alike but for C, by rising C): median TPOT or
 * output throughput falling as C rises, the lowest C's median TTFT above the next one's (a
 * cold first run), and skewed latencies: in a closed loop of C, Little's law makes the mean
 * E2E C / request rate, so request rate x median E2E below 0.8 C says the median sits far
 * below the mean. Requests alike in length (a random dataset of one ISL and OSL) are served
 * alike in the model, whose median stays near its mean; such a point cannot have both its
 * throughput and its median E2E within sqrt(C / (rate x median)) - 1. One line per oddity;
 * \p counts receives the count of each kind.
 */
std::vector<std::string> BenchmarkOddities(const std::vector<const BenchmarkResult*>& results,
                                           nlohmann::json& counts);

/// The least-squares line TTFT residual = a + b x input tokens over the fit points, with a and
/// b held at 0 or above (a constant only when the points share one input length).
struct FrontendFit
{
    double requestS = 0;       //!< a: seconds per request
    double perTokenS = 0;      //!< b: seconds per prompt token
    bool constantOnly = false; //!< the fit points had a single input length
};
FrontendFit FitFrontend(const std::vector<double>& inputTokens,
                        const std::vector<double>& residualS);

} // namespace fabricsim

#endif
