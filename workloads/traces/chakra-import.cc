#include "chakra-import.h"

#include "input-error.h"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace fabricsim
{

namespace
{

const char* kPsAttr = "fabricsim_duration_ps";
const char* kLagAttr = "fabricsim_dep_lags_ps";
const char* kReleaseAttr = "fabricsim_release_ps";
const char* kLaneAttr = "fabricsim_lane";
const char* kGroupRanksAttr = "fabricsim_group_ranks";

bool
AttrInt(const ChakraNode& n, const char* name, int64_t& v)
{
    const ChakraAttr* a = n.Attr(name);
    if (!a || !a->IsInteger())
    {
        return false;
    }
    v = a->intValue;
    return true;
}

std::optional<CollectiveKind>
KindOfChakra(int64_t t)
{
    switch (t)
    {
    case 0:
        return CollectiveKind::kAllReduce;
    case 1:
        return CollectiveKind::kReduce;
    case 2:
        return CollectiveKind::kAllGather;
    case 5:
        return CollectiveKind::kBroadcast;
    case 6:
        return CollectiveKind::kAllToAll;
    case 7:
    case 8:
        return CollectiveKind::kReduceScatter;
    default:
        return std::nullopt;
    }
}

int64_t
ChakraTypeOf(CollectiveKind k)
{
    switch (k)
    {
    case CollectiveKind::kAllReduce:
        return 0;
    case CollectiveKind::kReduce:
        return 1;
    case CollectiveKind::kAllGather:
        return 2;
    case CollectiveKind::kBroadcast:
        return 5;
    case CollectiveKind::kAllToAll:
        return 6;
    case CollectiveKind::kReduceScatter:
        return 7;
    case CollectiveKind::kCustom:
        break;
    }
    return 9;
}

constexpr int64_t kMaxMicros = int64_t(1) << 40; // about 12.7 days

/// Kahn's algorithm over the imported edges; a cycle is bad input (the ops would never run).
void
CheckAcyclic(const RankTrace& rt, const ChakraTrace& t, const std::string& file)
{
    const size_t n = rt.ops.size();
    std::vector<uint32_t> pending(n);
    std::vector<std::vector<uint32_t>> next(n);
    for (uint32_t i = 0; i < n; ++i)
    {
        pending[i] = uint32_t(rt.ops[i].deps.size());
        for (const TraceDep& d : rt.ops[i].deps)
        {
            next[d.op].push_back(i);
        }
    }
    std::vector<uint32_t> ready;
    for (uint32_t i = 0; i < n; ++i)
    {
        if (pending[i] == 0)
        {
            ready.push_back(i);
        }
    }
    size_t done = 0;
    while (!ready.empty())
    {
        const uint32_t i = ready.back();
        ready.pop_back();
        ++done;
        for (uint32_t j : next[i])
        {
            if (--pending[j] == 0)
            {
                ready.push_back(j);
            }
        }
    }
    if (done == n)
    {
        return;
    }
    std::string ids;
    int shown = 0;
    uint64_t first = 0;
    for (uint32_t i = 0; i < n && shown < 5; ++i)
    {
        if (pending[i] > 0)
        {
            first = shown == 0 ? t.nodes[i].id : first;
            ids += (shown++ ? ", " : "") + std::to_string(t.nodes[i].id);
        }
    }
    throw fabricsim::InputError(file,
                                "node " + std::to_string(first),
                                "an acyclic dependency graph",
                                std::to_string(n - done) + " nodes on or behind a cycle (" + ids
                                    + ", ...)");
}

} // namespace

int64_t
RankFromChakraName(const std::string& path)
{
    const std::string base = path.substr(path.find_last_of('/') + 1);
    if (base.size() < 4 || base.compare(base.size() - 3, 3, ".et") != 0)
    {
        return -1;
    }
    const std::string stem = base.substr(0, base.size() - 3);
    const size_t dot = stem.find_last_of('.');
    if (dot == std::string::npos || dot + 1 >= stem.size() || stem.size() - dot > 8)
    {
        return -1;
    }
    int64_t r = 0;
    for (size_t i = dot + 1; i < stem.size(); ++i)
    {
        if (stem[i] < '0' || stem[i] > '9')
        {
            return -1;
        }
        r = r * 10 + (stem[i] - '0');
    }
    return r;
}

bool
LooksLikeChakra(std::string_view head)
{
    // A varint length then a GlobalMetadata message (field 1 or 2, length-delimited) or an
    // empty one; JSON and gzip start differently.
    if (head.empty() || head[0] == '{' || head[0] == '['
        || (head.size() >= 2 && uint8_t(head[0]) == 0x1f && uint8_t(head[1]) == 0x8b))
    {
        return false;
    }
    size_t i = 0;
    while (i < head.size() && (uint8_t(head[i]) & 0x80))
    {
        ++i;
    }
    if (i + 1 >= head.size())
    {
        return true; // an empty GlobalMetadata (length 0) then more
    }
    if (uint8_t(head[0]) == 0)
    {
        return true;
    }
    const uint8_t key = uint8_t(head[i + 1]);
    return key == 0x0a || key == 0x12;
}

void
ImportChakraTrace(const ChakraTrace& t,
                  const std::string& file,
                  uint32_t rank,
                  const ChakraImportOptions& opt,
                  ImportedTrace& out)
{
    out.format = "chakra";
    RankTrace rt;
    rt.rank = rank;
    rt.file = file;
    std::map<uint64_t, uint32_t> index;
    for (size_t i = 0; i < t.nodes.size(); ++i)
    {
        if (!index.emplace(t.nodes[i].id, uint32_t(i)).second)
        {
            throw fabricsim::InputError(file,
                                        "node " + std::to_string(i) + " id",
                                        "unique node ids",
                                        "id " + std::to_string(t.nodes[i].id) + " twice");
        }
    }
    bool anyStart = false;
    uint64_t minStart = UINT64_MAX;
    for (const ChakraNode& n : t.nodes)
    {
        if (n.startTimeMicros != 0)
        {
            anyStart = true;
            minStart = std::min(minStart, n.startTimeMicros);
        }
    }
    std::map<std::string, uint64_t> seq;
    bool cpuNoted = false;
    int64_t spanEnd = 0;
    uint64_t unresolved = 0;
    for (size_t i = 0; i < t.nodes.size(); ++i)
    {
        const ChakraNode& n = t.nodes[i];
        const std::string where = "node " + std::to_string(n.id);
        if (n.durationMicros > uint64_t(kMaxMicros))
        {
            throw fabricsim::InputError(file,
                                        where + " duration_micros",
                                        "a duration below 2^40 us",
                                        std::to_string(n.durationMicros));
        }
        // Start times are absolute (epoch) microseconds; what becomes ps is the offset from the
        // earliest, which must stay below 2^40 us (12.7 days) too, or start + duration wraps.
        if (n.startTimeMicros != 0 && n.startTimeMicros - minStart > uint64_t(kMaxMicros))
        {
            throw fabricsim::InputError(file,
                                        where + " start_time_micros",
                                        "a start within 2^40 us (12.7 days) of the trace's first",
                                        std::to_string(n.startTimeMicros - minStart)
                                            + " us after it");
        }
        TraceOp op;
        op.name = n.name.size() > 160 ? n.name.substr(0, 160) : n.name;
        op.sourceId = n.id;
        op.durationPs = int64_t(n.durationMicros) * 1000000;
        int64_t ps = 0;
        if (AttrInt(n, kPsAttr, ps) && ps >= 0 && ps <= kMaxMicros * 1000000)
        {
            op.durationPs = ps;
        }
        int64_t isCpu = 0;
        const bool cpu = AttrInt(n, "is_cpu_op", isCpu) && isCpu != 0;
        op.lane = cpu ? 1 : 0;
        int64_t lane = 0;
        if (AttrInt(n, kLaneAttr, lane) && lane >= 0 && lane < (int64_t(1) << 31))
        {
            op.lane = uint32_t(lane);
        }
        if (anyStart && n.startTimeMicros != 0)
        {
            op.startPs = int64_t(n.startTimeMicros - minStart) * 1000000;
            spanEnd = std::max(spanEnd, op.startPs + op.durationPs);
        }
        int64_t commType = -1;
        int64_t commSize = -1;
        const bool haveType = AttrInt(n, "comm_type", commType);
        const bool haveSize = AttrInt(n, "comm_size", commSize);
        if (haveSize && commSize < 0)
        {
            throw fabricsim::InputError(
                file, where + " comm_size", "a size in bytes >= 0", std::to_string(commSize));
        }
        const ChakraAttr* pg = n.Attr("pg_name");
        const std::string group = pg && pg->field == 29 ? pg->stringValue : "";
        switch (ChakraNodeType(n.type))
        {
        case ChakraNodeType::kCommColl:
            out.Count("comm_coll_nodes");
            if (!haveSize && cpu)
            {
                // The CPU side of a collective (c10d::allreduce_): its GPU kernel is its own node.
                op.kind = TraceOpKind::kCompute;
                op.opClass = OpClass::kHost;
                out.Count("comm_coll_cpu_side");
                break;
            }
            op.kind = TraceOpKind::kCollective;
            op.opClass = OpClass::kComm;
            op.collectiveName = haveType ? ChakraCollTypeName(commType) : "";
            op.group = group;
            op.seq = seq[group]++;
            {
                const ChakraAttr* gr = n.Attr(kGroupRanksAttr);
                if (gr && gr->IsList() && !gr->intList.empty())
                {
                    for (int64_t r : gr->intList)
                    {
                        if (r < 0 || r > 0xffffff)
                        {
                            throw fabricsim::InputError(file,
                                                        where + " " + kGroupRanksAttr,
                                                        "rank numbers",
                                                        std::to_string(r));
                        }
                        op.groupRanks.push_back(uint32_t(r));
                    }
                    if (std::find(op.groupRanks.begin(), op.groupRanks.end(), rank)
                        == op.groupRanks.end())
                    {
                        throw fabricsim::InputError(file,
                                                    where + " " + kGroupRanksAttr,
                                                    "a group including rank "
                                                        + std::to_string(rank),
                                                    "one without it");
                    }
                }
                else
                {
                    op.groupAssumed = true;
                }
            }
            if (!haveType)
            {
                op.collective = CollectiveKind::kCustom;
                op.missing = "no comm_type";
            }
            else if (auto k = KindOfChakra(commType))
            {
                op.collective = *k;
                if (haveSize)
                {
                    op.sized = true;
                    op.bytes = uint64_t(commSize);
                    op.sizeSource = "comm_size";
                    out.Count("sized_collectives");
                }
                else
                {
                    op.missing = "no comm_size";
                }
            }
            else
            {
                op.collective = CollectiveKind::kCustom;
                op.missing = ChakraCollTypeName(commType) + " is not re-simulated";
            }
            if (!op.sized)
            {
                out.Count("unsized");
            }
            break;
        case ChakraNodeType::kCommSend:
        case ChakraNodeType::kCommRecv:
        {
            const bool send = ChakraNodeType(n.type) == ChakraNodeType::kCommSend;
            op.kind = send ? TraceOpKind::kSend : TraceOpKind::kRecv;
            op.opClass = OpClass::kComm;
            op.collectiveName = send ? "send" : "recv";
            int64_t src = -1;
            int64_t dst = -1;
            AttrInt(n, "comm_src", src);
            AttrInt(n, "comm_dst", dst);
            AttrInt(n, "comm_tag", op.tag);
            const int64_t peer = send ? dst : src;
            if (peer < 0 || peer > 0xffffff)
            {
                throw fabricsim::InputError(file,
                                            where + (send ? " comm_dst" : " comm_src"),
                                            "the peer rank of a point-to-point node",
                                            peer < 0 ? "nothing" : std::to_string(peer));
            }
            op.peer = uint32_t(peer);
            out.worldSize = std::max(out.worldSize, op.peer + 1);
            if (haveSize)
            {
                op.sized = true;
                op.bytes = uint64_t(commSize);
                op.sizeSource = "comm_size";
            }
            else
            {
                op.missing = "no comm_size";
                out.Count("unsized");
            }
            out.Count(send ? "send_nodes" : "recv_nodes");
            break;
        }
        default:
            op.kind = TraceOpKind::kCompute;
            op.opClass = cpu ? OpClass::kHost : ClassifyKernel(n.name);
            if (ChakraNodeType(n.type) == ChakraNodeType::kComp)
            {
                out.Count("comp_nodes");
            }
            else
            {
                out.Count("other_nodes");
            }
            break;
        }
        if (cpu && op.kind == TraceOpKind::kCompute && !opt.cpuOps && !n.Attr(kPsAttr))
        {
            op.durationPs = 0;
            if (!cpuNoted)
            {
                out.notes.push_back(file
                                    + ": CPU ops keep their dependencies but take no time "
                                      "(their durations nest; see --chakra-cpu-ops)");
                cpuNoted = true;
            }
        }
        out.Count("chakra_nodes");
        if (op.kind == TraceOpKind::kCollective && op.collective == CollectiveKind::kAllToAll
            && op.sized)
        {
            // nothing extra: comm_size is what each rank sends in total
        }
        // Dependencies: control and data edges alike, each once.
        std::set<uint32_t> seen;
        const ChakraAttr* lags = n.Attr(kLagAttr);
        size_t depIndex = 0;
        out.Count("ctrl_deps", n.ctrlDeps.size());
        out.Count("data_deps", n.dataDeps.size());
        for (const std::vector<uint64_t>* deps : {&n.dataDeps, &n.ctrlDeps})
        {
            if (deps == &n.ctrlDeps && !opt.ctrlDeps)
            {
                continue;
            }
            for (uint64_t d : *deps)
            {
                const size_t li = depIndex++;
                auto it = index.find(d);
                if (it == index.end())
                {
                    ++unresolved;
                    continue;
                }
                if (it->second == i || !seen.insert(it->second).second)
                {
                    continue;
                }
                int64_t lag = 0;
                if (lags && lags->IsList() && li < lags->intList.size() && lags->intList[li] >= 0
                    && lags->intList[li] <= kMaxMicros * 1000000)
                {
                    lag = lags->intList[li];
                }
                op.deps.push_back({it->second, lag});
            }
        }
        int64_t release = 0;
        if (AttrInt(n, kReleaseAttr, release) && release >= 0 && release <= kMaxMicros * 1000000)
        {
            op.releasePs = release;
        }
        rt.ops.push_back(std::move(op));
    }
    if (unresolved > 0)
    {
        out.Count("unresolved_deps", unresolved);
        out.notes.push_back(file + ": " + std::to_string(unresolved)
                            + " dependencies name nodes that are not in the file; ignored");
    }
    if (!opt.ctrlDeps && out.counts["ctrl_deps"] > 0)
    {
        out.notes.push_back(
            file + ": dependencies are the data dependencies (as ASTRA-sim's feeder reads them); "
            + std::to_string(out.counts["ctrl_deps"])
            + " control dependencies kept in the trace only");
    }
    CheckAcyclic(rt, t, file);
    rt.recordedSpanPs = anyStart ? spanEnd : -1;
    for (const ChakraAttr& a : t.metadataAttrs)
    {
        if (a.name == "device" && a.field == 29)
        {
            rt.device = a.stringValue;
        }
    }
    out.worldSize = std::max(out.worldSize, rank + 1);
    out.ranks.push_back(std::move(rt));
}

ImportedTrace
ImportChakra(const std::vector<std::string>& files, const ChakraImportOptions& opt)
{
    if (files.empty())
    {
        throw fabricsim::InputError("<command line>", "TRACE", "at least one trace file", "none");
    }
    ImportedTrace out;
    out.format = "chakra";
    for (size_t i = 0; i < files.size(); ++i)
    {
        const int64_t named = RankFromChakraName(files[i]);
        const uint32_t rank = named >= 0 && files.size() > 1 ? uint32_t(named) : uint32_t(i);
        ImportChakraTrace(ReadChakraFile(files[i]), files[i], rank, opt, out);
    }
    out.worldSize = std::max(out.worldSize, opt.worldSize);
    CompleteRanks(out);
    return out;
}

ChakraTrace
ExportChakra(const ImportedTrace& trace, uint32_t rank)
{
    ChakraTrace t;
    t.version = "0.0.4";
    t.metadataAttrs.push_back(ChakraAttr::String("exporter", "fabricsim"));
    t.metadataAttrs.push_back(ChakraAttr::String("source_format", trace.format));
    const RankTrace& rt = trace.ranks.at(rank);
    if (!rt.device.empty())
    {
        t.metadataAttrs.push_back(ChakraAttr::String("device", rt.device));
    }
    for (size_t i = 0; i < rt.ops.size(); ++i)
    {
        const TraceOp& op = rt.ops[i];
        ChakraNode n;
        n.id = i + 1;
        n.name = op.name;
        n.durationMicros = uint64_t(std::llround(double(op.durationPs) * 1e-6));
        n.attrs.push_back(ChakraAttr::Bool("is_cpu_op", op.opClass == OpClass::kHost));
        if (op.Simulable() && op.kind == TraceOpKind::kCollective)
        {
            n.type = uint32_t(ChakraNodeType::kCommColl);
            n.attrs.push_back(ChakraAttr::Int64("comm_type", ChakraTypeOf(op.collective)));
            n.attrs.push_back(ChakraAttr::Int64("comm_size", int64_t(op.bytes)));
            n.attrs.push_back(ChakraAttr::BoolList("involved_dim", {true}));
            if (!op.group.empty())
            {
                n.attrs.push_back(ChakraAttr::String("pg_name", op.group));
            }
            if (!op.groupRanks.empty())
            {
                ChakraAttr g;
                g.name = kGroupRanksAttr;
                g.field = 10; // int64 list
                for (uint32_t r : op.groupRanks)
                {
                    g.intList.push_back(r);
                }
                n.attrs.push_back(g);
            }
        }
        else if (op.Simulable())
        {
            const bool send = op.kind == TraceOpKind::kSend;
            n.type = uint32_t(send ? ChakraNodeType::kCommSend : ChakraNodeType::kCommRecv);
            n.attrs.push_back(ChakraAttr::Int64("comm_src", send ? rank : op.peer));
            n.attrs.push_back(ChakraAttr::Int64("comm_dst", send ? op.peer : rank));
            n.attrs.push_back(ChakraAttr::Int64("comm_size", int64_t(op.bytes)));
            n.attrs.push_back(ChakraAttr::Int64("comm_tag", op.tag));
        }
        else
        {
            n.type = uint32_t(ChakraNodeType::kComp);
            if (op.IsComm())
            {
                n.name += " (communication replayed as recorded: " + op.missing + ")";
            }
        }
        n.attrs.push_back(ChakraAttr::Int64(kPsAttr, op.durationPs));
        n.attrs.push_back(ChakraAttr::Int64(kLaneAttr, op.lane));
        if (!op.deps.empty())
        {
            ChakraAttr lags;
            lags.name = kLagAttr;
            lags.field = 10;
            for (const TraceDep& d : op.deps)
            {
                n.dataDeps.push_back(d.op + 1);
                lags.intList.push_back(d.lagPs);
            }
            n.attrs.push_back(lags);
        }
        else if (op.releasePs != 0)
        {
            n.attrs.push_back(ChakraAttr::Int64(kReleaseAttr, op.releasePs));
        }
        t.nodes.push_back(std::move(n));
    }
    return t;
}

std::vector<std::string>
ExportChakraFiles(const ImportedTrace& trace, const std::string& dir, const std::string& prefix)
{
    std::vector<std::string> paths;
    for (uint32_t r = 0; r < trace.ranks.size(); ++r)
    {
        const std::string path = dir + "/" + prefix + "." + std::to_string(r) + ".et";
        WriteChakraFile(path, ExportChakra(trace, r));
        paths.push_back(path);
    }
    return paths;
}

} // namespace fabricsim
