#include "measured-run.h"

#include "file-reader.h"
#include "input-error.h"
#include "json-describe.h"
#include "json-reader.h"
#include "serving-metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <numeric>
#include <sstream>

namespace fabricsim
{

namespace
{

double
Seconds(const nlohmann::json& row, const std::string& key, const std::string& path, size_t line)
{
    const std::string field = "line " + std::to_string(line) + "." + key;
    const auto it = row.find(key);
    if (it == row.end() || !it->is_number() || !std::isfinite(it->get<double>()))
    {
        throw InputError(
            path, field, "a time in seconds", it == row.end() ? "nothing" : DescribeJson(*it));
    }
    return it->get<double>();
}

uint64_t
Tokens(const nlohmann::json& row, const std::string& key, const std::string& path, size_t line)
{
    const auto it = row.find(key);
    if (it == row.end() || !it->is_number_unsigned() || it->get<uint64_t>() == 0)
    {
        throw InputError(path,
                         "line " + std::to_string(line) + "." + key,
                         "a token count of at least 1",
                         it == row.end() ? "nothing" : DescribeJson(*it));
    }
    return it->get<uint64_t>();
}

} // namespace

std::vector<MeasuredRequest>
ReadMeasuredRequests(const std::string& path)
{
    const std::vector<nlohmann::json> rows = ReadJsonLines(path, "vLLM request log (JSON lines)");
    std::vector<MeasuredRequest> out;
    for (size_t i = 0; i < rows.size(); ++i)
    {
        const nlohmann::json& row = rows[i];
        const size_t line = i + 1;
        if (!row.is_object())
        {
            throw InputError(
                path, "line " + std::to_string(line), "a JSON object", DescribeJson(row));
        }
        MeasuredRequest r;
        r.inputTokens = Tokens(row, "input_toks", path, line);
        r.outputTokens = Tokens(row, "output_toks", path, line);
        r.queuedS = Seconds(row, "queued_ts", path, line);
        r.firstTokenS = Seconds(row, "first_token_ts", path, line);
        r.lastTokenS = Seconds(row, "last_token_ts", path, line);
        if (r.firstTokenS < r.queuedS || r.lastTokenS < r.firstTokenS)
        {
            throw InputError(path,
                             "line " + std::to_string(line),
                             "queued_ts <= first_token_ts <= last_token_ts",
                             "times out of that order");
        }
        if (row.contains("arrival_time"))
        {
            r.arrivalS = Seconds(row, "arrival_time", path, line);
            if (r.arrivalS < 0)
            {
                throw InputError(path,
                                 "line " + std::to_string(line) + ".arrival_time",
                                 "epoch seconds (>= 0)",
                                 DescribeJson(row["arrival_time"]));
            }
        }
        if (row.contains("scheduled_ts"))
        {
            r.scheduledS = Seconds(row, "scheduled_ts", path, line);
            if (r.scheduledS < r.queuedS || r.scheduledS > r.firstTokenS)
            {
                throw InputError(path,
                                 "line " + std::to_string(line) + ".scheduled_ts",
                                 "a time from queued_ts to first_token_ts",
                                 DescribeJson(row["scheduled_ts"]));
            }
        }
        out.push_back(r);
    }
    if (out.empty())
    {
        throw InputError(path, "", "at least one request", "none");
    }
    return out;
}

std::vector<double>
ReplayArrivals(const std::vector<MeasuredRequest>& reqs)
{
    const bool wall = std::all_of(
        reqs.begin(), reqs.end(), [](const MeasuredRequest& r) { return r.arrivalS >= 0; });
    std::vector<double> t;
    for (const MeasuredRequest& r : reqs)
    {
        t.push_back(wall ? r.arrivalS : r.queuedS);
    }
    const double first = t.empty() ? 0 : *std::min_element(t.begin(), t.end());
    for (double& x : t)
    {
        x -= first;
    }
    return t;
}

std::vector<size_t>
ArrivalOrder(const std::vector<MeasuredRequest>& reqs)
{
    const std::vector<double> t = ReplayArrivals(reqs);
    std::vector<size_t> order(reqs.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return t[a] < t[b]; });
    return order;
}

ServingLatencies
LatenciesOf(const std::vector<MeasuredRequest>& reqs)
{
    ServingLatencies l;
    double firstQueued = reqs.empty() ? 0 : reqs.front().queuedS;
    double lastToken = firstQueued;
    double tokens = 0;
    for (const MeasuredRequest& r : reqs)
    {
        l.ttftMs.push_back((r.firstTokenS - r.queuedS) * 1e3);
        const double gaps = double(std::max<uint64_t>(1, r.outputTokens - 1));
        l.tpotMs.push_back((r.lastTokenS - r.firstTokenS) / gaps * 1e3);
        l.e2eMs.push_back((r.lastTokenS - r.queuedS) * 1e3);
        firstQueued = std::min(firstQueued, r.queuedS);
        lastToken = std::max(lastToken, r.lastTokenS);
        tokens += double(r.outputTokens);
    }
    l.outputTokensPerSec = lastToken > firstQueued ? tokens / (lastToken - firstQueued) : 0;
    return l;
}

std::map<std::string, UpstreamFigure>
ReadUpstreamSummary(const std::string& path)
{
    LineReader in(path, "summary.txt (metric, measured, simulated, diff)", kConfigFileLimits);
    std::map<std::string, UpstreamFigure> out;
    std::string line;
    while (in.Next(line))
    {
        std::istringstream words(line);
        std::string kind;
        std::string stat;
        UpstreamFigure f;
        // "TTFT Mean   7097.2   6815.7   -4.0%"; the header, rules and blank lines have no numbers.
        if (!(words >> kind >> stat >> f.measured >> f.simulated))
        {
            continue;
        }
        out[kind + " " + stat] = f;
    }
    if (out.empty())
    {
        throw InputError(path, "", "rows like \"TTFT Mean 7097.2 6815.7 -4.0%\"", "none");
    }
    return out;
}

double
SummaryStatistic(const std::vector<double>& samples, const std::string& stat)
{
    if (samples.empty())
    {
        return 0;
    }
    if (stat == "Mean")
    {
        return std::accumulate(samples.begin(), samples.end(), 0.0) / double(samples.size());
    }
    std::vector<double> sorted = samples;
    std::sort(sorted.begin(), sorted.end());
    if (stat == "Median")
    {
        return Percentile(sorted, 50);
    }
    if (stat.size() > 1 && stat[0] == 'P')
    {
        char* end = nullptr;
        const double p = std::strtod(stat.c_str() + 1, &end);
        if (*end == '\0' && p >= 0 && p <= 100)
        {
            return Percentile(sorted, p);
        }
    }
    throw InputError("", "statistic", "Mean, Median or P<n>", "\"" + stat + "\"");
}

} // namespace fabricsim
