#include "nelder-mead.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace fabricsim
{

FitResult
NelderMead(const std::vector<FitDimension>& dims,
           const std::function<double(const std::vector<double>&)>& f,
           int maxEvals,
           double tolerance)
{
    const size_t d = dims.size();
    auto toValue = [&](const std::vector<double>& u)
    {
        std::vector<double> x(d);
        for (size_t i = 0; i < d; ++i)
        {
            const double t = std::clamp(u[i], 0.0, 1.0);
            const FitDimension& p = dims[i];
            x[i] = p.logScale ? std::exp(std::log(p.lo) + t * (std::log(p.hi) - std::log(p.lo)))
                              : p.lo + t * (p.hi - p.lo);
        }
        return x;
    };
    auto toUnit = [&](const FitDimension& p, double v)
    {
        v = std::clamp(v, p.lo, p.hi);
        return p.logScale ? (std::log(v) - std::log(p.lo)) / (std::log(p.hi) - std::log(p.lo))
                          : (v - p.lo) / (p.hi - p.lo);
    };
    FitResult r;
    auto eval = [&](std::vector<double>& u)
    {
        for (double& c : u)
        {
            c = std::clamp(c, 0.0, 1.0);
        }
        const std::vector<double> x = toValue(u);
        const double v = f(x);
        r.history.emplace_back(x, v);
        r.evaluations++;
        return v;
    };
    std::vector<std::vector<double>> s(d + 1, std::vector<double>(d));
    for (size_t i = 0; i < d; ++i)
    {
        s[0][i] = toUnit(dims[i], dims[i].start);
    }
    for (size_t k = 1; k <= d; ++k)
    {
        s[k] = s[0];
        // Step a quarter of the box, inward from whichever side is nearer.
        s[k][k - 1] += s[0][k - 1] < 0.5 ? 0.25 : -0.25;
    }
    std::vector<double> v(d + 1);
    for (size_t k = 0; k <= d; ++k)
    {
        v[k] = eval(s[k]);
    }
    while (r.evaluations < maxEvals && d > 0)
    {
        std::vector<size_t> order(d + 1);
        std::iota(order.begin(), order.end(), 0);
        std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
        std::vector<std::vector<double>> s2;
        std::vector<double> v2;
        for (size_t k : order)
        {
            s2.push_back(s[k]);
            v2.push_back(v[k]);
        }
        s = s2;
        v = v2;
        if (std::fabs(v[d] - v[0]) < tolerance * std::max(1.0, std::fabs(v[0])))
        {
            break;
        }
        std::vector<double> c(d, 0.0);
        for (size_t k = 0; k < d; ++k)
        {
            for (size_t i = 0; i < d; ++i)
            {
                c[i] += s[k][i] / double(d);
            }
        }
        auto along = [&](double t)
        {
            std::vector<double> p(d);
            for (size_t i = 0; i < d; ++i)
            {
                p[i] = c[i] + t * (s[d][i] - c[i]);
            }
            return p;
        };
        std::vector<double> xr = along(-1.0);
        const double fr = eval(xr);
        if (fr < v[0])
        {
            std::vector<double> xe = along(-2.0);
            const double fe = eval(xe);
            s[d] = fe < fr ? xe : xr;
            v[d] = std::min(fe, fr);
        }
        else if (fr < v[d - 1])
        {
            s[d] = xr;
            v[d] = fr;
        }
        else
        {
            std::vector<double> xc = fr < v[d] ? along(-0.5) : along(0.5);
            const double fc = eval(xc);
            if (fc < std::min(fr, v[d]))
            {
                s[d] = xc;
                v[d] = fc;
            }
            else
            {
                for (size_t k = 1; k <= d && r.evaluations < maxEvals; ++k)
                {
                    for (size_t i = 0; i < d; ++i)
                    {
                        s[k][i] = s[0][i] + 0.5 * (s[k][i] - s[0][i]);
                    }
                    v[k] = eval(s[k]);
                }
            }
        }
    }
    size_t best = size_t(std::min_element(v.begin(), v.end()) - v.begin());
    r.best = toValue(s[best]);
    r.value = v[best];
    return r;
}

} // namespace fabricsim
