// The "traffic" block: docs/scenario.md's rows traffic.flows[], traffic.flow_file,
// traffic.poisson and traffic.incast, and the two file formats they name (HPCC flow files,
// flow-size CDFs).
#include "input-error.h"
#include "json-describe.h"
#include "json-reader.h"
#include "scenario-fields.h"
#include "scenario-readers.h"
#include "unit-conversions.h"

#include <cmath>
#include <sstream>

namespace fabricsim
{

using nlohmann::json;

namespace
{

/// \p line up to its '#' comment (both file formats take them).
std::string
WithoutComment(const std::string& line)
{
    return line.substr(0, line.find('#'));
}

void
ParseHpccFlowFile(const std::string& path, FabricScenario& sc, const FileReferrer& ref)
{
    LineReader in(path, "HPCC flow file", kDataFileLimits, ref);
    std::string line;
    uint64_t count = 0;
    bool haveCount = false;
    uint64_t seen = 0;
    while (in.Next(line))
    {
        const uint64_t lineNo = in.LineNumber();
        line = WithoutComment(line);
        std::istringstream ls(line);
        std::string first;
        if (!(ls >> first))
        {
            continue;
        }
        std::string where = "line " + std::to_string(lineNo);
        if (!haveCount)
        {
            try
            {
                count = std::stoull(first);
            }
            catch (...)
            {
                throw InputError(path, where, "the flow count", "\"" + first + "\"");
            }
            haveCount = true;
            continue;
        }
        // src dst priority dport size start_s
        std::istringstream full(line);
        int64_t src, dst, prio, dport;
        double size, start;
        if (!(full >> src >> dst >> prio >> dport >> size >> start))
        {
            throw InputError(
                path, where, "\"src dst priority dport size_bytes start_s\"", "\"" + line + "\"");
        }
        FlowSpec f;
        f.src = GetHost(json(src), sc.topology, path, where + " src");
        f.dst = GetHost(json(dst), sc.topology, path, where + " dst");
        if (f.src == f.dst)
        {
            throw InputError(path, where + " dst", "a host other than src", std::to_string(dst));
        }
        if (prio < 0 || prio > 7)
        {
            throw InputError(path, where + " priority", "0..7", std::to_string(prio));
        }
        if (size <= 0 || start < 0)
        {
            throw InputError(
                path, where, "positive size and non-negative start", "\"" + line + "\"");
        }
        // Past these a start time wraps in ns-3's int64 ps and a size in uint64 bytes.
        if (!(start <= double(units::kMaxNs) / 1e9))
        {
            throw InputError(path,
                             where + " start_s",
                             "a start time of at most " + std::to_string(units::kMaxNs / 1000000000)
                                 + " s (106 days)",
                             "\"" + line + "\"");
        }
        if (!(size < 0x1p64))
        {
            throw InputError(
                path, where + " size_bytes", "a size below 2^64 bytes", "\"" + line + "\"");
        }
        f.priority = int(prio);
        f.sizeBytes = uint64_t(size);
        CheckFlowSize(sc, f.sizeBytes, path, where + " size_bytes");
        f.startNs = uint64_t(std::llround(start * 1e9));
        f.tag = "file";
        sc.flows.push_back(f);
        ++seen;
    }
    if (!haveCount || seen != count)
    {
        throw InputError(path,
                         ref.field,
                         std::to_string(count) + " flows as the first line says",
                         std::to_string(seen) + " flows");
    }
}

void
ReadFlows(const json& fl, FabricScenario& sc)
{
    const std::string& file = sc.file;
    if (!fl.is_array())
    {
        throw InputError(file, "traffic.flows", "an array of flows", DescribeJson(fl));
    }
    for (size_t i = 0; i < fl.size(); ++i)
    {
        std::string p = "traffic.flows[" + std::to_string(i) + "]";
        const json& f = fl[i];
        const JsonObject fObj(f, file, p);
        fObj.CheckKeys({"src", "dst", "size_bytes", "start_ns", "priority", "cc"});
        for (auto* k : {"src", "dst", "size_bytes"})
        {
            if (!f.contains(k))
            {
                throw InputError(file, p + "." + k, "a value", "nothing");
            }
        }
        FlowSpec s;
        s.src = GetHost(f["src"], sc.topology, file, p + ".src");
        s.dst = GetHost(f["dst"], sc.topology, file, p + ".dst");
        if (s.src == s.dst)
        {
            throw InputError(file, p + ".dst", "a host other than src", std::to_string(s.dst));
        }
        s.sizeBytes = GetBytes(fObj, "size_bytes", 0);
        if (s.sizeBytes == 0)
        {
            throw InputError(file, p + ".size_bytes", "a positive byte count", "0");
        }
        CheckFlowSize(sc, s.sizeBytes, file, p + ".size_bytes");
        s.startNs = fObj.OptionalUint("start_ns", 0, 0, units::kMaxNs);
        s.priority = int(fObj.OptionalUint("priority", sc.transport.priority));
        if (s.priority > 6)
        {
            throw InputError(
                file, p + ".priority", "a data class in [0, 6]", std::to_string(s.priority));
        }
        s.cc = fObj.OptionalString("cc", "");
        s.tag = "explicit";
        sc.flows.push_back(s);
    }
}

/// "poisson" and "incast" take one object or an array of them.
std::vector<json>
AsList(const json& t, const char* key)
{
    std::vector<json> v;
    if (t.contains(key))
    {
        if (t[key].is_array())
        {
            for (auto& x : t[key])
            {
                v.push_back(x);
            }
        }
        else
        {
            v.push_back(t[key]);
        }
    }
    return v;
}

void
ReadPoisson(const json& o, const std::string& p, FabricScenario& sc)
{
    const std::string& file = sc.file;
    const JsonObject oObj(o, file, p);
    oObj.CheckKeys({"cdf", "load", "start_ns", "duration_ns", "hosts"});
    PoissonSpec ps;
    if (!o.contains("cdf") || !o["cdf"].is_string())
    {
        throw InputError(file,
                         p + ".cdf",
                         "a path to a flow-size CDF file",
                         o.contains("cdf") ? DescribeJson(o["cdf"]) : "nothing");
    }
    ps.cdfPath = Resolve(sc.dir, o["cdf"].get<std::string>());
    ps.load = oObj.OptionalNumber("load", 0.3, 1e-6, 1.0);
    ps.startNs = oObj.OptionalUint("start_ns", 0, 0, units::kMaxNs);
    ps.durationNs = oObj.OptionalUint("duration_ns", 0, 1, units::kMaxNs);
    if (ps.durationNs == 0)
    {
        throw InputError(file, p + ".duration_ns", "a positive duration", "nothing");
    }
    CheckWindowEnd(ps.startNs, ps.durationNs, file, p);
    ps.hosts = GetHostList(oObj, sc.topology, "hosts");
    // Validate now, before anything runs: the largest size must be a flow the model
    // carries.
    const double largest = LoadFlowCdf(ps.cdfPath, {file, p + ".cdf"}).back().first;
    CheckFlowSize(sc,
                  largest < 0x1p64 ? uint64_t(largest) : UINT64_MAX,
                  ps.cdfPath,
                  "largest size_bytes",
                  DescribeJson(json(largest)));
    sc.poisson.push_back(ps);
}

void
ReadIncast(const json& o, const std::string& p, FabricScenario& sc)
{
    const std::string& file = sc.file;
    const JsonObject oObj(o, file, p);
    oObj.CheckKeys({"receiver", "senders", "size_bytes", "start_ns", "load", "duration_ns"});
    IncastSpec is;
    if (!o.contains("receiver"))
    {
        throw InputError(file, p + ".receiver", "a host index", "nothing");
    }
    is.receiver = GetHost(o["receiver"], sc.topology, file, p + ".receiver");
    if (o.contains("senders") && o["senders"].is_number())
    {
        const uint64_t n = JsonObject::AsUint(o["senders"]).value_or(0);
        if (n < 1 || n >= sc.topology.NumHosts())
        {
            throw InputError(file,
                             p + ".senders",
                             "a sender count in [1, " + std::to_string(sc.topology.NumHosts() - 1)
                                 + "]",
                             DescribeJson(o["senders"]));
        }
        for (uint32_t h = 0; is.senders.size() < size_t(n); ++h)
        {
            if (h != is.receiver)
            {
                is.senders.push_back(h);
            }
        }
    }
    else
    {
        is.senders = GetHostList(oObj, sc.topology, "senders");
        if (is.senders.empty())
        {
            throw InputError(file,
                             p + ".senders",
                             "a sender count or a non-empty host list",
                             o.contains("senders") ? DescribeJson(o["senders"]) : "nothing");
        }
        for (auto s : is.senders)
        {
            if (s == is.receiver)
            {
                throw InputError(
                    file, p + ".senders", "hosts other than the receiver", std::to_string(s));
            }
        }
    }
    is.sizeBytes = GetBytes(oObj, "size_bytes", 0);
    if (is.sizeBytes == 0)
    {
        throw InputError(file, p + ".size_bytes", "a positive byte count", "nothing");
    }
    CheckFlowSize(sc, is.sizeBytes, file, p + ".size_bytes");
    is.startNs = oObj.OptionalUint("start_ns", 0, 0, units::kMaxNs);
    is.load = oObj.OptionalNumber("load", 0, 0, 1);
    is.durationNs = oObj.OptionalUint("duration_ns", 0, 0, units::kMaxNs);
    CheckWindowEnd(is.startNs, is.durationNs, file, p);
    if (is.load > 0 && is.durationNs == 0)
    {
        throw InputError(file,
                         p + ".duration_ns",
                         "a positive duration for a repeating incast (load > 0)",
                         "nothing");
    }
    sc.incasts.push_back(is);
}

/// The path of element \p i of a list read by AsList: no index when it was one object.
std::string
ListPath(const std::string& path, size_t i, size_t n)
{
    return path + (n > 1 ? "[" + std::to_string(i) + "]" : std::string());
}

} // namespace

void
ReadTraffic(const json& t, FabricScenario& sc)
{
    const std::string& file = sc.file;
    const JsonObject tObj(t, file, "traffic");
    tObj.CheckKeys({"flows", "flow_file", "poisson", "incast"});
    if (t.contains("flows"))
    {
        ReadFlows(t["flows"], sc);
    }
    if (t.contains("flow_file"))
    {
        if (!t["flow_file"].is_string())
        {
            throw InputError(
                file, "traffic.flow_file", "a path string", DescribeJson(t["flow_file"]));
        }
        ParseHpccFlowFile(
            Resolve(sc.dir, t["flow_file"].get<std::string>()), sc, {file, "traffic.flow_file"});
    }
    const std::vector<json> pl = AsList(t, "poisson");
    for (size_t i = 0; i < pl.size(); ++i)
    {
        ReadPoisson(pl[i], ListPath("traffic.poisson", i, pl.size()), sc);
    }
    const std::vector<json> il = AsList(t, "incast");
    for (size_t i = 0; i < il.size(); ++i)
    {
        ReadIncast(il[i], ListPath("traffic.incast", i, il.size()), sc);
    }
}

std::vector<std::pair<double, double>>
LoadFlowCdf(const std::string& path, const FileReferrer& ref)
{
    LineReader in(path, "flow-size CDF file", kDataFileLimits, ref);
    std::vector<std::pair<double, double>> cdf;
    std::string line;
    while (in.Next(line))
    {
        const uint64_t lineNo = in.LineNumber();
        line = WithoutComment(line);
        std::istringstream ls(line);
        double size, pct;
        if (!(ls >> size))
        {
            continue;
        }
        if (!(ls >> pct) || size < 0 || pct < 0 || pct > 100
            || (!cdf.empty() && (size < cdf.back().first || pct < cdf.back().second)))
        {
            throw InputError(
                path,
                "line " + std::to_string(lineNo),
                "\"size_bytes cumulative_percent\" non-decreasing, percent in [0, 100]",
                "\"" + line + "\"");
        }
        cdf.emplace_back(size, pct);
    }
    if (cdf.size() < 2 || cdf.back().second != 100)
    {
        throw InputError(path,
                         ref.field,
                         "a CDF of at least 2 points ending at 100%",
                         std::to_string(cdf.size()) + " points");
    }
    return cdf;
}

double
CdfMean(const std::vector<std::pair<double, double>>& cdf)
{
    double m = 0;
    for (size_t i = 1; i < cdf.size(); ++i)
    {
        double p = (cdf[i].second - cdf[i - 1].second) / 100.0;
        m += p * (cdf[i].first + cdf[i - 1].first) / 2.0;
    }
    return m;
}

} // namespace fabricsim
