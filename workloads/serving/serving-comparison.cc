#include "serving-comparison.h"

#include "serving-metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

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
        // Counted from when the engine took it, as vLLM's queued_ts (the arrival until then).
        m.queuedS = double(r.queuedPs >= 0 ? r.queuedPs : r.arrivalPs) * 1e-12;
        m.scheduledS = r.scheduledPs >= 0 ? double(r.scheduledPs) * 1e-12 : -1;
        m.firstTokenS = double(r.FirstTokenPs()) * 1e-12;
        m.lastTokenS = double(r.tokenPs.back()) * 1e-12;
        out.push_back(m);
    }
    return out;
}

std::string
PerRequestCsv(const std::vector<MeasuredRequest>& measured, const ServingResult& result)
{
    std::map<uint64_t, const RequestRecord*> byId;
    for (const RequestRecord& r : result.requests)
    {
        byId[r.id] = &r;
    }
    const std::vector<size_t> order = ArrivalOrder(measured);
    std::vector<const RequestRecord*> simOf(measured.size(), nullptr);
    for (size_t k = 0; k < order.size(); ++k)
    {
        const auto it = byId.find(k);
        simOf[order[k]] = it == byId.end() ? nullptr : it->second;
    }
    const std::vector<double> arrival = ReplayArrivals(measured);
    auto field = [](double v, bool known)
    {
        if (!known)
        {
            return std::string(",");
        }
        char buf[40];
        std::snprintf(buf, sizeof buf, ",%.3f", v);
        return std::string(buf);
    };
    std::string out = "line,input_tokens,output_tokens,arrival_s,measured_wait_ms,"
                      "measured_ttft_ms,measured_tpot_ms,measured_e2e_ms,fabricsim_wait_ms,"
                      "fabricsim_ttft_ms,fabricsim_tpot_ms,fabricsim_e2e_ms\n";
    for (size_t i = 0; i < measured.size(); ++i)
    {
        const MeasuredRequest& m = measured[i];
        char head[96];
        std::snprintf(head,
                      sizeof head,
                      "%zu,%llu,%llu,%.6f",
                      i + 1,
                      static_cast<unsigned long long>(m.inputTokens),
                      static_cast<unsigned long long>(m.outputTokens),
                      arrival[i]);
        out += head;
        const double gaps = double(std::max<uint64_t>(1, m.outputTokens - 1));
        out += field((m.scheduledS - m.queuedS) * 1e3, m.scheduledS >= 0);
        out += field((m.firstTokenS - m.queuedS) * 1e3, true);
        out += field((m.lastTokenS - m.firstTokenS) / gaps * 1e3, true);
        out += field((m.lastTokenS - m.queuedS) * 1e3, true);
        const RequestRecord* r = simOf[i];
        const bool done = r != nullptr && r->Finished();
        const bool started = r != nullptr && r->scheduledPs >= 0 && r->queuedPs >= 0;
        const double queuedMs = r != nullptr && r->queuedPs >= 0 ? double(r->queuedPs) * 1e-9 : 0;
        out += field(started ? double(r->scheduledPs - r->queuedPs) * 1e-9 : 0, started);
        out += field(done ? double(r->FirstTokenPs()) * 1e-9 - queuedMs : 0, done);
        out += field(done ? r->TpotMs() : 0, done);
        out += field(done ? double(r->tokenPs.back()) * 1e-9 - queuedMs : 0, done);
        out += "\n";
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
