#include "parameter-fit.h"

#include <cmath>

namespace fabricsim
{

double
Mape(const std::vector<MeasuredPoint>& points,
     const std::vector<double>& predictedUs,
     uint64_t minBytes)
{
    double sum = 0;
    size_t n = 0;
    for (size_t i = 0; i < points.size(); ++i)
    {
        if (points[i].bytes >= minBytes)
        {
            sum += std::fabs(predictedUs[i] - points[i].timeUs) / points[i].timeUs;
            ++n;
        }
    }
    return n ? sum / double(n) * 100.0 : 0;
}

std::vector<MeasuredPoint>
PointsAtOrAbove(const std::vector<MeasuredPoint>& points, uint64_t minBytes)
{
    std::vector<MeasuredPoint> out;
    for (const MeasuredPoint& p : points)
    {
        if (p.bytes >= minBytes)
        {
            out.push_back(p);
        }
    }
    return out;
}

ParameterFit
FitParameters(const std::vector<FitDimension>& dims,
              const std::vector<MeasuredPoint>& points,
              uint64_t minBytes,
              int maxEvals,
              const PointPredictor& predict)
{
    auto values = [&](const std::vector<double>& x)
    {
        std::map<std::string, double> v;
        for (size_t i = 0; i < dims.size(); ++i)
        {
            v[dims[i].name] = x[i];
        }
        return v;
    };
    ParameterFit fit;
    fit.result = NelderMead(
        dims,
        [&](const std::vector<double>& x)
        { return Mape(points, predict(values(x), points), minBytes); },
        maxEvals);
    fit.fitted = values(fit.result.best);
    return fit;
}

} // namespace fabricsim
