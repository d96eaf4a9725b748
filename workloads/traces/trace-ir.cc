#include "trace-ir.h"

#include "input-error.h"

#include <algorithm>
#include <cctype>
#include <set>

namespace fabricsim
{

namespace
{

std::string
Squash(const std::string& s)
{
    std::string out;
    for (char c : s)
    {
        if (std::isalnum(static_cast<unsigned char>(c)))
        {
            out.push_back(char(std::tolower(static_cast<unsigned char>(c))));
        }
    }
    return out;
}

bool
Contains(const std::string& s, const char* what)
{
    return s.find(what) != std::string::npos;
}

} // namespace

std::string
OpClassName(OpClass c)
{
    switch (c)
    {
    case OpClass::kGemm:
        return "gemm";
    case OpClass::kMemory:
        return "memory";
    case OpClass::kHost:
        return "host";
    case OpClass::kComm:
        return "comm";
    }
    return "memory";
}

OpClass
ClassifyKernel(const std::string& name)
{
    std::string s;
    for (char c : name)
    {
        s.push_back(char(std::tolower(static_cast<unsigned char>(c))));
    }
    if (Contains(s, "nccl"))
    {
        return OpClass::kComm;
    }
    // Tensor-core math: cuBLAS / CUTLASS / cuDNN GEMM and convolution kernels, flash attention.
    static const char* math[]
        = {"gemm",  "cutlass",    "xmma",  "cublas",    "matmul", "conv",   "wgrad", "dgrad",
           "fprop", "flash",      "fmha",  "attention", "sgemm",  "hgemm",  "_nn_",  "_nt_",
           "_tn_",  "scaled_dot", "s1688", "s16816",    "h1688",  "h16816", "mma"};
    for (const char* m : math)
    {
        if (Contains(s, m))
        {
            return OpClass::kGemm;
        }
    }
    return OpClass::kMemory;
}

bool
TraceOp::Simulable() const
{
    if (kind == TraceOpKind::kCompute || !sized || bytes == 0)
    {
        return false;
    }
    return kind != TraceOpKind::kCollective || collective != CollectiveKind::kCustom;
}

std::optional<uint32_t>
DtypeBytes(const std::string& dtype)
{
    const std::string s = Squash(dtype);
    static const std::map<std::string, uint32_t> sizes
        = {{"float", 4},        {"float32", 4},
           {"fp32", 4},         {"int", 4},
           {"int32", 4},        {"uint32", 4},
           {"double", 8},       {"float64", 8},
           {"fp64", 8},         {"long", 8},
           {"longint", 8},      {"int64", 8},
           {"uint64", 8},       {"half", 2},
           {"float16", 2},      {"fp16", 2},
           {"c10half", 2},      {"bfloat16", 2},
           {"bf16", 2},         {"c10bfloat16", 2},
           {"short", 2},        {"shortint", 2},
           {"int16", 2},        {"byte", 1},
           {"char", 1},         {"int8", 1},
           {"uint8", 1},        {"unsignedchar", 1},
           {"signedchar", 1},   {"bool", 1},
           {"fp8", 1},          {"float8e4m3fn", 1},
           {"float8e5m2", 1},   {"c10float8e4m3fn", 1},
           {"c10float8e5m2", 1}};
    auto it = sizes.find(s);
    if (it == sizes.end())
    {
        return std::nullopt;
    }
    return it->second;
}

std::optional<CollectiveKind>
CollectiveFromName(const std::string& name)
{
    std::string s = Squash(name);
    // PyTorch's variants: _allgather_base, all_gather_into_tensor, _reduce_scatter_base,
    // reduce_scatter_tensor, alltoall_base, allreduce_coalesced, ...
    for (const char* suffix : {"intotensor", "coalesced", "base", "tensor", "single"})
    {
        const std::string suf(suffix);
        if (s.size() > suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0)
        {
            s.erase(s.size() - suf.size());
        }
    }
    if (s == "allreduce")
    {
        return CollectiveKind::kAllReduce;
    }
    if (s == "allgather")
    {
        return CollectiveKind::kAllGather;
    }
    if (s == "reducescatter" || s == "reducescatterblock")
    {
        return CollectiveKind::kReduceScatter;
    }
    if (s == "alltoall" || s == "alltoallv" || s == "all2all")
    {
        return CollectiveKind::kAllToAll;
    }
    if (s == "broadcast" || s == "bcast")
    {
        return CollectiveKind::kBroadcast;
    }
    if (s == "reduce")
    {
        return CollectiveKind::kReduce;
    }
    return std::nullopt;
}

void
CompleteRanks(ImportedTrace& trace, bool copyMissing)
{
    std::map<uint32_t, RankTrace> byRank;
    for (RankTrace& r : trace.ranks)
    {
        if (byRank.count(r.rank))
        {
            throw fabricsim::InputError(r.file,
                                        "rank",
                                        "one trace per rank",
                                        "rank " + std::to_string(r.rank) + " also in "
                                            + byRank[r.rank].file);
        }
        trace.worldSize = std::max(trace.worldSize, r.rank + 1);
        byRank.emplace(r.rank, std::move(r));
    }
    for (const auto& [rank, rt] : byRank)
    {
        for (const TraceOp& op : rt.ops)
        {
            for (uint32_t g : op.groupRanks)
            {
                if (g >= trace.worldSize)
                {
                    throw fabricsim::InputError(rt.file,
                                                op.name,
                                                "group ranks below the world size "
                                                    + std::to_string(trace.worldSize),
                                                "rank " + std::to_string(g));
                }
            }
            if (op.kind != TraceOpKind::kCompute && op.kind != TraceOpKind::kCollective
                && op.peer >= trace.worldSize)
            {
                throw fabricsim::InputError(rt.file,
                                            op.name,
                                            "a peer rank below the world size "
                                                + std::to_string(trace.worldSize),
                                            "rank " + std::to_string(op.peer));
            }
        }
    }
    std::vector<uint32_t> missing;
    trace.ranks.clear();
    for (uint32_t r = 0; r < trace.worldSize; ++r)
    {
        auto it = byRank.find(r);
        if (it != byRank.end())
        {
            trace.ranks.push_back(it->second); // copied: later ranks may copy it again
            continue;
        }
        if (!copyMissing)
        {
            RankTrace idle;
            idle.rank = r;
            idle.file = byRank.begin()->second.file;
            idle.steps = byRank.begin()->second.steps;
            trace.ranks.push_back(std::move(idle));
            continue;
        }
        // SPMD: the traced rank with the smallest distance stands in for this one.
        uint32_t best = byRank.begin()->first;
        for (const auto& [tr, rt] : byRank)
        {
            if (std::llabs(int64_t(tr) - int64_t(r)) < std::llabs(int64_t(best) - int64_t(r)))
            {
                best = tr;
            }
        }
        RankTrace copy = byRank.at(best);
        copy.mirrorOf = int(best);
        copy.rank = r;
        for (TraceOp& op : copy.ops)
        {
            const bool inGroup = op.groupRanks.empty()
                                 || std::find(op.groupRanks.begin(), op.groupRanks.end(), r)
                                        != op.groupRanks.end();
            if (!inGroup)
            {
                // The copied rank holds the same position in the shifted group (TP group of
                // ranks 0-1 on rank 0 becomes 2-3 on rank 2).
                for (uint32_t& g : op.groupRanks)
                {
                    g = uint32_t(
                        (int64_t(g) - int64_t(best) + int64_t(r) + int64_t(trace.worldSize))
                        % int64_t(trace.worldSize));
                }
                op.group += "@" + std::to_string(op.groupRanks.front());
            }
            if (op.kind == TraceOpKind::kSend || op.kind == TraceOpKind::kRecv)
            {
                // Shift the peer with the rank, around the world (ring-like patterns hold).
                op.peer = uint32_t(
                    (int64_t(op.peer) - int64_t(best) + int64_t(r) + int64_t(trace.worldSize))
                    % int64_t(trace.worldSize));
            }
        }
        trace.ranks.push_back(std::move(copy));
        missing.push_back(r);
    }
    if (!missing.empty())
    {
        std::string list;
        for (size_t i = 0; i < missing.size(); ++i)
        {
            list += (i ? ", " : "") + std::to_string(missing[i]);
        }
        trace.notes.push_back("no trace for rank(s) " + list + " of "
                              + std::to_string(trace.worldSize)
                              + ": each runs a copy of the nearest traced rank (SPMD assumption)");
    }
}

nlohmann::json
SummarizeTrace(const ImportedTrace& trace)
{
    nlohmann::json j;
    j["format"] = trace.format;
    j["world_size"] = trace.worldSize;
    j["notes"] = trace.notes;
    j["counts"] = trace.counts;
    nlohmann::json ranks = nlohmann::json::array();
    for (const RankTrace& r : trace.ranks)
    {
        std::map<std::string, uint64_t> kinds;
        int64_t computePs = 0;
        nlohmann::json comms = nlohmann::json::array();
        for (const TraceOp& op : r.ops)
        {
            if (op.kind == TraceOpKind::kCompute)
            {
                kinds["compute_" + OpClassName(op.opClass)]++;
                computePs += op.durationPs;
                continue;
            }
            kinds[op.kind == TraceOpKind::kCollective ? "collective"
                  : op.kind == TraceOpKind::kSend     ? "send"
                                                      : "recv"]++;
            if (r.mirrorOf < 0)
            {
                nlohmann::json c = {{"name", op.name},
                                    {"collective", op.collectiveName},
                                    {"sized", op.sized},
                                    {"bytes", op.bytes},
                                    {"dtype", op.dtype},
                                    {"group", op.group},
                                    {"group_ranks", op.groupRanks},
                                    {"seq", op.seq},
                                    {"recorded_us", double(op.durationPs) * 1e-6}};
                if (!op.sizeSource.empty())
                {
                    c["size_source"] = op.sizeSource;
                }
                if (!op.missing.empty())
                {
                    c["missing"] = op.missing;
                }
                comms.push_back(c);
            }
        }
        nlohmann::json jr = {{"rank", r.rank},
                             {"file", r.file},
                             {"device", r.device},
                             {"ops", r.ops.size()},
                             {"by_kind", kinds},
                             {"compute_us", double(computePs) * 1e-6},
                             {"steps", r.steps}};
        jr["recorded_span_us"] = r.recordedSpanPs < 0
                                     ? nlohmann::json()
                                     : nlohmann::json(double(r.recordedSpanPs) * 1e-6);
        if (r.mirrorOf >= 0)
        {
            jr["copy_of"] = r.mirrorOf;
        }
        else
        {
            jr["comms"] = comms;
        }
        ranks.push_back(jr);
    }
    j["ranks"] = ranks;
    return j;
}

} // namespace fabricsim
