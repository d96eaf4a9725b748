#include "kineto-import.h"

#include "compressed-file.h"
#include "input-error.h"
#include "json-describe.h"
#include "json-reader.h"
#include "unit-conversions.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>

namespace fabricsim
{

namespace
{

using nlohmann::json;

/// The fields of one "X" event the importer uses.
struct Event
{
    double ts = 0;
    double dur = 0;
    std::string name;
    std::string cat; ///< lower case
    int64_t pid = -1;
    int64_t tid = -1;
    const json* args = nullptr;
    size_t index = 0;
};

/// What a kernel or CPU op says about its collective.
struct CommMeta
{
    std::string collName;
    bool haveIn = false;
    bool haveOut = false;
    uint64_t inNelems = 0;
    uint64_t outNelems = 0;
    std::string dtype;
    int64_t groupSize = -1;
    std::string pgName;
    std::vector<uint32_t> pgRanks;
    bool havePgRanks = false;
    std::string source;
};

std::string
Lower(std::string s)
{
    for (char& c : s)
    {
        c = char(std::tolower(static_cast<unsigned char>(c)));
    }
    return s;
}

bool
StartsWith(const std::string& s, const std::string& p)
{
    return s.compare(0, p.size(), p) == 0;
}

/// Integer id from a JSON pid / tid (strings and others map to -1).
int64_t
IdOf(const json& v)
{
    if (v.is_number_integer())
    {
        return v.get<int64_t>();
    }
    if (v.is_number_unsigned())
    {
        return int64_t(v.get<uint64_t>() & 0x7fffffffffffffffULL);
    }
    return -1;
}

/// Sets \p v to the non-negative integer member \p key of \p args if it is one.
bool
GetCount(const json& args, const char* key, uint64_t& v)
{
    const std::optional<uint64_t> x = JsonObject::MemberUint(args, key); // the common rule
    v = x.value_or(v);
    return x.has_value();
}

/// "[0, 1, 2]" (PyTorch writes the list as a string) or a JSON array of ranks.
bool
ParseRankList(const json& v, std::vector<uint32_t>& out)
{
    out.clear();
    if (v.is_array())
    {
        for (const json& e : v)
        {
            if (!e.is_number_integer() || e.get<int64_t>() < 0 || e.get<int64_t>() > 0xffffff)
            {
                return false;
            }
            out.push_back(uint32_t(e.get<int64_t>()));
        }
        return true;
    }
    if (!v.is_string())
    {
        return false;
    }
    const std::string s = v.get<std::string>();
    size_t i = 0;
    while (i < s.size() && (s[i] == ' ' || s[i] == '['))
    {
        ++i;
    }
    while (i < s.size())
    {
        if (s[i] == ']' || s[i] == ' ' || s[i] == ',')
        {
            ++i;
            continue;
        }
        if (!std::isdigit(static_cast<unsigned char>(s[i])))
        {
            return false;
        }
        uint64_t x = 0;
        while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])))
        {
            x = x * 10 + uint64_t(s[i] - '0');
            if (x > 0xffffff)
            {
                return false;
            }
            ++i;
        }
        out.push_back(uint32_t(x));
    }
    return true;
}

/// Fill \p m from the collective fields PyTorch writes on kernels and record_param_comms.
bool
ReadCommArgs(const json& args, CommMeta& m)
{
    m.collName = JsonObject::MemberString(args, "Collective name");
    m.haveIn = GetCount(args, "In msg nelems", m.inNelems);
    m.haveOut = GetCount(args, "Out msg nelems", m.outNelems);
    m.dtype = JsonObject::MemberString(args, "dtype");
    uint64_t g = 0;
    if (GetCount(args, "Group size", g))
    {
        m.groupSize = int64_t(std::min<uint64_t>(g, 1u << 24));
    }
    m.pgName = JsonObject::MemberString(args, "Process Group Name");
    auto it = args.find("Process Group Ranks");
    m.havePgRanks = it != args.end() && ParseRankList(*it, m.pgRanks) && !m.pgRanks.empty();
    return !m.collName.empty() && (m.haveIn || m.haveOut);
}

/// The nccl:<coll> annotation's collective, element count and type (Input Dims / Input type).
bool
ReadAnnotation(const Event& e, CommMeta& m)
{
    m.collName = e.name.substr(5);
    if (!e.args)
    {
        return false;
    }
    auto dims = e.args->find("Input Dims");
    auto types = e.args->find("Input type");
    if (dims == e.args->end() || !dims->is_array() || dims->empty() || !(*dims)[0].is_array()
        || types == e.args->end() || !types->is_array() || types->empty()
        || !(*types)[0].is_string())
    {
        return false;
    }
    uint64_t n = 1;
    for (const json& d : (*dims)[0])
    {
        if (!d.is_number_integer() || d.get<int64_t>() < 0)
        {
            return false;
        }
        const uint64_t x = uint64_t(d.get<int64_t>());
        if (x != 0 && n > (uint64_t(1) << 62) / x)
        {
            return false;
        }
        n *= x;
    }
    m.inNelems = n;
    m.haveIn = true;
    m.dtype = (*types)[0].get<std::string>();
    return true;
}

/// The collective a kernel name announces: "AllReduce" of ncclKernel_AllReduce_RING_LL_Sum_float
/// and of ncclDevKernel_AllReduce_Sum_f32_RING_LL; "" when not an NCCL kernel.
std::string
NcclKernelCollective(const std::string& name)
{
    std::string s = name;
    if (StartsWith(s, "void "))
    {
        s = s.substr(5);
    }
    for (const char* p : {"ncclKernel_", "ncclDevKernel_"})
    {
        if (StartsWith(s, p))
        {
            s = s.substr(std::string(p).size());
            const size_t end = s.find_first_of("_(<");
            return end == std::string::npos ? s : s.substr(0, end);
        }
    }
    return "";
}

int64_t
ToPs(double us)
{
    return units::RoundPs(us * 1e6, "trace time");
}

class KinetoReader
{
  public:
    KinetoReader(const json& doc,
                 const std::string& file,
                 uint32_t defaultRank,
                 const KinetoOptions& opt,
                 ImportedTrace& out)
        : m_doc(doc)
        , m_file(file)
        , m_opt(opt)
        , m_out(out)
    {
        m_rank.rank = defaultRank;
        m_rank.file = file;
    }

    void Read()
    {
        ReadHeader();
        ReadEvents();
        SelectWindow();
        BuildOps();
        InferDependencies();
        m_out.ranks.push_back(std::move(m_rank));
    }

  private:
    [[noreturn]] void Bad(const std::string& field,
                          const std::string& expected,
                          const std::string& found) const
    {
        throw fabricsim::InputError(m_file, field, expected, found);
    }

    void ReadHeader()
    {
        if (!m_doc.is_object() && !m_doc.is_array())
        {
            Bad("",
                "a Chrome-trace JSON object with traceEvents",
                "a JSON " + std::string(m_doc.type_name()));
        }
        if (m_doc.is_object())
        {
            auto ev = m_doc.find("traceEvents");
            if (ev == m_doc.end() || !ev->is_array())
            {
                Bad("traceEvents",
                    "an array of trace events",
                    ev == m_doc.end() ? "nothing" : std::string("a JSON ") + ev->type_name());
            }
            m_events = &*ev;
            auto di = m_doc.find("distributedInfo");
            if (di != m_doc.end() && di->is_object())
            {
                ReadDistributed(*di);
            }
            auto dp = m_doc.find("deviceProperties");
            if (dp != m_doc.end() && dp->is_array() && !dp->empty() && (*dp)[0].is_object())
            {
                m_rank.device = JsonObject::MemberString((*dp)[0], "name");
            }
        }
        else
        {
            m_events = &m_doc; // the bare-array form of the Trace Event Format
        }
    }

    void ReadDistributed(const json& di)
    {
        uint64_t v = 0;
        if (di.contains("rank"))
        {
            if (!GetCount(di, "rank", v) || v > 0xffffff)
            {
                Bad("distributedInfo.rank", "a rank number", DescribeJson(di["rank"]));
            }
            m_rank.rank = uint32_t(v);
        }
        if (di.contains("world_size"))
        {
            if (!GetCount(di, "world_size", v) || v == 0 || v > 0xffffff)
            {
                Bad("distributedInfo.world_size",
                    "a positive world size",
                    DescribeJson(di["world_size"]));
            }
            m_out.worldSize = std::max(m_out.worldSize, uint32_t(v));
            m_worldSize = uint32_t(v);
        }
        if (m_rank.rank >= m_worldSize && di.contains("world_size"))
        {
            Bad("distributedInfo.rank",
                "a rank below world_size " + std::to_string(m_worldSize),
                std::to_string(m_rank.rank));
        }
        auto pgs = di.find("pg_config");
        if (pgs != di.end() && pgs->is_array())
        {
            for (const json& pg : *pgs)
            {
                if (!pg.is_object())
                {
                    continue;
                }
                std::vector<uint32_t> ranks;
                auto r = pg.find("ranks");
                if (r != pg.end() && ParseRankList(*r, ranks) && !ranks.empty())
                {
                    m_pgRanks[JsonObject::MemberString(pg, "pg_name")] = ranks;
                }
            }
        }
    }

    void ReadEvents()
    {
        for (size_t i = 0; i < m_events->size(); ++i)
        {
            const json& e = (*m_events)[i];
            if (!e.is_object())
            {
                Bad("traceEvents[" + std::to_string(i) + "]",
                    "an event object",
                    std::string("a JSON ") + e.type_name());
            }
            auto ph = e.find("ph");
            if (ph == e.end() || !ph->is_string() || ph->get<std::string>() != "X")
            {
                continue; // flows, counters, metadata and instants carry nothing replayable
            }
            Event ev;
            ev.index = i;
            const std::string at = "traceEvents[" + std::to_string(i) + "]";
            auto ts = e.find("ts");
            auto dur = e.find("dur");
            if (ts == e.end() || !ts->is_number() || !std::isfinite(ts->get<double>()))
            {
                Bad(at + ".ts",
                    "a time in microseconds",
                    ts == e.end() ? "nothing" : DescribeJson(*ts));
            }
            if (dur == e.end() || !dur->is_number() || !(dur->get<double>() >= 0)
                || dur->get<double>() > 1e12)
            {
                Bad(at + ".dur",
                    "a duration in microseconds (>= 0)",
                    dur == e.end() ? "nothing" : DescribeJson(*dur));
            }
            ev.ts = ts->get<double>();
            if (std::fabs(ev.ts) > 1e17)
            {
                Bad(at + ".ts", "a time in microseconds below 1e17", DescribeJson(*ts));
            }
            ev.dur = dur->get<double>();
            ev.name = JsonObject::MemberString(e, "name");
            ev.cat = Lower(JsonObject::MemberString(e, "cat"));
            if (e.contains("pid"))
            {
                ev.pid = IdOf(e["pid"]);
            }
            if (e.contains("tid"))
            {
                ev.tid = IdOf(e["tid"]);
            }
            auto args = e.find("args");
            if (args != e.end() && args->is_object())
            {
                ev.args = &*args;
            }
            Classify(ev);
        }
    }

    void Classify(const Event& ev)
    {
        if (ev.cat == "kernel" || ev.cat == "gpu_memcpy" || ev.cat == "gpu_memset"
            || ev.cat == "memcpy" || ev.cat == "memset")
        {
            m_gpu.push_back(ev);
            return;
        }
        if (ev.cat == "cuda_runtime" || ev.cat == "cuda_driver" || ev.cat == "runtime"
            || ev.cat == "driver")
        {
            uint64_t corr = 0;
            if (ev.args && GetCount(*ev.args, "correlation", corr))
            {
                m_launch[corr] = ev;
            }
            return;
        }
        if (StartsWith(ev.name, "ProfilerStep#"))
        {
            m_steps.push_back(ev);
            return;
        }
        if (ev.name == "record_param_comms" || StartsWith(ev.name, "nccl:"))
        {
            m_commCpu[{ev.pid, ev.tid}].push_back(ev);
        }
    }

    /// Chooses the profiler steps to import and keeps the GPU ops launched in them.
    void SelectWindow()
    {
        std::sort(m_steps.begin(),
                  m_steps.end(),
                  [](const Event& a, const Event& b) { return a.ts < b.ts; });
        double lo = -INFINITY;
        double hi = INFINITY;
        if (m_opt.step >= 0)
        {
            const std::string want = "ProfilerStep#" + std::to_string(m_opt.step);
            std::string have;
            const Event* found = nullptr;
            for (const Event& s : m_steps)
            {
                have += (have.empty() ? "" : ", ") + s.name;
                if (s.name == want)
                {
                    found = &s;
                }
            }
            if (!found)
            {
                Bad("--step",
                    "a profiler step in the trace (" + want + ")",
                    have.empty() ? "no ProfilerStep annotations" : have);
            }
            lo = found->ts;
            hi = found->ts + found->dur;
            m_rank.steps = 1;
        }
        else if (!m_steps.empty())
        {
            lo = m_steps.front().ts;
            hi = lo;
            for (const Event& s : m_steps)
            {
                hi = std::max(hi, s.ts + s.dur);
            }
            m_rank.steps = uint32_t(m_steps.size());
        }
        else
        {
            m_out.notes.push_back(
                m_file + ": no ProfilerStep annotations; every GPU op is imported as one step");
        }
        m_out.Count("profiler_steps", m_rank.steps);
        std::vector<Event> kept;
        for (const Event& g : m_gpu)
        {
            double at = g.ts;
            uint64_t corr = 0;
            if (g.args && GetCount(*g.args, "correlation", corr))
            {
                auto it = m_launch.find(corr);
                if (it != m_launch.end())
                {
                    at = it->second.ts;
                }
            }
            if (at >= lo && at <= hi)
            {
                kept.push_back(g);
            }
        }
        std::sort(kept.begin(),
                  kept.end(),
                  [](const Event& a, const Event& b)
                  { return a.ts != b.ts ? a.ts < b.ts : a.index < b.index; });
        m_gpu = std::move(kept);
        if (m_gpu.empty())
        {
            Bad("traceEvents",
                "GPU kernels, copies or memsets (cat kernel / gpu_memcpy / gpu_memset) in the "
                "imported steps",
                "none");
        }
    }

    /// The record_param_comms / nccl:* ops around the launch of kernel \p k, innermost last.
    std::vector<const Event*> LaunchingOps(const Event& k) const
    {
        std::vector<const Event*> out;
        uint64_t corr = 0;
        if (!k.args || !GetCount(*k.args, "correlation", corr))
        {
            return out;
        }
        auto l = m_launch.find(corr);
        if (l == m_launch.end())
        {
            return out;
        }
        const Event& launch = l->second;
        auto ops = m_commCpu.find({launch.pid, launch.tid});
        if (ops == m_commCpu.end())
        {
            return out;
        }
        for (const Event& c : ops->second)
        {
            if (c.ts <= launch.ts && c.ts + c.dur >= launch.ts + launch.dur)
            {
                out.push_back(&c);
            }
        }
        return out;
    }

    void BuildOps()
    {
        const double origin = m_gpu.front().ts;
        int64_t end = 0;
        std::map<std::string, uint64_t> seq;
        for (const Event& g : m_gpu)
        {
            TraceOp op;
            op.name = g.name.substr(0, g.name.find('('));
            if (op.name.size() > 160)
            {
                op.name.resize(160);
            }
            // Offsets past 2^62 ps (53 days) from the first kernel would wrap int64 ps (with
            // the duration added); ts alone is only bounded by 1e17 us.
            if (!((g.ts - origin + g.dur) * 1e6 < 4611686018427387904.0))
            {
                Bad("traceEvents[" + std::to_string(g.index) + "].ts",
                    "a kernel within 53 days (2^62 ps) of the trace's first kernel",
                    std::to_string(g.ts - origin) + " us after it");
            }
            op.startPs = ToPs(g.ts - origin);
            op.durationPs = ToPs(g.dur);
            end = std::max(end, op.startPs + op.durationPs);
            uint64_t stream = 0;
            op.lane = g.args && GetCount(*g.args, "stream", stream)
                          ? uint32_t(stream & 0xffffffff)
                          : uint32_t(std::max<int64_t>(g.tid, 0));
            uint64_t corr = 0;
            if (g.args && GetCount(*g.args, "correlation", corr))
            {
                op.sourceId = corr;
            }
            m_out.Count("gpu_ops");
            const std::string kernelColl = g.cat == "kernel" ? NcclKernelCollective(g.name) : "";
            if (kernelColl.empty())
            {
                op.kind = TraceOpKind::kCompute;
                op.opClass = g.cat == "kernel" ? ClassifyKernel(g.name) : OpClass::kMemory;
                m_rank.ops.push_back(std::move(op));
                continue;
            }
            m_out.Count("nccl_kernels");
            SizeCollective(g, kernelColl, op);
            op.opClass = OpClass::kComm;
            const std::string groupKey = op.group.empty() ? "world" : op.group;
            op.seq = seq[groupKey]++;
            m_rank.ops.push_back(std::move(op));
        }
        m_rank.recordedSpanPs = end;
    }

    void SizeCollective(const Event& g, const std::string& kernelColl, TraceOp& op)
    {
        op.kind = TraceOpKind::kCollective;
        CommMeta m;
        bool have = false;
        if (g.args && ReadCommArgs(*g.args, m))
        {
            m.source = "kernel metadata";
            have = true;
        }
        const std::vector<const Event*> cpu = LaunchingOps(g);
        CommMeta annotated;
        bool haveAnnotation = false;
        for (auto it = cpu.rbegin(); it != cpu.rend(); ++it)
        {
            const Event& c = **it;
            CommMeta cm;
            if (!have && c.name == "record_param_comms" && c.args && ReadCommArgs(*c.args, cm))
            {
                cm.source = "record_param_comms";
                m = cm;
                have = true;
            }
            else if (!haveAnnotation && StartsWith(c.name, "nccl:"))
            {
                haveAnnotation = ReadAnnotation(c, annotated);
                if (!haveAnnotation && annotated.collName.size() && m.collName.empty())
                {
                    m.collName = annotated.collName; // the type at least
                }
            }
        }
        if (!have && haveAnnotation)
        {
            m = annotated;
            m.source = "nccl:" + annotated.collName + " Input Dims";
            have = true;
        }
        // The type: metadata, then annotation, then the kernel name.
        std::string collName = m.collName.empty() ? annotated.collName : m.collName;
        if (collName.empty())
        {
            collName = kernelColl;
        }
        op.collectiveName = collName;
        const std::string squashed = Lower(collName);
        std::optional<CollectiveKind> kind = CollectiveFromName(collName);
        if (!kind && (squashed == "send" || squashed == "recv"))
        {
            op.kind = squashed == "send" ? TraceOpKind::kSend : TraceOpKind::kRecv;
            op.missing = "point-to-point without a peer in the trace: replayed as recorded";
            m_out.Count("unsized");
            return;
        }
        if (!kind)
        {
            op.collective = CollectiveKind::kCustom;
            op.missing = "collective '" + collName + "' is not one fabricsim re-simulates";
            m_out.Count("unsized");
            return;
        }
        op.collective = *kind;
        ResolveGroup(m, op);
        if (!have)
        {
            op.missing = "no collective metadata on the kernel and no record_param_comms or "
                         "nccl:* CPU op with sizes around its launch";
            m_out.Count("unsized");
            return;
        }
        const std::optional<uint32_t> elem = DtypeBytes(m.dtype);
        if (!elem)
        {
            op.missing = "unknown dtype '" + m.dtype + "'";
            m_out.Count("unsized");
            return;
        }
        op.dtype = m.dtype;
        const uint64_t groupSize = op.groupRanks.empty() ? m_worldSize : op.groupRanks.size();
        uint64_t nelems = m.haveIn ? m.inNelems : m.outNelems;
        if (op.collective == CollectiveKind::kAllGather)
        {
            // nccl-tests size: the gathered output.
            nelems = m.haveOut && m.source != "nccl:" + annotated.collName + " Input Dims"
                         ? m.outNelems
                         : nelems * groupSize;
        }
        else if (m.haveOut && !m.haveIn)
        {
            nelems = m.outNelems;
        }
        if (nelems > (uint64_t(1) << 50) / *elem)
        {
            op.missing = "size of " + std::to_string(nelems) + " elements is implausible";
            m_out.Count("unsized");
            return;
        }
        op.bytes = nelems * *elem;
        op.sized = true;
        op.sizeSource = m.source;
        m_out.Count(m.source == "kernel metadata"      ? "sized_from_kernel_metadata"
                    : m.source == "record_param_comms" ? "sized_from_record_param_comms"
                                                       : "sized_from_nccl_annotation");
    }

    void ResolveGroup(const CommMeta& m, TraceOp& op)
    {
        op.group = m.pgName;
        if (m.havePgRanks)
        {
            op.groupRanks = m.pgRanks;
        }
        else if (!m.pgName.empty() && m_pgRanks.count(m.pgName))
        {
            op.groupRanks = m_pgRanks.at(m.pgName);
        }
        else
        {
            op.groupAssumed = true;
            if (m.groupSize > 0 && uint64_t(m.groupSize) != m_worldSize)
            {
                op.missing
                    = "group of " + std::to_string(m.groupSize) + " ranks without its members";
            }
            if (!m_groupNoted)
            {
                m_out.notes.push_back(
                    m_file + ": collectives without process-group ranks run over the whole world ("
                    + std::to_string(m_worldSize) + " ranks)");
                m_groupNoted = true;
            }
        }
        if (!op.groupRanks.empty())
        {
            std::set<uint32_t> seen(op.groupRanks.begin(), op.groupRanks.end());
            if (seen.size() != op.groupRanks.size() || !seen.count(m_rank.rank))
            {
                Bad(op.name + " Process Group Ranks",
                    "distinct ranks including this trace's rank " + std::to_string(m_rank.rank),
                    DescribeJson(nlohmann::json(op.groupRanks)));
            }
            for (uint32_t r : op.groupRanks)
            {
                m_out.worldSize = std::max(m_out.worldSize, r + 1);
            }
        }
    }

    void InferDependencies()
    {
        std::vector<TraceOp>& ops = m_rank.ops;
        std::map<uint32_t, std::vector<uint32_t>> lanes;
        std::set<uint32_t> computeLanes;
        for (uint32_t i = 0; i < ops.size(); ++i)
        {
            lanes[ops[i].lane].push_back(i);
            if (ops[i].kind == TraceOpKind::kCompute)
            {
                computeLanes.insert(ops[i].lane);
            }
        }
        std::map<uint32_t, size_t> position; // next index in each lane
        auto endOf = [&](uint32_t i)
        {
            return ops[i].startPs + ops[i].durationPs;
        };
        for (uint32_t j = 0; j < ops.size(); ++j)
        {
            TraceOp& op = ops[j];
            const std::vector<uint32_t>& own = lanes[op.lane];
            size_t& pos = position[op.lane];
            const int64_t prevEnd = pos > 0 ? endOf(own[pos - 1]) : INT64_MIN;
            if (pos > 0)
            {
                op.deps.push_back({own[pos - 1], std::max<int64_t>(0, op.startPs - prevEnd)});
            }
            ++pos;
            bool binding = false;
            for (const auto& [lane, list] : lanes)
            {
                if (lane == op.lane)
                {
                    continue;
                }
                // The op of that lane that ended last at or before op j started.
                auto it
                    = std::upper_bound(list.begin(),
                                       list.end(),
                                       op.startPs,
                                       [&](int64_t t, uint32_t i) { return t < ops[i].startPs; });
                int64_t k = -1;
                for (int back = 0; back < 8 && it != list.begin(); ++back)
                {
                    --it;
                    if (*it != j && endOf(*it) <= op.startPs)
                    {
                        k = *it;
                        break;
                    }
                }
                if (k < 0)
                {
                    continue;
                }
                const int64_t kEnd = endOf(uint32_t(k));
                bool edge = false;
                if (op.IsComm())
                {
                    edge = computeLanes.count(lane) > 0;
                }
                else
                {
                    edge = op.startPs - kEnd <= m_opt.waitWindowPs
                           && (pos == 1 || kEnd - prevEnd >= m_opt.minIdlePs);
                }
                if (edge)
                {
                    op.deps.push_back({uint32_t(k), op.startPs - kEnd});
                    binding = binding || kEnd > prevEnd;
                    m_out.Count("inferred_cross_stream_deps");
                }
            }
            if (binding && pos > 1)
            {
                op.deps.front().lagPs = 0; // the wait, not host time, explains the gap
            }
            if (op.deps.empty())
            {
                op.releasePs = op.startPs;
            }
        }
    }

    const json& m_doc;
    std::string m_file;
    KinetoOptions m_opt;
    ImportedTrace& m_out;
    RankTrace m_rank;
    const json* m_events = nullptr;
    uint32_t m_worldSize = 1;
    bool m_groupNoted = false;
    std::map<std::string, std::vector<uint32_t>> m_pgRanks;
    std::vector<Event> m_gpu;
    std::vector<Event> m_steps;
    std::map<uint64_t, Event> m_launch;
    std::map<std::pair<int64_t, int64_t>, std::vector<Event>> m_commCpu;
};

} // namespace

bool
LooksLikeKineto(std::string_view head)
{
    const size_t first = head.find_first_not_of(" \t\r\n");
    return first != std::string_view::npos && (head[first] == '{' || head[first] == '[');
}

void
ImportKinetoText(std::string_view text,
                 const std::string& file,
                 uint32_t defaultRank,
                 const KinetoOptions& opt,
                 ImportedTrace& out)
{
    const json doc = ParseJson(text, file);
    out.format = "kineto";
    KinetoReader(doc, file, defaultRank, opt, out).Read();
}

ImportedTrace
ImportKineto(const std::vector<std::string>& files, const KinetoOptions& opt)
{
    ImportedTrace out;
    out.format = "kineto";
    for (size_t i = 0; i < files.size(); ++i)
    {
        const std::string text = ReadMaybeGzipFile(files[i]);
        ImportKinetoText(text, files[i], uint32_t(i), opt, out);
    }
    if (files.empty())
    {
        throw fabricsim::InputError("<command line>", "TRACE", "at least one trace file", "none");
    }
    out.worldSize = std::max(out.worldSize, opt.worldSize);
    CompleteRanks(out);
    return out;
}

} // namespace fabricsim
