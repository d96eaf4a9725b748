/*
 * Goodput: the highest request rate at which the SLO attainment target still holds, found by
 * running the scenario at several rates.
 */
#ifndef FABRICSIM_SERVING_GOODPUT_SEARCH_H
#define FABRICSIM_SERVING_GOODPUT_SEARCH_H

#include "inference-scenario.h"
#include "serving-metrics.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <vector>

namespace fabricsim
{

/**
 * \brief One rate tried.
 */
struct GoodputPoint
{
    double ratePerSec = 0; //!< request rate
    double attainment = 0; //!< share of requests meeting both SLOs
};

/**
 * \brief The search result.
 */
struct GoodputResult
{
    double goodputRatePerSec = 0;     //!< highest rate found that meets the target (0: none)
    std::vector<GoodputPoint> points; //!< every rate tried, in order

    /// {"goodput_rate_per_s", "points": [{"rate_per_s", "attainment"}]}.
    nlohmann::json ToJson() const;
};

/**
 * \brief Bisect the request rate of \p sc (a synthetic source with SLOs) between \p lo and
 * \p hi for \p iterations rounds: a rate passes when SloAttainment() >= slo.attainment.
 * \p run executes one scenario (a fresh backend each time) and returns its result.
 * InputError when the scenario has no SLOs or reads a trace.
 */
GoodputResult FindGoodput(const InferenceScenario& sc,
                          const std::function<ServingResult(const InferenceScenario&)>& run,
                          double lo,
                          double hi,
                          int iterations = 8);

} // namespace fabricsim

#endif
