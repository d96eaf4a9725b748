#include "compute-calibration.h"

#include "input-error.h"
#include "json-read.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace fabricsim
{

namespace
{

const char* const kFormat = "fabricsim-compute-calibration";
constexpr uint64_t kVersion = 1;
const char* const kModel
    = "t = overhead + max(F / (peak x eta_compute), B / (hbm_bw x eta_memory))";

/// The size variable's name in the file, per op.
const char*
SizeName(KernelOp op)
{
    switch (op)
    {
    case KernelOp::Gemm:
        return "m";
    case KernelOp::ContextAttention:
        return "isl";
    case KernelOp::GenerationAttention:
        return "step + 1";
    case KernelOp::Moe:
        return "num_tokens";
    case KernelOp::Elementwise:
        return "bytes";
    }
    return "";
}

using PointIt = std::vector<CalibrationPoint>::const_iterator;

/// \p a's point with its three parameters moved the fraction \p w of the way to \p b's.
CalibrationPoint
Between(const CalibrationPoint& a, const CalibrationPoint& b, double w)
{
    CalibrationPoint p = a;
    p.overheadNs = a.overheadNs + w * (b.overheadNs - a.overheadNs);
    p.etaCompute = a.etaCompute + w * (b.etaCompute - a.etaCompute);
    p.etaMemory = a.etaMemory + w * (b.etaMemory - a.etaMemory);
    return p;
}

/// The parameters at log2 size \p x on the line [first, last) (one level, by log2Size).
CalibrationPoint
OnLine(PointIt first, PointIt last, double x)
{
    if (x <= first->log2Size)
    {
        return *first;
    }
    if (x >= (last - 1)->log2Size)
    {
        return *(last - 1);
    }
    auto hi = std::upper_bound(
        first, last, x, [](double v, const CalibrationPoint& p) { return v < p.log2Size; });
    auto lo = hi - 1;
    CalibrationPoint p = Between(*lo, *hi, (x - lo->log2Size) / (hi->log2Size - lo->log2Size));
    p.log2Size = x;
    p.rows = 0;
    p.fitMape = 0;
    return p;
}

/// The end of the level that starts at \p first.
PointIt
LevelEnd(PointIt first, PointIt last)
{
    return std::find_if(
        first, last, [&](const CalibrationPoint& p) { return p.log2N != first->log2N; });
}

/// How a curve by levels names its second variable in the file.
const char*
LevelName(KernelOp op)
{
    return op == KernelOp::Moe ? " by inter / tp" : " by n";
}

} // namespace

CalibrationPoint
CalibrationCurve::At(double size, double n) const
{
    const double x = std::log2(std::max(size, 1.0));
    if (!byN)
    {
        return OnLine(points.begin(), points.end(), x);
    }
    const double y = std::log2(std::max(n, 1.0));
    // The two levels around y (the end one outside), each read at x, then linear in log2 n.
    PointIt lo = points.begin();
    PointIt loEnd = LevelEnd(lo, points.end());
    while (loEnd != points.end() && loEnd->log2N <= y)
    {
        lo = loEnd;
        loEnd = LevelEnd(lo, points.end());
    }
    const CalibrationPoint a = OnLine(lo, loEnd, x);
    if (loEnd == points.end() || y <= lo->log2N)
    {
        return a;
    }
    const CalibrationPoint b = OnLine(loEnd, LevelEnd(loEnd, points.end()), x);
    CalibrationPoint p = Between(a, b, (y - a.log2N) / (b.log2N - a.log2N));
    p.log2N = y;
    return p;
}

double
KernelRowSize(const KernelTable& table, size_t row)
{
    switch (table.op)
    {
    case KernelOp::Gemm:
        return double(table.gemm.at(row).m);
    case KernelOp::ContextAttention:
        return double(table.attention.at(row).isl);
    case KernelOp::GenerationAttention:
        return double(table.attention.at(row).step) + 1;
    case KernelOp::Moe:
        return double(table.moe.at(row).tokens);
    case KernelOp::Elementwise:
        return table.elementwise.at(row).bytes;
    }
    return 1;
}

double
KernelRowN(const KernelTable& table, size_t row)
{
    switch (table.op)
    {
    case KernelOp::Gemm:
        return double(table.gemm.at(row).n);
    case KernelOp::Moe:
    {
        KernelShape s;
        s.op = KernelOp::Moe;
        s.inter = table.moe.at(row).inter;
        s.tp = table.moe.at(row).tp;
        return KernelShapeLevel(s);
    }
    default:
        return 1;
    }
}

const CalibrationCurve*
ComputeCalibration::Find(KernelOp op, const std::string& dtype) const
{
    for (const CalibrationCurve& c : curves)
    {
        if (c.op == op && c.dtype == dtype)
        {
            return &c;
        }
    }
    return nullptr;
}

CalibrationPoint
ComputeCalibration::Cost(const HardwareSpec& hw,
                         const CalibrationCurve& curve,
                         double size,
                         DType dtype,
                         ComputeOp& op,
                         double n)
{
    const CalibrationPoint p = curve.At(size, n);
    op.kernels = 1;
    op.computeNs = op.flops / (hw.PeakFlops(dtype) * p.etaCompute) * 1e9;
    op.memoryNs = op.Bytes() / (hw.hbmBwBytesPerSec * p.etaMemory) * 1e9;
    if (curve.fitHbmBwBytesPerSec > 0 && p.etaMemory < 1)
    {
        // What the kernel lost below the fitted GPU's nominal bandwidth is latency (too few
        // bytes in flight), which a faster memory does not shorten: only the nominal-rate part
        // carries by HBM bandwidth, the rest by the SMs that keep bytes in flight. On the
        // fitted GPU this is the same time.
        const double sms = curve.fitSms > 0 && hw.sms > 0 ? double(curve.fitSms) / hw.sms : 1.0;
        op.memoryNs = (op.Bytes() / hw.hbmBwBytesPerSec
                       + op.Bytes() * (1 / p.etaMemory - 1) / curve.fitHbmBwBytesPerSec * sms)
                      * 1e9;
    }
    op.timeNs = p.overheadNs + std::max(op.computeNs, op.memoryNs);
    return p;
}

std::string
CalibrationDtype(DType d)
{
    switch (d)
    {
    case DType::Bf16:
    case DType::Fp16:
        return "bfloat16";
    case DType::Fp8:
        return "fp8";
    default:
        return "";
    }
}

const CalibrationCurve*
CalibrationCurveFor(const ComputeCalibration& cal, const KernelShape& s)
{
    if (s.window > 0)
    {
        return nullptr; // no measured sliding-window rows: the roofline prices it
    }
    if (s.blockScaled && s.dtype == DType::Fp8)
    {
        if (const CalibrationCurve* block = cal.Find(s.op, "fp8_block"))
        {
            return block;
        }
    }
    return cal.Find(s.op, CalibrationDtype(s.dtype));
}

void
CalibrateOp(const HardwareSpec& hw, const ComputeCalibration& cal, ComputeOp& op)
{
    if (op.shapes.empty())
    {
        return;
    }
    double computeNs = 0;
    double memoryNs = 0;
    double kernelNs = 0;
    double prefillOverhead = 0;
    for (const KernelShape& s : op.shapes)
    {
        const CalibrationCurve* curve = CalibrationCurveFor(cal, s);
        if (!curve)
        {
            return; // the roofline's cost stands
        }
        ComputeOp k;
        if (s.op == KernelOp::Moe)
        {
            k.flops = op.flops;
            k.weightBytes = op.weightBytes;
            k.kvBytes = op.kvBytes;
            k.activationBytes = op.activationBytes;
        }
        else
        {
            k = KernelShapeOp(hw, s);
        }
        const double overhead = ComputeCalibration::Cost(
                                    hw, *curve, KernelShapeSize(s), s.dtype, k, KernelShapeLevel(s))
                                    .overheadNs;
        computeNs += k.computeNs;
        memoryNs += k.memoryNs;
        if (s.op == KernelOp::ContextAttention)
        {
            kernelNs += k.timeNs - overhead;
            prefillOverhead = std::max(prefillOverhead, overhead);
        }
        else
        {
            kernelNs += k.timeNs;
        }
    }
    // The norm / rotary / activation kernels: calibrations fitted on tables without them (the
    // corpus's) leave them out, as the graph-timed tables they were fitted on do.
    for (const KernelShape& s : op.elementwise)
    {
        if (const CalibrationCurve* ew = cal.Find(KernelOp::Elementwise, CalibrationDtype(s.dtype)))
        {
            ComputeOp k = KernelShapeOp(hw, s);
            ComputeCalibration::Cost(hw, *ew, KernelShapeSize(s), s.dtype, k);
            memoryNs += k.memoryNs;
            kernelNs += k.timeNs;
        }
    }
    op.computeNs = computeNs;
    op.memoryNs = memoryNs;
    op.kernelNs = kernelNs + prefillOverhead;
    // Eager launches are asynchronous: the host's launch cost shows only when the kernels are
    // shorter. (The measured kernels already hold their fixed on-GPU cost.)
    op.timeNs = std::max(op.kernelNs, op.kernels * hw.launchOverheadSec * 1e9);
    op.calibrated = true;
}

ComputeOp
CalibratedRowOp(const ComputeCalibration& cal,
                const HardwareSpec& hw,
                const KernelTable& table,
                size_t row)
{
    ComputeOp op = KernelRooflineOp(hw, table, row);
    const std::string& dtype = KernelRowDtype(table, row);
    const CalibrationCurve* curve = cal.Find(table.op, dtype);
    if (!curve)
    {
        return op;
    }
    ComputeCalibration::Cost(
        hw, *curve, KernelRowSize(table, row), KernelMathDtype(dtype), op, KernelRowN(table, row));
    return op;
}

nlohmann::json
ComputeCalibration::ToJson() const
{
    nlohmann::json cs = nlohmann::json::array();
    for (const CalibrationCurve& c : curves)
    {
        nlohmann::json ps = nlohmann::json::array();
        for (const CalibrationPoint& p : c.points)
        {
            nlohmann::json pj = nlohmann::json::object();
            if (c.byN)
            {
                pj["log2_n"] = p.log2N;
            }
            pj["log2_size"] = p.log2Size;
            pj["overhead_us"] = p.overheadNs / 1e3;
            pj["eta_compute"] = p.etaCompute;
            pj["eta_memory"] = p.etaMemory;
            pj["rows"] = p.rows;
            pj["fit_mape_pct"] = p.fitMape;
            ps.push_back(pj);
        }
        nlohmann::json cj
            = {{"op", KernelOpName(c.op)},
               {"dtype", c.dtype},
               {"size", c.byN ? std::string(SizeName(c.op)) + LevelName(c.op) : SizeName(c.op)},
               {"points", ps}};
        if (!c.fittedOn.empty())
        {
            cj["fitted_on"] = c.fittedOn;
        }
        cs.push_back(cj);
    }
    return {{"format", kFormat},
            {"version", kVersion},
            {"fitted_on",
             {{"device", device}, {"hardware", hardware}, {"source", source}, {"rows", rows}}},
            {"model", kModel},
            {"curves", cs}};
}

ComputeCalibration
ComputeCalibration::FromJson(const nlohmann::json& j, const std::string& file)
{
    const JsonObject root(j, file, "");
    root.CheckKeys({"format", "version", "fitted_on", "model", "curves"});
    if (root.String("format") != kFormat)
    {
        throw InputError(file, "format", std::string("\"") + kFormat + "\"", root.String("format"));
    }
    root.Uint("version", kVersion, kVersion);
    ComputeCalibration cal;
    if (const auto f = root.OptionalObject("fitted_on"))
    {
        f->CheckKeys({"device", "hardware", "source", "rows"});
        cal.device = f->OptionalString("device", "");
        cal.hardware = f->OptionalString("hardware", "");
        cal.source = f->OptionalString("source", "");
        cal.rows = f->OptionalString("rows", "");
    }
    const nlohmann::json& cs = root.Array("curves");
    std::set<std::pair<std::string, std::string>> seen;
    for (size_t i = 0; i < cs.size(); ++i)
    {
        const JsonObject c(cs[i], file, JsonIndex("curves", i));
        c.CheckKeys({"op", "dtype", "size", "points", "fitted_on"});
        CalibrationCurve curve;
        if (const auto f = c.OptionalObject("fitted_on"))
        {
            f->CheckKeys({"device", "hardware", "source", "rows"});
            for (const char* key : {"device", "hardware", "source", "rows"})
            {
                const std::string v = f->OptionalString(key, "");
                if (!v.empty())
                {
                    curve.fittedOn[key] = v;
                }
            }
        }
        const std::string op = c.String("op");
        if (!ParseKernelOp(op, curve.op))
        {
            throw InputError(file,
                             c.Field("op"),
                             "gemm, context_attention, generation_attention, moe or elementwise",
                             op);
        }
        curve.dtype = c.String("dtype");
        if (!seen.insert({op, curve.dtype}).second)
        {
            throw InputError(
                file, c.Path(), "one curve per (op, dtype)", op + " " + curve.dtype + " again");
        }
        const nlohmann::json& ps = c.Array("points");
        if (ps.empty())
        {
            throw InputError(file, c.Field("points"), "at least one point", "none");
        }
        for (size_t k = 0; k < ps.size(); ++k)
        {
            const JsonObject p(ps[k], file, JsonIndex(c.Field("points"), k));
            p.CheckKeys({"log2_n",
                         "log2_size",
                         "overhead_us",
                         "eta_compute",
                         "eta_memory",
                         "rows",
                         "fit_mape_pct"});
            CalibrationPoint pt;
            const bool hasN = ps[k].is_object() && ps[k].contains("log2_n");
            if (k == 0)
            {
                curve.byN = hasN;
                if (hasN && curve.op != KernelOp::Gemm && curve.op != KernelOp::Moe)
                {
                    throw InputError(
                        file, p.Field("log2_n"), "no log2_n (GEMM and MoE curves only)", op);
                }
            }
            else if (hasN != curve.byN)
            {
                throw InputError(file,
                                 p.Field("log2_n"),
                                 curve.byN ? "log2_n, as on the curve's first point"
                                           : "no log2_n, as on the curve's first point",
                                 hasN ? "log2_n" : "none");
            }
            pt.log2N = hasN ? p.Number("log2_n", 0, 64) : 0;
            pt.log2Size = p.Number("log2_size", 0, 64);
            // Up to an hour, as the serving loop's own overheads: whatever a fit of any measured
            // table writes (the overhead is at most its fastest row) reads back.
            pt.overheadNs = p.Number("overhead_us", 0, 3.6e9) * 1e3;
            pt.etaCompute = p.Number("eta_compute", 1e-6, 4);
            pt.etaMemory = p.Number("eta_memory", 1e-6, 4);
            pt.rows = p.OptionalUint("rows", 0);
            pt.fitMape = p.OptionalNumber("fit_mape_pct", 0, 0, 1e9);
            if (!curve.points.empty() && pt.log2N < curve.points.back().log2N)
            {
                throw InputError(file,
                                 p.Field("log2_n"),
                                 "at least the previous point's "
                                     + std::to_string(curve.points.back().log2N),
                                 std::to_string(pt.log2N));
            }
            if (!curve.points.empty() && pt.log2N == curve.points.back().log2N
                && pt.log2Size <= curve.points.back().log2Size)
            {
                throw InputError(file,
                                 p.Field("log2_size"),
                                 "above the previous point's "
                                     + std::to_string(curve.points.back().log2Size),
                                 std::to_string(pt.log2Size));
            }
            curve.points.push_back(pt);
        }
        cal.curves.push_back(std::move(curve));
    }
    cal.ResolveFitHardware();
    return cal;
}

void
ComputeCalibration::ResolveFitHardware()
{
    const std::vector<std::string> presets = HardwareSpec::PresetNames();
    for (CalibrationCurve& c : curves)
    {
        const auto own = c.fittedOn.find("hardware");
        const std::string& name = own != c.fittedOn.end() ? own->second : hardware;
        c.fitHbmBwBytesPerSec = 0;
        c.fitSms = 0;
        if (std::find(presets.begin(), presets.end(), name) != presets.end())
        {
            const HardwareSpec h = HardwareSpec::Preset(name);
            c.fitHbmBwBytesPerSec = h.hbmBwBytesPerSec;
            c.fitSms = h.sms;
        }
    }
}

ComputeCalibration
ComputeCalibration::Read(const std::string& path)
{
    return FromJson(LoadJsonFile(path), path);
}

} // namespace fabricsim
