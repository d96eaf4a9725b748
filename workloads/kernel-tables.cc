#include "kernel-tables.h"

#include "csv-table.h"
#include "input-error.h"

namespace fabricsim
{

namespace
{

const char* const kWhat = "measured kernel table (CSV: framework, version, device, op_name, ...)";

std::vector<std::string>
RequiredColumns(KernelOp op)
{
    switch (op)
    {
    case KernelOp::Gemm:
        return {"gemm_dtype", "m", "n", "k", "latency"};
    case KernelOp::ContextAttention:
    case KernelOp::GenerationAttention:
        return {"batch_size",
                "isl",
                "num_heads",
                "num_key_value_heads",
                "head_dim",
                "attn_dtype",
                "kv_cache_dtype",
                "step",
                "window_size",
                "latency"};
    case KernelOp::Moe:
        return {"moe_dtype",
                "num_tokens",
                "hidden_size",
                "inter_size",
                "topk",
                "num_experts",
                "moe_tp_size",
                "moe_ep_size",
                "distribution",
                "latency"};
    case KernelOp::Elementwise:
        return {"kernel", "dtype", "num_tokens", "bytes", "latency"};
    }
    return {};
}

} // namespace

bool
ParseKernelOp(const std::string& name, KernelOp& op)
{
    for (KernelOp k : {KernelOp::Gemm,
                       KernelOp::ContextAttention,
                       KernelOp::GenerationAttention,
                       KernelOp::Moe,
                       KernelOp::Elementwise})
    {
        if (KernelOpName(k) == name)
        {
            op = k;
            return true;
        }
    }
    return false;
}

std::string
KernelOpName(KernelOp op)
{
    switch (op)
    {
    case KernelOp::Gemm:
        return "gemm";
    case KernelOp::ContextAttention:
        return "context_attention";
    case KernelOp::GenerationAttention:
        return "generation_attention";
    case KernelOp::Moe:
        return "moe";
    case KernelOp::Elementwise:
        return "elementwise";
    }
    return "gemm";
}

KernelTable
ReadKernelTable(const std::string& path)
{
    const CsvTable csv
        = CsvTable::Read(path, kWhat, {"framework", "version", "device", "op_name", "latency"});
    if (csv.Rows() == 0)
    {
        throw InputError(path, "line 2", "at least one measured row", "none");
    }
    KernelTable t;
    t.file = path;
    const size_t opCol = csv.Column("op_name");
    if (!ParseKernelOp(csv.Text(0, opCol), t.op))
    {
        csv.Fail(0,
                 opCol,
                 "gemm, context_attention, generation_attention, moe or elementwise",
                 "\"" + csv.Text(0, opCol) + "\"");
    }
    for (const std::string& c : RequiredColumns(t.op))
    {
        csv.Column(c); // names line 1 when absent
    }
    const size_t devCol = csv.Column("device");
    const size_t fwCol = csv.Column("framework");
    const size_t verCol = csv.Column("version");
    t.device = csv.Text(0, devCol);
    t.framework = csv.Text(0, fwCol);
    t.version = csv.Text(0, verCol);
    auto col = [&](const char* name)
    {
        return csv.Column(name);
    };
    const uint64_t k32 = UINT32_MAX;
    for (size_t r = 0; r < csv.Rows(); ++r)
    {
        // One table, one op on one device with one framework version.
        for (auto [c, want] : {std::pair<size_t, const std::string*>{opCol, nullptr},
                               {devCol, &t.device},
                               {fwCol, &t.framework},
                               {verCol, &t.version}})
        {
            const std::string expect = want ? *want : KernelOpName(t.op);
            if (csv.Text(r, c) != expect)
            {
                csv.Fail(r,
                         c,
                         "\"" + expect
                             + "\" as on the first row (one table per op, device and "
                               "version)",
                         "\"" + csv.Text(r, c) + "\"");
            }
        }
        const double ms = csv.Positive(r, col("latency"));
        switch (t.op)
        {
        case KernelOp::Gemm:
        {
            GemmTime g;
            g.dtype = csv.Text(r, col("gemm_dtype"));
            g.m = csv.Count(r, col("m"), 1, k32);
            g.n = csv.Count(r, col("n"), 1, k32);
            g.k = csv.Count(r, col("k"), 1, k32);
            g.ms = ms;
            t.gemm.push_back(g);
            break;
        }
        case KernelOp::ContextAttention:
        case KernelOp::GenerationAttention:
        {
            AttentionTime a;
            a.batch = csv.Count(r, col("batch_size"), 1, k32);
            a.isl = csv.Count(r, col("isl"), 1, k32);
            a.heads = uint32_t(csv.Count(r, col("num_heads"), 1, 1 << 16));
            a.kvHeads = uint32_t(csv.Count(r, col("num_key_value_heads"), 1, a.heads));
            if (a.heads % a.kvHeads != 0)
            {
                csv.Fail(r,
                         col("num_key_value_heads"),
                         "a divisor of num_heads (" + std::to_string(a.heads) + ")",
                         std::to_string(a.kvHeads));
            }
            a.headDim = uint32_t(csv.Count(r, col("head_dim"), 1, 1 << 16));
            a.step = csv.Count(r, col("step"), 0, k32);
            a.dtype = csv.Text(r, col("attn_dtype"));
            a.kvDtype = csv.Text(r, col("kv_cache_dtype"));
            a.window = csv.Count(r, col("window_size"), 0, k32);
            if (t.op == KernelOp::GenerationAttention && a.isl != 1)
            {
                csv.Fail(
                    r, col("isl"), "1 (one query token per decode step)", std::to_string(a.isl));
            }
            a.ms = ms;
            t.attention.push_back(a);
            break;
        }
        case KernelOp::Moe:
        {
            MoeTime m;
            m.dtype = csv.Text(r, col("moe_dtype"));
            m.tokens = csv.Count(r, col("num_tokens"), 1, k32);
            m.hidden = uint32_t(csv.Count(r, col("hidden_size"), 1, 1 << 20));
            m.inter = uint32_t(csv.Count(r, col("inter_size"), 1, 1 << 24));
            m.experts = uint32_t(csv.Count(r, col("num_experts"), 1, 1 << 16));
            m.topk = uint32_t(csv.Count(r, col("topk"), 1, m.experts));
            m.tp = uint32_t(csv.Count(r, col("moe_tp_size"), 1, 1 << 16));
            m.ep = uint32_t(csv.Count(r, col("moe_ep_size"), 1, m.experts));
            if (m.tp > 1 && m.ep > 1)
            {
                csv.Fail(r,
                         col("moe_ep_size"),
                         "1 when moe_tp_size is above 1 (one of them is 1)",
                         std::to_string(m.ep));
            }
            m.distribution = csv.Text(r, col("distribution"));
            m.ms = ms;
            t.moe.push_back(m);
            break;
        }
        case KernelOp::Elementwise:
        {
            ElementwiseTime e;
            e.kernel = csv.Text(r, col("kernel"));
            e.dtype = csv.Text(r, col("dtype"));
            e.tokens = csv.Count(r, col("num_tokens"), 1, k32);
            e.bytes = csv.Positive(r, col("bytes"));
            e.ms = ms;
            t.elementwise.push_back(e);
            break;
        }
        }
    }
    return t;
}

} // namespace fabricsim
