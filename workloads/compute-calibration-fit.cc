#include "compute-calibration-fit.h"

#include "input-error.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

namespace fabricsim
{

namespace
{

/// The rows of one class at one size: FLOPs, bytes and measured ns.
struct Bucket
{
    std::vector<double> flops;
    std::vector<double> bytes;
    std::vector<double> ns;
};

/// One size's fit.
class BucketFit
{
  public:
    BucketFit(const Bucket& b, double peak, double bw, double etaC0, double etaM0, double reg)
        : m_b(b)
        , m_peak(peak)
        , m_bw(bw)
        , m_etaC0(etaC0)
        , m_etaM0(etaM0)
        , m_reg(reg)
    {
    }

    /// The objective at (etaC, etaM) with its best overhead, which it returns in \p overhead.
    double Objective(double etaC, double etaM, double& overhead) const
    {
        const size_t n = m_b.ns.size();
        m_resid.resize(n);
        for (size_t i = 0; i < n; ++i)
        {
            const double base = std::max(m_b.flops[i] / (m_peak * etaC) * 1e9,
                                         m_b.bytes[i] / (m_bw * etaM) * 1e9);
            m_resid[i] = {m_b.ns[i] - base, 1 / m_b.ns[i]};
        }
        overhead = std::max(0.0, WeightedMedian());
        double sum = 0;
        for (size_t i = 0; i < n; ++i)
        {
            sum += std::fabs(m_resid[i].first - overhead) * m_resid[i].second;
        }
        const double lc = std::log(etaC / m_etaC0);
        const double lm = std::log(etaM / m_etaM0);
        return sum / double(n) + m_reg * (lc * lc + lm * lm);
    }

    /// Grid, then two refinements around the best; returns the point.
    CalibrationPoint Fit() const
    {
        constexpr double kLo = 0.02;
        constexpr double kHi = 2.0;
        constexpr int kGrid = 24;
        const double ratio = std::pow(kHi / kLo, 1.0 / (kGrid - 1));
        double bestC = m_etaC0;
        double bestM = m_etaM0;
        double bestA = 0;
        double best = Objective(bestC, bestM, bestA);
        auto consider = [&](double c, double m)
        {
            c = std::clamp(c, kLo, kHi);
            m = std::clamp(m, kLo, kHi);
            double a = 0;
            const double v = Objective(c, m, a);
            if (v < best)
            {
                std::tie(best, bestC, bestM, bestA) = std::make_tuple(v, c, m, a);
            }
        };
        for (int i = 0; i < kGrid; ++i)
        {
            for (int j = 0; j < kGrid; ++j)
            {
                consider(kLo * std::pow(ratio, i), kLo * std::pow(ratio, j));
            }
        }
        double step = ratio;
        for (int round = 0; round < 3; ++round)
        {
            step = std::pow(step, 1.0 / 3);
            const double c0 = bestC;
            const double m0 = bestM;
            for (int i = -3; i <= 3; ++i)
            {
                for (int j = -3; j <= 3; ++j)
                {
                    consider(c0 * std::pow(step, i), m0 * std::pow(step, j));
                }
            }
        }
        CalibrationPoint p;
        p.overheadNs = bestA;
        p.etaCompute = bestC;
        p.etaMemory = bestM;
        p.rows = m_b.ns.size();
        double a = 0;
        p.fitMape = (Objective(bestC, bestM, a)
                     - m_reg
                           * (std::pow(std::log(bestC / m_etaC0), 2)
                              + std::pow(std::log(bestM / m_etaM0), 2)))
                    * 100;
        return p;
    }

  private:
    /// The weighted median of the residuals (weights their second member).
    double WeightedMedian() const
    {
        m_sorted = m_resid;
        std::sort(m_sorted.begin(), m_sorted.end());
        double total = 0;
        for (const auto& r : m_sorted)
        {
            total += r.second;
        }
        double acc = 0;
        for (const auto& r : m_sorted)
        {
            acc += r.second;
            if (acc >= total / 2)
            {
                return r.first;
            }
        }
        return m_sorted.back().first;
    }

    const Bucket& m_b;
    double m_peak;
    double m_bw;
    double m_etaC0;
    double m_etaM0;
    double m_reg;
    mutable std::vector<std::pair<double, double>> m_resid;
    mutable std::vector<std::pair<double, double>> m_sorted;
};

} // namespace

bool
CalibrationFitRow(size_t row)
{
    uint64_t z = uint64_t(row) + 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return (z >> 32) & 1;
}

ComputeCalibration
FitComputeCalibration(const std::vector<KernelTable>& tables,
                      const HardwareSpec& hw,
                      const CalibrationFitOptions& options)
{
    if (tables.empty())
    {
        throw InputError("", "tables", "at least one measured kernel table", "none");
    }
    ComputeCalibration cal;
    cal.device = tables.front().device;
    cal.hardware = hw.name;
    cal.source = tables.front().framework + " " + tables.front().version;
    // (op, dtype) -> (log2 level, log2 size) -> rows; the level is 0 but for GEMM by n and MoE
    // by inter / tp.
    using Buckets = std::map<std::pair<int, int>, Bucket>;
    std::map<std::pair<KernelOp, std::string>, std::pair<Buckets, Buckets>> classes;
    for (const KernelTable& t : tables)
    {
        if (t.device != cal.device)
        {
            throw InputError(t.file,
                             "device",
                             "the device of " + tables.front().file + " (" + cal.device + ")",
                             t.device);
        }
        for (size_t row = 0; row < t.Size(); ++row)
        {
            if (options.use && !options.use(row))
            {
                continue;
            }
            const ComputeOp op = KernelRooflineOp(hw, t, row);
            const int size = int(std::lround(std::log2(KernelRowSize(t, row))));
            auto& [bySize, byLevel] = classes[{t.op, KernelRowDtype(t, row)}];
            auto add = [&](Bucket& b)
            {
                b.flops.push_back(op.flops);
                b.bytes.push_back(op.Bytes());
                b.ns.push_back(MeasuredRowNs(t, row));
            };
            // Every row also goes into the one line of its size: the fallback when no level
            // has enough rows.
            add(bySize[{0, size}]);
            if ((t.op == KernelOp::Gemm && options.gemmByN)
                || (t.op == KernelOp::Moe && options.moeByWidth))
            {
                add(byLevel[{int(std::lround(std::log2(KernelRowN(t, row)))), size}]);
            }
        }
    }
    for (const auto& [classKey, buckets] : classes)
    {
        const auto& key = classKey; // lambdas may not capture a structured binding before C++20
        const double peak = hw.PeakFlops(KernelMathDtype(key.second));
        auto fitCurve = [&](const Buckets& bs, bool byN)
        {
            CalibrationCurve curve;
            curve.op = key.first;
            curve.dtype = key.second;
            curve.byN = byN;
            for (const auto& [at, b] : bs)
            {
                if (b.ns.size() < options.minRows)
                {
                    continue;
                }
                BucketFit fit(
                    b, peak, hw.hbmBwBytesPerSec, hw.etaCompute, hw.etaMemory, options.regulariser);
                CalibrationPoint p = fit.Fit();
                p.log2N = at.first;
                p.log2Size = at.second;
                curve.points.push_back(p);
            }
            return curve;
        };
        CalibrationCurve curve = fitCurve(buckets.second, true);
        if (curve.points.empty())
        {
            curve = fitCurve(buckets.first, false);
        }
        if (curve.points.empty())
        {
            throw InputError(tables.front().file,
                             KernelOpName(key.first) + " " + key.second,
                             "a size with at least " + std::to_string(options.minRows) + " rows",
                             "none");
        }
        curve.fitHbmBwBytesPerSec = hw.hbmBwBytesPerSec;
        curve.fitSms = hw.sms;
        cal.curves.push_back(std::move(curve));
    }
    return cal;
}

} // namespace fabricsim
