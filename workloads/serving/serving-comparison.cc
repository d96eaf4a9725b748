#include "serving-comparison.h"

#include "serving-metrics.h"

#include <cmath>

namespace fabricsim
{

namespace
{

double
PctError(double value, double reference)
{
    if (reference == 0)
    {
        return value == 0 ? 0 : (value > 0 ? HUGE_VAL : -HUGE_VAL);
    }
    return (value - reference) / reference * 100;
}

} // namespace

std::vector<MeasuredRequest>
AsMeasuredRequests(const ServingResult& result)
{
    std::vector<MeasuredRequest> out;
    for (const RequestRecord& r : result.requests)
    {
        if (!r.Finished())
        {
            continue;
        }
        MeasuredRequest m;
        m.inputTokens = r.promptTokens;
        m.outputTokens = r.outputTokens;
        m.queuedS = double(r.arrivalPs) * 1e-12;
        m.firstTokenS = double(r.FirstTokenPs()) * 1e-12;
        m.lastTokenS = double(r.tokenPs.back()) * 1e-12;
        out.push_back(m);
    }
    return out;
}

double
MetricComparison::ErrorPct() const
{
    return PctError(simulated, measured);
}

std::optional<double>
MetricComparison::OtherErrorPct() const
{
    if (!other || !otherMeasured)
    {
        return std::nullopt;
    }
    return PctError(*other, *otherMeasured);
}

std::vector<MetricComparison>
CompareServing(const ServingLatencies& measured,
               const ServingLatencies& simulated,
               const std::map<std::string, UpstreamFigure>* upstream)
{
    struct Kind
    {
        const char* name;
        const char* upstreamName;
        std::vector<double> ServingLatencies::*samples;
    };
    const Kind kinds[] = {{"TTFT", "TTFT", &ServingLatencies::ttftMs},
                          {"TPOT", "TPOT", &ServingLatencies::tpotMs},
                          {"E2E", "Latency", &ServingLatencies::e2eMs}};
    std::vector<MetricComparison> rows;
    for (const Kind& k : kinds)
    {
        for (const char* stat : {"Mean", "Median", "P90", "P95", "P99"})
        {
            MetricComparison c;
            c.name = std::string(k.name) + " " + stat;
            c.measured = SummaryStatistic(measured.*k.samples, stat);
            c.simulated = SummaryStatistic(simulated.*k.samples, stat);
            if (upstream)
            {
                const auto it = upstream->find(std::string(k.upstreamName) + " " + stat);
                if (it != upstream->end())
                {
                    c.other = it->second.simulated;
                    c.otherMeasured = it->second.measured;
                }
            }
            rows.push_back(c);
        }
    }
    MetricComparison tput;
    tput.name = "Throughput";
    tput.measured = measured.outputTokensPerSec;
    tput.simulated = simulated.outputTokensPerSec;
    rows.push_back(tput);
    return rows;
}

nlohmann::json
ComparisonJson(const std::vector<MetricComparison>& rows)
{
    nlohmann::json out = nlohmann::json::object();
    for (const MetricComparison& c : rows)
    {
        nlohmann::json j
            = {{"measured", c.measured}, {"fabricsim", c.simulated}, {"error_pct", c.ErrorPct()}};
        if (c.other)
        {
            j["other_sim"] = *c.other;
        }
        if (const auto e = c.OtherErrorPct())
        {
            j["other_sim_error_pct"] = *e;
        }
        out[c.name] = j;
    }
    return out;
}

} // namespace fabricsim
