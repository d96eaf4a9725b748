#include "benchmark-comparison.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <regex>

namespace fabricsim
{

using nlohmann::json;

namespace
{

/// Little's law's in-flight count below this fraction of C marks a point's latencies skewed.
constexpr double kSkewedLoop = 0.8;

/// \p v with \p digits decimals, as the tables print figures.
std::string
Fixed(double v, int digits)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
}

} // namespace

std::optional<double>
SimulatedFigure(const json& summary, const std::string& name)
{
    static const std::map<std::string, std::string> kRates
        = {{"output_throughput", "generation_tokens_per_s"},
           {"request_throughput", "requests_per_s"},
           {"input_throughput", "prompt_tokens_per_s"}};
    if (auto it = kRates.find(name); it != kRates.end())
    {
        return summary.at(it->second).get<double>();
    }
    static const std::regex kLatency("(mean|median|p90|p99)_(ttft|tpot|itl|e2el)_ms");
    std::smatch m;
    if (!std::regex_match(name, m, kLatency))
    {
        return std::nullopt;
    }
    const std::string stat = m[1].str() == "median" ? "p50" : m[1].str();
    const std::string metric = m[2].str() == "e2el" ? "e2e_ms" : m[2].str() + "_ms";
    return summary.at(metric).at(stat).get<double>();
}

double
FigureErrorPct(double measured, double simulated)
{
    if (measured == 0)
    {
        return simulated == 0 ? 0.0 : INFINITY;
    }
    return (simulated - measured) / measured * 100.0;
}

double
MedianOf(std::vector<double> v)
{
    if (v.empty())
    {
        return NAN;
    }
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string
SweepKey(const BenchmarkResult& r)
{
    return (r.parallelTag.empty() ? std::string("-") : r.parallelTag) + " ISL "
           + std::to_string(r.inputTokens) + " OSL " + std::to_string(r.outputTokens);
}

std::vector<std::string>
BenchmarkOddities(const std::vector<const BenchmarkResult*>& results, json& counts)
{
    std::map<std::string, std::vector<const BenchmarkResult*>> sweeps;
    for (const BenchmarkResult* r : results)
    {
        if (r->concurrency > 0)
        {
            sweeps[SweepKey(*r)].push_back(r);
        }
    }
    std::vector<std::string> lines;
    uint64_t tpot = 0;
    uint64_t thr = 0;
    uint64_t cold = 0;
    uint64_t skewed = 0;
    auto fig = [](const BenchmarkResult* r, const std::string& k)
    {
        auto it = r->measured.find(k);
        return it == r->measured.end() ? NAN : it->second;
    };
    for (auto& [key, v] : sweeps)
    {
        std::sort(
            v.begin(), v.end(), [](auto* a, auto* b) { return a->concurrency < b->concurrency; });
        for (size_t i = 1; i < v.size(); ++i)
        {
            const std::string step = "C " + std::to_string(v[i - 1]->concurrency) + " -> "
                                     + std::to_string(v[i]->concurrency);
            if (fig(v[i], "median_tpot_ms") < fig(v[i - 1], "median_tpot_ms"))
            {
                ++tpot;
                lines.push_back(key + ", " + step + ": median TPOT falls "
                                + Fixed(fig(v[i - 1], "median_tpot_ms"), 1) + " -> "
                                + Fixed(fig(v[i], "median_tpot_ms"), 1) + " ms");
            }
            if (fig(v[i], "output_throughput") < fig(v[i - 1], "output_throughput"))
            {
                ++thr;
                lines.push_back(key + ", " + step + ": output throughput falls "
                                + Fixed(fig(v[i - 1], "output_throughput"), 0) + " -> "
                                + Fixed(fig(v[i], "output_throughput"), 0) + " tok/s");
            }
        }
        for (const BenchmarkResult* r : v)
        {
            const double inFlight = fig(r, "request_throughput") * fig(r, "median_e2el_ms") / 1e3;
            if (inFlight < kSkewedLoop * r->concurrency) // false when either figure is missing
            {
                ++skewed;
                lines.push_back(key + ", C " + std::to_string(r->concurrency)
                                + ": request rate x median E2E is " + Fixed(inFlight, 1)
                                + " requests in flight (" + Fixed(inFlight / r->concurrency, 2)
                                + " C): latencies skewed far above the median");
            }
        }
        if (v.size() > 1 && fig(v[0], "median_ttft_ms") > fig(v[1], "median_ttft_ms"))
        {
            ++cold;
            lines.push_back(key + ": median TTFT at C " + std::to_string(v[0]->concurrency) + " ("
                            + Fixed(fig(v[0], "median_ttft_ms"), 0) + " ms) above C "
                            + std::to_string(v[1]->concurrency) + "'s ("
                            + Fixed(fig(v[1], "median_ttft_ms"), 0) + " ms): a cold first run");
        }
    }
    counts = {{"sweeps", sweeps.size()},
              {"tpot_falls_with_c", tpot},
              {"throughput_falls_with_c", thr},
              {"cold_first_point", cold},
              {"skewed_latencies", skewed}};
    return lines;
}

FrontendFit
FitFrontend(const std::vector<double>& x, const std::vector<double>& y)
{
    FrontendFit f;
    const size_t n = x.size();
    if (n == 0)
    {
        return f;
    }
    double mx = 0;
    double my = 0;
    for (size_t i = 0; i < n; ++i)
    {
        mx += x[i] / double(n);
        my += y[i] / double(n);
    }
    double sxx = 0;
    double sxy = 0;
    for (size_t i = 0; i < n; ++i)
    {
        sxx += (x[i] - mx) * (x[i] - mx);
        sxy += (x[i] - mx) * (y[i] - my);
    }
    if (sxx <= 1e-12 * std::max(1.0, mx * mx))
    {
        f.constantOnly = true;
        f.requestS = std::max(0.0, my);
        return f;
    }
    f.perTokenS = sxy / sxx;
    f.requestS = my - f.perTokenS * mx;
    // Costs are not negative: a clamped one leaves the other to the constrained least squares.
    if (f.perTokenS < 0)
    {
        f.perTokenS = 0;
        f.requestS = std::max(0.0, my);
    }
    else if (f.requestS < 0)
    {
        double xx = 0;
        double xy = 0;
        for (size_t i = 0; i < n; ++i)
        {
            xx += x[i] * x[i];
            xy += x[i] * y[i];
        }
        f.requestS = 0;
        f.perTokenS = xx > 0 ? std::max(0.0, xy / xx) : 0.0;
    }
    return f;
}

} // namespace fabricsim
