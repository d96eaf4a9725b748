#include "goodput-search.h"

#include "input-error.h"

namespace fabricsim
{

nlohmann::json
GoodputResult::ToJson() const
{
    nlohmann::json pts = nlohmann::json::array();
    for (const auto& p : points)
    {
        pts.push_back({{"rate_per_s", p.ratePerSec}, {"attainment", p.attainment}});
    }
    return {{"goodput_rate_per_s", goodputRatePerSec}, {"points", pts}};
}

GoodputResult
FindGoodput(const InferenceScenario& sc,
            const std::function<ServingResult(const InferenceScenario&)>& run,
            double lo,
            double hi,
            int iterations)
{
    if (!sc.slo.enabled)
    {
        throw fabricsim::InputError(
            sc.file, "serving.slo", "TTFT and TPOT targets for goodput", "none");
    }
    if (sc.requests.fromTrace)
    {
        throw fabricsim::InputError(sc.file,
                                    "serving.requests",
                                    "a synthetic source (rate_per_s) for a goodput search",
                                    "a trace");
    }
    GoodputResult out;
    auto attain = [&](double rate)
    {
        InferenceScenario s = sc;
        s.requests.ratePerSec = rate;
        double a = run(s).SloAttainment();
        out.points.push_back({rate, a});
        return a >= sc.slo.attainment;
    };
    if (!attain(lo))
    {
        return out; // even the lowest rate misses the target
    }
    out.goodputRatePerSec = lo;
    if (attain(hi))
    {
        out.goodputRatePerSec = hi;
        return out;
    }
    for (int i = 0; i < iterations; ++i)
    {
        double mid = (lo + hi) / 2;
        if (attain(mid))
        {
            lo = mid;
            out.goodputRatePerSec = mid;
        }
        else
        {
            hi = mid;
        }
    }
    return out;
}

} // namespace fabricsim
