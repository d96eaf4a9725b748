#include "calibration-metrics.h"

#include "nccl-report.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <sstream>
#include <tuple>

namespace fabricsim
{

double
PredictedPoint::ErrorPct() const
{
    return (predictedUs - measured.timeUs) / measured.timeUs * 100.0;
}

double
PredictedPoint::MeasuredBusBw() const
{
    return double(measured.bytes) / (measured.timeUs * 1e3)
           * BusBandwidthFactor(measured.kind, int(measured.ranks));
}

double
PredictedPoint::PredictedBusBw() const
{
    return predictedUs > 0 ? double(measured.bytes) / (predictedUs * 1e3)
                                 * BusBandwidthFactor(measured.kind, int(measured.ranks))
                           : 0;
}

ErrorSummary
Summarize(const std::vector<PredictedPoint>& points)
{
    ErrorSummary s;
    for (const PredictedPoint& p : points)
    {
        const double e = p.ErrorPct();
        s.points++;
        s.mape += std::fabs(e);
        s.bias += e;
        if (std::fabs(e) > std::fabs(s.worstPct) || s.points == 1)
        {
            s.worstPct = e;
            s.worstAt = ToString(p.measured.kind) + " " + std::to_string(p.measured.ranks)
                        + " ranks " + std::to_string(p.measured.bytes) + " B (" + p.measured.source
                        + ")";
        }
    }
    if (s.points > 0)
    {
        s.mape /= double(s.points);
        s.bias /= double(s.points);
    }
    return s;
}

std::string
SizeRange(uint64_t bytes)
{
    if (bytes < 64 * 1024)
    {
        return "< 64 KiB";
    }
    if (bytes < 1024 * 1024)
    {
        return "64 KiB - 1 MiB";
    }
    return ">= 1 MiB";
}

nlohmann::json
ToJson(const ErrorSummary& s)
{
    return {{"points", s.points},
            {"mape_pct", s.mape},
            {"bias_pct", s.bias},
            {"worst_pct", s.worstPct},
            {"worst_at", s.worstAt}};
}

nlohmann::json
ErrorReport(const std::vector<PredictedPoint>& points)
{
    auto grouped = [&](const std::function<std::string(const PredictedPoint&)>& key)
    {
        std::map<std::string, std::vector<PredictedPoint>> g;
        for (const PredictedPoint& p : points)
        {
            g[key(p)].push_back(p);
        }
        nlohmann::json j = nlohmann::json::object();
        for (const auto& [k, v] : g)
        {
            j[k] = ToJson(Summarize(v));
        }
        return j;
    };
    nlohmann::json r;
    r["all"] = ToJson(Summarize(points));
    r["by_size"] = grouped([](const PredictedPoint& p) { return SizeRange(p.measured.bytes); });
    r["by_collective"] = grouped([](const PredictedPoint& p) { return ToString(p.measured.kind); });
    r["by_ranks"]
        = grouped([](const PredictedPoint& p) { return std::to_string(p.measured.ranks); });
    r["by_collective_ranks_size"] = grouped(
        [](const PredictedPoint& p)
        {
            return ToString(p.measured.kind) + " " + std::to_string(p.measured.ranks) + " ranks "
                   + SizeRange(p.measured.bytes);
        });
    return r;
}

std::string
PointsCsv(const std::vector<PredictedPoint>& points)
{
    std::ostringstream o;
    o.precision(10);
    o << "collective,ranks,bytes,dtype,measured_us,predicted_us,error_pct,measured_busbw_gbps,"
         "predicted_busbw_gbps,source,choice\n";
    for (const PredictedPoint& p : points)
    {
        o << ToString(p.measured.kind) << "," << p.measured.ranks << "," << p.measured.bytes << ","
          << p.measured.dtype << "," << p.measured.timeUs << "," << p.predictedUs << ","
          << p.ErrorPct() << "," << p.MeasuredBusBw() << "," << p.PredictedBusBw() << ","
          << p.measured.source << "," << p.choice << "\n";
    }
    return o.str();
}

std::vector<bool>
ContradictedMoePoints(const std::vector<MoePoint>& points, bool dispatch, double tolerance)
{
    using Shape
        = std::tuple<std::string, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, std::string>;
    std::map<Shape, std::vector<size_t>> series;
    for (size_t i = 0; i < points.size(); ++i)
    {
        const MoePoint& p = points[i];
        series[{p.mode, p.hidden, p.topk, p.experts, p.sms, p.nodes, p.device}].push_back(i);
    }
    std::vector<bool> out(points.size(), false);
    for (auto& [shape, idx] : series)
    {
        std::stable_sort(idx.begin(),
                         idx.end(),
                         [&](size_t a, size_t b) { return points[a].tokens < points[b].tokens; });
        // Walking down from the largest call: the fastest time measured with more tokens (a
        // repeat of the same tokens is not a larger call).
        double floorUs = std::numeric_limits<double>::infinity();
        for (size_t end = idx.size(); end > 0;)
        {
            size_t begin = end - 1;
            while (begin > 0 && points[idx[begin - 1]].tokens == points[idx[end - 1]].tokens)
            {
                --begin;
            }
            double groupUs = floorUs;
            for (size_t k = begin; k < end; ++k)
            {
                const MoePoint& p = points[idx[k]];
                const double us = dispatch ? p.dispatchUs : p.combineUs;
                out[idx[k]] = floorUs < (1 - tolerance) * us;
                groupUs = std::min(groupUs, us);
            }
            floorUs = groupUs;
            end = begin;
        }
    }
    return out;
}

} // namespace fabricsim
