#include "kernel-roofline.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace fabricsim
{

namespace
{

ComputeOp
Costed(const HardwareSpec& hw, ComputeOp op, DType dtype)
{
    op.kernels = 0; // timed inside CUDA graphs
    CostOp(hw, op, dtype);
    return op;
}

} // namespace

DType
KernelMathDtype(const std::string& name)
{
    if (name.rfind("fp8", 0) == 0)
    {
        return DType::Fp8;
    }
    return ParseDType(name).value_or(DType::Bf16);
}

ComputeOp
KernelRooflineOp(const HardwareSpec& hw, const GemmTime& g)
{
    ComputeOp op;
    const double m = double(g.m);
    const double n = double(g.n);
    const double k = double(g.k);
    const DType dt = KernelMathDtype(g.dtype);
    op.flops = 2 * m * n * k;
    if (dt == DType::Fp8)
    {
        op.weightBytes = n * k;
        op.activationBytes = m * k * (2 + 1 + 1) + 2 * m * n;
    }
    else
    {
        op.weightBytes = 2 * n * k;
        op.activationBytes = 2 * (m * k + m * n);
    }
    return Costed(hw, op, dt);
}

ComputeOp
KernelRooflineOp(const HardwareSpec& hw, const AttentionTime& a, bool context)
{
    ComputeOp op;
    const double b = DTypeBytes(KernelMathDtype(a.dtype));
    const double kvb = DTypeBytes(KernelMathDtype(a.kvDtype));
    const double hd = double(a.heads) * a.headDim;
    const double kvd = double(a.kvHeads) * a.headDim;
    const double seqs = double(a.batch);
    if (context)
    {
        const double s = double(a.isl);
        op.flops = seqs * 4 * hd * s * (s + 1) / 2;
        op.activationBytes = seqs * s * (2 * hd + 2 * kvd) * b;
        op.kvBytes = seqs * s * 2 * kvd * kvb;
    }
    else
    {
        const double ctx = double(a.step) + 1;
        op.flops = seqs * 4 * hd * ctx;
        op.activationBytes = seqs * 2 * hd * b;
        op.kvBytes = seqs * ctx * 2 * kvd * kvb;
    }
    return Costed(hw, op, KernelMathDtype(a.dtype));
}

ComputeOp
KernelRooflineOp(const HardwareSpec& hw, const MoeTime& m)
{
    ComputeOp op;
    const DType dt = KernelMathDtype(m.dtype);
    const double wb = DTypeBytes(dt);
    const double h = m.hidden;
    const double inter = double(m.inter) / m.tp;
    const double localExperts = double(m.experts) / m.ep;
    const double pairs = double(m.tokens) * m.topk / m.ep;
    const double touched
        = localExperts * (1 - std::pow(1 - double(m.topk) / m.experts, double(m.tokens)));
    op.flops = pairs * 6 * h * inter;
    op.weightBytes = touched * 3 * h * inter * wb;
    op.activationBytes = 2 * (double(m.tokens) * h * 2 + pairs * 3 * inter);
    return Costed(hw, op, dt);
}

ComputeOp
KernelRooflineOp(const HardwareSpec& hw, const ElementwiseTime& e)
{
    ComputeOp op;
    op.activationBytes = e.bytes; // a few FLOPs a byte: memory-bound at any size
    return Costed(hw, op, KernelMathDtype(e.dtype));
}

ComputeOp
KernelRooflineOp(const HardwareSpec& hw, const KernelTable& table, size_t row)
{
    switch (table.op)
    {
    case KernelOp::Gemm:
        return KernelRooflineOp(hw, table.gemm.at(row));
    case KernelOp::ContextAttention:
        return KernelRooflineOp(hw, table.attention.at(row), true);
    case KernelOp::GenerationAttention:
        return KernelRooflineOp(hw, table.attention.at(row), false);
    case KernelOp::Moe:
        return KernelRooflineOp(hw, table.moe.at(row));
    case KernelOp::Elementwise:
        return KernelRooflineOp(hw, table.elementwise.at(row));
    }
    return {};
}

const std::string&
KernelRowDtype(const KernelTable& table, size_t row)
{
    switch (table.op)
    {
    case KernelOp::Gemm:
        return table.gemm.at(row).dtype;
    case KernelOp::Moe:
        return table.moe.at(row).dtype;
    case KernelOp::Elementwise:
        return table.elementwise.at(row).dtype;
    default:
        return table.attention.at(row).dtype;
    }
}

double
MeasuredRowNs(const KernelTable& table, size_t row)
{
    switch (table.op)
    {
    case KernelOp::Gemm:
        return table.gemm.at(row).ms * 1e6;
    case KernelOp::Moe:
        return table.moe.at(row).ms * 1e6;
    case KernelOp::Elementwise:
        return table.elementwise.at(row).ms * 1e6;
    default:
        return table.attention.at(row).ms * 1e6;
    }
}

ComputeOp
KernelShapeOp(const HardwareSpec& hw, const KernelShape& s)
{
    const std::string dtype = s.dtype == DType::Fp8 ? "fp8" : "bfloat16";
    switch (s.op)
    {
    case KernelOp::Gemm:
        return KernelRooflineOp(hw, GemmTime{dtype, s.m, s.n, s.k, 0});
    case KernelOp::Moe:
        return KernelRooflineOp(
            hw,
            MoeTime{
                dtype, s.tokens, s.hidden, s.inter, s.topk, s.experts, s.tp, s.ep, "balanced", 0});
    case KernelOp::Elementwise:
        return KernelRooflineOp(hw, ElementwiseTime{s.name, dtype, s.tokens, s.bytes, 0});
    case KernelOp::ContextAttention:
    case KernelOp::GenerationAttention:
        break;
    }
    const std::string adt = DTypeName(s.dtype);
    AttentionTime a{s.batch, s.isl, s.heads, s.kvHeads, s.headDim, 0, adt, adt, 0, 0};
    if (s.op == KernelOp::GenerationAttention)
    {
        a.step = s.cached;
        return KernelRooflineOp(hw, a, false);
    }
    ComputeOp op = KernelRooflineOp(hw, a, true);
    if (s.cached > 0)
    {
        const double b = DTypeBytes(s.dtype);
        const double prefix = double(s.batch) * double(s.isl) * double(s.cached);
        op.flops += 4.0 * s.heads * s.headDim * prefix;
        op.kvBytes += double(s.batch) * double(s.cached) * 2.0 * s.kvHeads * s.headDim * b;
        CostOp(hw, op, s.dtype);
    }
    return op;
}

double
KernelShapeSize(const KernelShape& s)
{
    switch (s.op)
    {
    case KernelOp::Gemm:
        return double(s.m);
    case KernelOp::ContextAttention:
        return double(s.isl);
    case KernelOp::GenerationAttention:
        return double(s.cached) + 1;
    case KernelOp::Moe:
        return double(s.tokens);
    case KernelOp::Elementwise:
        return s.bytes;
    }
    return 1;
}

double
KernelShapeLevel(const KernelShape& s)
{
    switch (s.op)
    {
    case KernelOp::Gemm:
        return double(s.n);
    case KernelOp::Moe:
        return double(s.inter) / std::max<uint32_t>(s.tp, 1);
    default:
        return 1;
    }
}

std::vector<KernelErrorClass>
KernelErrors(const KernelTable& table, const RowPricer& price, const RowFilter& use)
{
    struct Acc
    {
        std::vector<double> errors;
        size_t computeBound = 0;
    };
    std::map<std::string, Acc> byDtype;
    for (size_t row = 0; row < table.Size(); ++row)
    {
        if (use && !use(row))
        {
            continue;
        }
        const ComputeOp op = price(table, row);
        const double measured = MeasuredRowNs(table, row);
        Acc& a = byDtype[KernelRowDtype(table, row)];
        a.errors.push_back((op.timeNs - measured) / measured * 100);
        a.computeBound += op.MemoryBound() ? 0 : 1;
    }
    std::vector<KernelErrorClass> out;
    for (auto& [dtype, acc] : byDtype)
    {
        KernelErrorClass c;
        c.op = KernelOpName(table.op);
        c.dtype = dtype;
        c.rows = acc.errors.size();
        double sum = 0;
        for (double e : acc.errors)
        {
            sum += std::fabs(e);
            if (std::fabs(e) > std::fabs(c.worstError))
            {
                c.worstError = e;
            }
        }
        c.mape = sum / double(c.rows);
        std::vector<double> sorted = acc.errors;
        std::sort(sorted.begin(), sorted.end());
        const size_t mid = sorted.size() / 2;
        c.medianError = sorted.size() % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
        c.computeBound = double(acc.computeBound) / double(c.rows);
        out.push_back(c);
    }
    return out;
}

std::vector<KernelErrorClass>
KernelRooflineErrors(const KernelTable& table, const HardwareSpec& hw)
{
    return KernelErrors(
        table, [&hw](const KernelTable& t, size_t row) { return KernelRooflineOp(hw, t, row); });
}

nlohmann::json
ToJson(const KernelErrorClass& c)
{
    return {{"op", c.op},
            {"dtype", c.dtype},
            {"rows", c.rows},
            {"mape_pct", c.mape},
            {"median_error_pct", c.medianError},
            {"worst_error_pct", c.worstError},
            {"compute_bound", c.computeBound}};
}

} // namespace fabricsim
