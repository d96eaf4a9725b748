#include "fabric-scenario.h"

#include "input-error.h"
#include "json-describe.h"
#include "json-reader.h"
#include "unit-conversions.h"
#include "units.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

namespace fabricsim
{

using nlohmann::json;

namespace
{

std::string
Join(const std::string& a, const std::string& b)
{
    return a.empty() ? b : a + "." + b;
}

uint64_t
GetU64(const json& o,
       const std::string& file,
       const std::string& path,
       const std::string& key,
       uint64_t def,
       uint64_t min = 0,
       uint64_t max = UINT64_MAX)
{
    auto it = o.find(key);
    if (it == o.end())
    {
        return def;
    }
    if (!it->is_number_integer()
        && !(it->is_number_float() && std::floor(it->get<double>()) == it->get<double>()))
    {
        throw InputError(file, Join(path, key), "a non-negative integer", DescribeJson(*it));
    }
    const std::string expected = max == UINT64_MAX ? "an integer >= " + std::to_string(min)
                                                   : "an integer from " + std::to_string(min)
                                                         + " to " + std::to_string(max);
    // Integers compare exactly (a double cannot tell 2^64 - 1 from 2^64); a whole float must be
    // below 2^64 to be cast.
    uint64_t v = 0;
    if (it->is_number_unsigned())
    {
        v = it->get<uint64_t>();
    }
    else if (it->is_number_integer())
    {
        if (it->get<int64_t>() < 0)
        {
            throw InputError(file, Join(path, key), expected, DescribeJson(*it));
        }
        v = uint64_t(it->get<int64_t>());
    }
    else if (it->get<double>() >= 0 && it->get<double>() < 0x1p64)
    {
        v = uint64_t(it->get<double>());
    }
    else
    {
        throw InputError(file, Join(path, key), expected, DescribeJson(*it));
    }
    if (v < min || v > max)
    {
        throw InputError(file, Join(path, key), expected, DescribeJson(*it));
    }
    return v;
}

/// A time in ns that ns-3 can hold as picoseconds (at most units::kMaxNs, about 106 days).
uint64_t
GetNs(const json& o,
      const std::string& file,
      const std::string& path,
      const std::string& key,
      uint64_t def,
      uint64_t min = 0)
{
    return GetU64(o, file, path, key, def, min, units::kMaxNs);
}

double
GetNum(const json& o,
       const std::string& file,
       const std::string& path,
       const std::string& key,
       double def,
       double lo,
       double hi)
{
    auto it = o.find(key);
    if (it == o.end())
    {
        return def;
    }
    if (!it->is_number())
    {
        throw InputError(file, Join(path, key), "a number", DescribeJson(*it));
    }
    double v = it->get<double>();
    if (!(v >= lo && v <= hi))
    {
        std::ostringstream e;
        e << "a number in [" << lo << ", " << hi << "]";
        throw InputError(file, Join(path, key), e.str(), DescribeJson(*it));
    }
    return v;
}

bool
GetBool(const json& o,
        const std::string& file,
        const std::string& path,
        const std::string& key,
        bool def)
{
    auto it = o.find(key);
    if (it == o.end())
    {
        return def;
    }
    if (!it->is_boolean())
    {
        throw InputError(file, Join(path, key), "true or false", DescribeJson(*it));
    }
    return it->get<bool>();
}

std::string
GetStr(const json& o,
       const std::string& file,
       const std::string& path,
       const std::string& key,
       const std::string& def)
{
    auto it = o.find(key);
    if (it == o.end())
    {
        return def;
    }
    if (!it->is_string())
    {
        throw InputError(file, Join(path, key), "a string", DescribeJson(*it));
    }
    return it->get<std::string>();
}

/// Byte sizes: integers, or strings like "100KB", "1MiB".
uint64_t
GetBytes(const json& o,
         const std::string& file,
         const std::string& path,
         const std::string& key,
         uint64_t def)
{
    auto it = o.find(key);
    if (it == o.end())
    {
        return def;
    }
    if (it->is_string())
    {
        std::string s = it->get<std::string>();
        size_t pos = 0;
        double v = 0;
        try
        {
            v = std::stod(s, &pos);
        }
        catch (...)
        {
            throw InputError(
                file, Join(path, key), "a byte count like 4096 or \"100KB\"", DescribeJson(*it));
        }
        std::string u = s.substr(pos);
        u.erase(0, u.find_first_not_of(' '));
        double m = 0;
        if (u == "" || u == "B")
            m = 1;
        else if (u == "KB")
            m = 1e3;
        else if (u == "MB")
            m = 1e6;
        else if (u == "GB")
            m = 1e9;
        else if (u == "KiB")
            m = 1024;
        else if (u == "MiB")
            m = 1048576;
        else if (u == "GiB")
            m = 1073741824;
        if (m == 0 || !(v >= 0) || !(v * m < 0x1p64))
        {
            throw InputError(
                file, Join(path, key), "a byte count like 4096 or \"100KB\"", DescribeJson(*it));
        }
        return uint64_t(v * m + 0.5);
    }
    return GetU64(o, file, path, key, def);
}

/// Arrivals of a window fall before start + duration, which must still be a time ns-3 holds.
void
CheckWindowEnd(uint64_t startNs,
               uint64_t durationNs,
               const std::string& file,
               const std::string& path)
{
    if (durationNs > units::kMaxNs - startNs)
    {
        throw InputError(file,
                         Join(path, "duration_ns"),
                         "start_ns + duration_ns at most " + std::to_string(units::kMaxNs)
                             + " (106 days)",
                         std::to_string(startNs) + " + " + std::to_string(durationNs));
    }
}

uint32_t
GetHost(const json& v, const Topology& topo, const std::string& file, const std::string& field)
{
    if (!v.is_number_integer() || v.get<int64_t>() < 0
        || v.get<int64_t>() >= int64_t(topo.NumHosts()))
    {
        throw InputError(file,
                         field,
                         "a host index in [0, " + std::to_string(topo.NumHosts() - 1) + "]",
                         DescribeJson(v));
    }
    return uint32_t(v.get<int64_t>());
}

std::vector<uint32_t>
GetHostList(const json& o,
            const Topology& topo,
            const std::string& file,
            const std::string& path,
            const std::string& key)
{
    std::vector<uint32_t> v;
    auto it = o.find(key);
    if (it == o.end())
    {
        return v;
    }
    if (!it->is_array())
    {
        throw InputError(file, Join(path, key), "an array of host indexes", DescribeJson(*it));
    }
    for (size_t i = 0; i < it->size(); ++i)
    {
        v.push_back(GetHost((*it)[i], topo, file, Join(path, key) + "[" + std::to_string(i) + "]"));
    }
    return v;
}

void
RequireObj(const json& o, const std::string& file, const std::string& field)
{
    if (!o.is_object())
    {
        throw InputError(file, field, "a JSON object", DescribeJson(o));
    }
}

std::string
Resolve(const std::string& dir, const std::string& p)
{
    if (p.empty() || p[0] == '/' || dir.empty())
    {
        return p;
    }
    return dir + "/" + p;
}

void
ParseHpccFlowFile(const std::string& path, FabricScenario& sc, const std::string& field)
{
    std::ifstream in(path);
    if (!in)
    {
        throw InputError(path, field, "a readable HPCC flow file", "cannot open file");
    }
    std::string line;
    size_t lineNo = 0;
    uint64_t count = 0;
    bool haveCount = false;
    uint64_t seen = 0;
    while (std::getline(in, line))
    {
        ++lineNo;
        auto hash = line.find('#');
        if (hash != std::string::npos)
        {
            line = line.substr(0, hash);
        }
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
        f.startNs = uint64_t(std::llround(start * 1e9));
        f.tag = "file";
        sc.flows.push_back(f);
        ++seen;
    }
    if (!haveCount || seen != count)
    {
        throw InputError(path,
                         field,
                         std::to_string(count) + " flows as the first line says",
                         std::to_string(seen) + " flows");
    }
}

void
ParseWatchdog(const json& w, const std::string& file, PfcWatchdogSpec& spec)
{
    const std::string path = "switch.pfc_watchdog";
    RequireObj(w, file, path);
    JsonObject(w, file, path)
        .CheckKeys({"enabled", "poll_interval_ns", "detection_ns", "restoration_ns", "action"});
    spec.enabled = GetBool(w, file, path, "enabled", true);
    spec.pollNs = GetNs(w, file, path, "poll_interval_ns", spec.pollNs, 1);
    spec.detectionNs = GetNs(w, file, path, "detection_ns", spec.detectionNs);
    spec.restorationNs = GetNs(w, file, path, "restoration_ns", spec.restorationNs);
    spec.action = GetStr(w, file, path, "action", spec.action);
    if (spec.action != "report" && spec.action != "ignore-pause" && spec.action != "drop")
    {
        throw InputError(file,
                         path + ".action",
                         "\"report\", \"ignore-pause\" or \"drop\"",
                         "\"" + spec.action + "\"");
    }
}

/// Switch name of a route entry.
uint32_t
RouteSwitch(const json& r, const Topology& topo, const std::string& file, const std::string& p)
{
    std::string example;
    for (const auto& n : topo.nodes)
    {
        if (n.kind == NodeKind::Switch)
        {
            example = n.name;
            break;
        }
    }
    uint32_t id = r.contains("switch") && r["switch"].is_string()
                      ? topo.FindNode(r["switch"].get<std::string>())
                      : UINT32_MAX;
    if (id == UINT32_MAX || topo.nodes[id].kind != NodeKind::Switch)
    {
        throw InputError(file,
                         p + ".switch",
                         "the name of a switch (e.g. \"" + example + "\")",
                         r.contains("switch") ? DescribeJson(r["switch"]) : "nothing");
    }
    return id;
}

std::vector<RouteOverride>
ParseRoutes(const json& routes, const Topology& topo, const std::string& file)
{
    if (!routes.is_array())
    {
        throw InputError(
            file, "routes", "an array of {switch, dst, next | port}", DescribeJson(routes));
    }
    // Port k of a node is the k-th link touching it (the installer's numbering).
    std::vector<std::vector<uint32_t>> peers(topo.nodes.size());
    for (const auto& l : topo.links)
    {
        peers[l.a].push_back(l.b);
        peers[l.b].push_back(l.a);
    }
    std::vector<RouteOverride> out;
    for (size_t i = 0; i < routes.size(); ++i)
    {
        std::string p = "routes[" + std::to_string(i) + "]";
        const json& r = routes[i];
        RequireObj(r, file, p);
        JsonObject(r, file, p).CheckKeys({"switch", "dst", "next", "port"});
        RouteOverride ro;
        ro.node = RouteSwitch(r, topo, file, p);
        const auto& nb = peers[ro.node];
        if (!r.contains("dst"))
        {
            throw InputError(file, p + ".dst", "a host index or an array of them", "nothing");
        }
        if (r["dst"].is_array())
        {
            ro.dstHosts = GetHostList(r, topo, file, p, "dst");
        }
        else
        {
            ro.dstHosts.push_back(GetHost(r["dst"], topo, file, p + ".dst"));
        }
        if (r.contains("next") == r.contains("port"))
        {
            throw InputError(file,
                             p,
                             "exactly one of \"next\" (a neighbour's name) and \"port\"",
                             r.contains("next") ? "both" : "neither");
        }
        if (r.contains("port"))
        {
            uint64_t port = GetU64(r, file, p, "port", 0);
            if (port >= nb.size())
            {
                throw InputError(file,
                                 p + ".port",
                                 "a port of " + topo.nodes[ro.node].name + " in [0, "
                                     + std::to_string(nb.size() - 1) + "]",
                                 DescribeJson(r["port"]));
            }
            ro.ports.push_back(uint16_t(port));
        }
        else
        {
            uint32_t next
                = r["next"].is_string() ? topo.FindNode(r["next"].get<std::string>()) : UINT32_MAX;
            for (uint16_t k = 0; k < nb.size(); ++k)
            {
                if (nb[k] == next)
                {
                    ro.ports.push_back(k); // every parallel link to it
                }
            }
            if (ro.ports.empty())
            {
                throw InputError(file,
                                 p + ".next",
                                 "the name of a neighbour of " + topo.nodes[ro.node].name,
                                 DescribeJson(r["next"]));
            }
        }
        out.push_back(ro);
    }
    return out;
}

} // namespace

void
ApplySet(json& doc, const std::string& assignment, const std::string& file)
{
    auto eq = assignment.find('=');
    if (eq == std::string::npos || eq == 0)
    {
        throw InputError(file, "--set", "key.path=value", "\"" + assignment + "\"");
    }
    std::string path = assignment.substr(0, eq);
    std::string text = assignment.substr(eq + 1);
    json value;
    try
    {
        value = ParseJson(text, file, "--set " + path);
    }
    catch (const InputError& e)
    {
        if (e.Expected() != "valid JSON")
        {
            throw; // JSON, but with a key twice or nested too deep
        }
        value = text; // bare words are strings: --set transport.cc=hpcc
    }
    json* cur = &doc;
    std::stringstream ss(path);
    std::string part;
    std::vector<std::string> parts;
    while (std::getline(ss, part, '.'))
    {
        parts.push_back(part);
    }
    for (size_t i = 0; i < parts.size(); ++i)
    {
        const std::string& k = parts[i];
        if (k.empty())
        {
            throw InputError(file, "--set " + path, "a dotted key path", "an empty component");
        }
        bool last = i + 1 == parts.size();
        if (cur->is_array())
        {
            size_t idx = 0;
            try
            {
                idx = std::stoul(k);
            }
            catch (...)
            {
                throw InputError(
                    file, "--set " + path, "an array index at '" + k + "'", "\"" + k + "\"");
            }
            if (idx >= cur->size())
            {
                throw InputError(
                    file, "--set " + path, "an index < " + std::to_string(cur->size()), k);
            }
            cur = &(*cur)[idx];
        }
        else
        {
            if (!cur->is_object() && !cur->is_null())
            {
                throw InputError(
                    file, "--set " + path, "an object at '" + k + "'", DescribeJson(*cur));
            }
            cur = &(*cur)[k];
        }
        if (last)
        {
            *cur = value;
        }
    }
}

json
LoadScenarioJson(const std::string& path, const std::vector<std::string>& sets)
{
    std::ifstream in(path);
    if (!in)
    {
        throw InputError(path, "", "a readable scenario file", "cannot open file");
    }
    std::stringstream text;
    text << in.rdbuf();
    json doc = ParseJson(text.str(), path);
    if (!doc.is_object())
    {
        throw InputError(path, "", "a JSON object at the top level", DescribeJson(doc));
    }
    for (auto& s : sets)
    {
        ApplySet(doc, s, path);
    }
    return doc;
}

std::vector<std::pair<double, double>>
LoadFlowCdf(const std::string& path, const std::string& field)
{
    std::ifstream in(path);
    if (!in)
    {
        throw InputError(path, field, "a readable flow-size CDF file", "cannot open file");
    }
    std::vector<std::pair<double, double>> cdf;
    std::string line;
    size_t lineNo = 0;
    while (std::getline(in, line))
    {
        ++lineNo;
        auto hash = line.find('#');
        if (hash != std::string::npos)
        {
            line = line.substr(0, hash);
        }
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
                         field,
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

FabricScenario
ParseFabricScenario(const json& doc, const std::string& file)
{
    FabricScenario sc;
    sc.file = file;
    auto slash = file.find_last_of('/');
    sc.dir = slash == std::string::npos ? "." : file.substr(0, slash);
    sc.raw = doc;
    RequireObj(doc, file, "");
    JsonObject(doc, file, "")
        .CheckKeys({"name",
                    "description",
                    "seed",
                    "stop_ns",
                    "topology",
                    "transport",
                    "switch",
                    "traffic",
                    "link_events",
                    "pcap",
                    "monitor",
                    "deadlock",
                    "routes",
                    "attributes"});
    sc.seed = GetU64(doc, file, "", "seed", 1, 1);
    sc.stopNs = GetNs(doc, file, "", "stop_ns", 1000000000ULL, 1);
    if (!doc.contains("topology"))
    {
        throw InputError(file, "topology", "a topology object", "nothing");
    }
    json topo = doc["topology"];
    if (topo.is_object() && topo.contains("type") && topo["type"].is_string()
        && topo["type"].get<std::string>() == "hpcc-file" && topo.contains("path")
        && topo["path"].is_string())
    {
        topo["path"] = Resolve(sc.dir, topo["path"].get<std::string>());
    }
    sc.topology = BuildTopology(topo, file);

    if (doc.contains("transport"))
    {
        const json& t = doc["transport"];
        RequireObj(t, file, "transport");
        JsonObject(t, file, "transport")
            .CheckKeys({"cc",
                        "cc_per_priority",
                        "mtu_bytes",
                        "pfc",
                        "priority",
                        "ack_interval",
                        "rto_ns",
                        "cnp_interval_ns",
                        "window"});
        sc.transport.cc = GetStr(t, file, "transport", "cc", sc.transport.cc);
        if (t.contains("cc_per_priority"))
        {
            const json& m = t["cc_per_priority"];
            RequireObj(m, file, "transport.cc_per_priority");
            for (auto it = m.begin(); it != m.end(); ++it)
            {
                std::string field = "transport.cc_per_priority." + it.key();
                if (it.key().size() != 1 || it.key()[0] < '0' || it.key()[0] > '6')
                {
                    throw InputError(file,
                                     field,
                                     "a data class \"0\" to \"6\" as the key",
                                     "\"" + it.key() + "\"");
                }
                if (!it.value().is_string())
                {
                    throw InputError(
                        file, field, "a congestion-control name", DescribeJson(it.value()));
                }
                sc.transport.ccPerPriority[uint8_t(it.key()[0] - '0')]
                    = it.value().get<std::string>();
            }
        }
        sc.transport.mtuBytes = uint32_t(GetU64(t, file, "transport", "mtu_bytes", 1000, 64));
        if (sc.transport.mtuBytes > 9000)
        {
            throw InputError(file,
                             "transport.mtu_bytes",
                             "an MTU in [64, 9000]",
                             std::to_string(sc.transport.mtuBytes));
        }
        sc.transport.pfc = GetBool(t, file, "transport", "pfc", true);
        uint64_t prio = GetU64(t, file, "transport", "priority", 3);
        if (prio > 6)
        {
            throw InputError(file,
                             "transport.priority",
                             "a data class in [0, 6] (7 carries control frames)",
                             std::to_string(prio));
        }
        sc.transport.priority = uint8_t(prio);
        sc.transport.ackInterval = uint32_t(GetU64(t, file, "transport", "ack_interval", 1, 1));
        sc.transport.rtoNs = GetNs(t, file, "transport", "rto_ns", sc.transport.rtoNs, 1);
        sc.transport.cnpIntervalNs
            = GetNs(t, file, "transport", "cnp_interval_ns", sc.transport.cnpIntervalNs);
        sc.transport.window = GetBool(t, file, "transport", "window", false);
    }

    if (doc.contains("switch"))
    {
        const json& s = doc["switch"];
        RequireObj(s, file, "switch");
        JsonObject(s, file, "switch")
            .CheckKeys({"buffer_bytes",
                        "alpha",
                        "reserve_bytes",
                        "resume_offset_bytes",
                        "headroom_bytes",
                        "pause_quanta",
                        "ecmp_seed",
                        "ecn",
                        "pfc_watchdog"});
        sc.sw.bufferBytes = GetBytes(s, file, "switch", "buffer_bytes", sc.sw.bufferBytes);
        if (sc.sw.bufferBytes == 0)
        {
            throw InputError(file, "switch.buffer_bytes", "a positive byte count", "0");
        }
        sc.sw.alpha = GetNum(s, file, "switch", "alpha", sc.sw.alpha, 1e-6, 1e6);
        sc.sw.reserveBytes = GetBytes(s, file, "switch", "reserve_bytes", sc.sw.reserveBytes);
        sc.sw.resumeOffsetBytes
            = GetBytes(s, file, "switch", "resume_offset_bytes", sc.sw.resumeOffsetBytes);
        sc.sw.headroomBytes = GetBytes(s, file, "switch", "headroom_bytes", 0);
        sc.sw.pauseQuanta = uint32_t(GetU64(s, file, "switch", "pause_quanta", 0xffff, 1));
        if (sc.sw.pauseQuanta > 0xffff)
        {
            throw InputError(
                file, "switch.pause_quanta", "1..65535", std::to_string(sc.sw.pauseQuanta));
        }
        sc.sw.ecmpSeed = uint32_t(GetU64(s, file, "switch", "ecmp_seed", 0, 0, UINT32_MAX));
        if (s.contains("ecn"))
        {
            const json& e = s["ecn"];
            RequireObj(e, file, "switch.ecn");
            JsonObject(e, file, "switch.ecn")
                .CheckKeys({"enabled", "kmin_bytes", "kmax_bytes", "pmax", "per_rate"});
            sc.sw.ecn.enabled = GetBool(e, file, "switch.ecn", "enabled", true);
            sc.sw.ecn.kminBytes
                = GetBytes(e, file, "switch.ecn", "kmin_bytes", sc.sw.ecn.kminBytes);
            sc.sw.ecn.kmaxBytes
                = GetBytes(e, file, "switch.ecn", "kmax_bytes", sc.sw.ecn.kmaxBytes);
            sc.sw.ecn.pmax = GetNum(e, file, "switch.ecn", "pmax", sc.sw.ecn.pmax, 0, 1);
            if (e.contains("per_rate"))
            {
                sc.sw.ecn.perRateBps
                    = (e["per_rate"].is_number() && e["per_rate"].get<double>() == 0)
                          ? 0
                          : ParseRate(e["per_rate"], file, "switch.ecn.per_rate");
            }
            if (sc.sw.ecn.kmaxBytes <= sc.sw.ecn.kminBytes)
            {
                throw InputError(file,
                                 "switch.ecn.kmax_bytes",
                                 "greater than kmin_bytes (" + std::to_string(sc.sw.ecn.kminBytes)
                                     + ")",
                                 std::to_string(sc.sw.ecn.kmaxBytes));
            }
        }
        if (s.contains("pfc_watchdog"))
        {
            ParseWatchdog(s["pfc_watchdog"], file, sc.sw.watchdog);
        }
    }

    if (doc.contains("traffic"))
    {
        const json& t = doc["traffic"];
        RequireObj(t, file, "traffic");
        JsonObject(t, file, "traffic").CheckKeys({"flows", "flow_file", "poisson", "incast"});
        if (t.contains("flows"))
        {
            const json& fl = t["flows"];
            if (!fl.is_array())
            {
                throw InputError(file, "traffic.flows", "an array of flows", DescribeJson(fl));
            }
            for (size_t i = 0; i < fl.size(); ++i)
            {
                std::string p = "traffic.flows[" + std::to_string(i) + "]";
                const json& f = fl[i];
                RequireObj(f, file, p);
                JsonObject(f, file, p)
                    .CheckKeys({"src", "dst", "size_bytes", "start_ns", "priority", "cc"});
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
                    throw InputError(
                        file, p + ".dst", "a host other than src", std::to_string(s.dst));
                }
                s.sizeBytes = GetBytes(f, file, p, "size_bytes", 0);
                if (s.sizeBytes == 0)
                {
                    throw InputError(file, p + ".size_bytes", "a positive byte count", "0");
                }
                s.startNs = GetNs(f, file, p, "start_ns", 0);
                s.priority = int(GetU64(f, file, p, "priority", sc.transport.priority));
                if (s.priority > 6)
                {
                    throw InputError(file,
                                     p + ".priority",
                                     "a data class in [0, 6]",
                                     std::to_string(s.priority));
                }
                s.cc = GetStr(f, file, p, "cc", "");
                s.tag = "explicit";
                sc.flows.push_back(s);
            }
        }
        if (t.contains("flow_file"))
        {
            if (!t["flow_file"].is_string())
            {
                throw InputError(
                    file, "traffic.flow_file", "a path string", DescribeJson(t["flow_file"]));
            }
            ParseHpccFlowFile(
                Resolve(sc.dir, t["flow_file"].get<std::string>()), sc, "traffic.flow_file");
        }
        auto asList = [&](const char* key)
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
        };
        auto pl = asList("poisson");
        for (size_t i = 0; i < pl.size(); ++i)
        {
            std::string p = "traffic.poisson"
                            + (pl.size() > 1 ? "[" + std::to_string(i) + "]" : std::string());
            const json& o = pl[i];
            RequireObj(o, file, p);
            JsonObject(o, file, p).CheckKeys({"cdf", "load", "start_ns", "duration_ns", "hosts"});
            PoissonSpec ps;
            if (!o.contains("cdf") || !o["cdf"].is_string())
            {
                throw InputError(file,
                                 p + ".cdf",
                                 "a path to a flow-size CDF file",
                                 o.contains("cdf") ? DescribeJson(o["cdf"]) : "nothing");
            }
            ps.cdfPath = Resolve(sc.dir, o["cdf"].get<std::string>());
            ps.load = GetNum(o, file, p, "load", 0.3, 1e-6, 1.0);
            ps.startNs = GetNs(o, file, p, "start_ns", 0);
            ps.durationNs = GetNs(o, file, p, "duration_ns", 0, 1);
            if (ps.durationNs == 0)
            {
                throw InputError(file, p + ".duration_ns", "a positive duration", "nothing");
            }
            CheckWindowEnd(ps.startNs, ps.durationNs, file, p);
            ps.hosts = GetHostList(o, sc.topology, file, p, "hosts");
            LoadFlowCdf(ps.cdfPath, p + ".cdf"); // validate now, before anything runs
            sc.poisson.push_back(ps);
        }
        auto il = asList("incast");
        for (size_t i = 0; i < il.size(); ++i)
        {
            std::string p = "traffic.incast"
                            + (il.size() > 1 ? "[" + std::to_string(i) + "]" : std::string());
            const json& o = il[i];
            RequireObj(o, file, p);
            JsonObject(o, file, p)
                .CheckKeys(
                    {"receiver", "senders", "size_bytes", "start_ns", "load", "duration_ns"});
            IncastSpec is;
            if (!o.contains("receiver"))
            {
                throw InputError(file, p + ".receiver", "a host index", "nothing");
            }
            is.receiver = GetHost(o["receiver"], sc.topology, file, p + ".receiver");
            if (o.contains("senders") && o["senders"].is_number_integer())
            {
                int64_t n = o["senders"].get<int64_t>();
                if (n < 1 || n >= int64_t(sc.topology.NumHosts()))
                {
                    throw InputError(file,
                                     p + ".senders",
                                     "a sender count in [1, "
                                         + std::to_string(sc.topology.NumHosts() - 1) + "]",
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
                is.senders = GetHostList(o, sc.topology, file, p, "senders");
                if (is.senders.empty())
                {
                    throw InputError(file,
                                     p + ".senders",
                                     "a sender count or a non-empty host list",
                                     o.contains("senders") ? DescribeJson(o["senders"])
                                                           : "nothing");
                }
                for (auto s : is.senders)
                {
                    if (s == is.receiver)
                    {
                        throw InputError(file,
                                         p + ".senders",
                                         "hosts other than the receiver",
                                         std::to_string(s));
                    }
                }
            }
            is.sizeBytes = GetBytes(o, file, p, "size_bytes", 0);
            if (is.sizeBytes == 0)
            {
                throw InputError(file, p + ".size_bytes", "a positive byte count", "nothing");
            }
            is.startNs = GetNs(o, file, p, "start_ns", 0);
            is.load = GetNum(o, file, p, "load", 0, 0, 1);
            is.durationNs = GetNs(o, file, p, "duration_ns", 0);
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
    }

    if (doc.contains("link_events"))
    {
        const json& le = doc["link_events"];
        if (!le.is_array())
        {
            throw InputError(file, "link_events", "an array", DescribeJson(le));
        }
        for (size_t i = 0; i < le.size(); ++i)
        {
            std::string p = "link_events[" + std::to_string(i) + "]";
            RequireObj(le[i], file, p);
            JsonObject(le[i], file, p).CheckKeys({"link", "at_ns", "state"});
            LinkEvent ev;
            ev.link = uint32_t(GetU64(le[i], file, p, "link", UINT64_MAX));
            if (ev.link >= sc.topology.links.size())
            {
                throw InputError(file,
                                 p + ".link",
                                 "a link id in [0, " + std::to_string(sc.topology.links.size() - 1)
                                     + "]",
                                 le[i].contains("link") ? DescribeJson(le[i]["link"]) : "nothing");
            }
            ev.atNs = GetNs(le[i], file, p, "at_ns", 0);
            std::string st = GetStr(le[i], file, p, "state", "down");
            if (st != "down" && st != "up")
            {
                throw InputError(file, p + ".state", "\"down\" or \"up\"", "\"" + st + "\"");
            }
            ev.up = st == "up";
            sc.linkEvents.push_back(ev);
        }
    }

    if (doc.contains("pcap"))
    {
        const json& pc = doc["pcap"];
        RequireObj(pc, file, "pcap");
        JsonObject(pc, file, "pcap").CheckKeys({"hosts", "switches"});
        sc.pcapHosts = GetHostList(pc, sc.topology, file, "pcap", "hosts");
        if (pc.contains("switches"))
        {
            const json& sw = pc["switches"];
            if (!sw.is_array())
            {
                throw InputError(
                    file, "pcap.switches", "an array of switch names", DescribeJson(sw));
            }
            for (size_t i = 0; i < sw.size(); ++i)
            {
                std::string f = "pcap.switches[" + std::to_string(i) + "]";
                uint32_t id = sw[i].is_string() ? sc.topology.FindNode(sw[i].get<std::string>())
                                                : UINT32_MAX;
                if (id == UINT32_MAX || sc.topology.nodes[id].kind != NodeKind::Switch)
                {
                    throw InputError(file,
                                     f,
                                     "the name of a switch (e.g. \""
                                         + std::find_if(sc.topology.nodes.begin(),
                                                        sc.topology.nodes.end(),
                                                        [](const TopoNode& n)
                                                        { return n.kind == NodeKind::Switch; })
                                               ->name
                                         + "\")",
                                     DescribeJson(sw[i]));
                }
                sc.pcapSwitches.push_back(sw[i].get<std::string>());
            }
        }
    }

    if (doc.contains("monitor"))
    {
        const json& m = doc["monitor"];
        RequireObj(m, file, "monitor");
        JsonObject(m, file, "monitor")
            .CheckKeys({"interval_ns",
                        "start_ns",
                        "end_ns",
                        "queues",
                        "links",
                        "qp_rates",
                        "cnps",
                        "pause_state"});
        sc.monitor.intervalNs = GetNs(m, file, "monitor", "interval_ns", sc.monitor.intervalNs);
        sc.monitor.startNs = GetNs(m, file, "monitor", "start_ns", 0);
        sc.monitor.endNs = GetNs(m, file, "monitor", "end_ns", UINT64_MAX);
        if (sc.monitor.endNs < sc.monitor.startNs)
        {
            throw InputError(file,
                             "monitor.end_ns",
                             "a time >= monitor.start_ns (" + std::to_string(sc.monitor.startNs)
                                 + ")",
                             std::to_string(sc.monitor.endNs));
        }
        sc.monitor.queues = GetBool(m, file, "monitor", "queues", true);
        sc.monitor.links = GetBool(m, file, "monitor", "links", true);
        sc.monitor.qpRates = GetBool(m, file, "monitor", "qp_rates", true);
        sc.monitor.cnps = GetBool(m, file, "monitor", "cnps", true);
        sc.monitor.pauseState = GetBool(m, file, "monitor", "pause_state", true);
    }

    // A watchdog that resolves deadlocks gets the chance to: detection then only reports.
    sc.deadlock.stop = !(sc.sw.watchdog.enabled && sc.sw.watchdog.action != "report");
    if (doc.contains("deadlock"))
    {
        const json& d = doc["deadlock"];
        RequireObj(d, file, "deadlock");
        JsonObject(d, file, "deadlock").CheckKeys({"check_interval_ns", "stall_ns", "on_detect"});
        sc.deadlock.checkIntervalNs
            = GetNs(d, file, "deadlock", "check_interval_ns", sc.deadlock.checkIntervalNs);
        sc.deadlock.stallNs = GetNs(d, file, "deadlock", "stall_ns", sc.deadlock.stallNs);
        std::string on
            = GetStr(d, file, "deadlock", "on_detect", sc.deadlock.stop ? "stop" : "report");
        if (on != "stop" && on != "report")
        {
            throw InputError(
                file, "deadlock.on_detect", "\"stop\" or \"report\"", "\"" + on + "\"");
        }
        sc.deadlock.stop = on == "stop";
    }

    if (doc.contains("routes"))
    {
        sc.routes = ParseRoutes(doc["routes"], sc.topology, file);
    }

    if (doc.contains("attributes"))
    {
        const json& a = doc["attributes"];
        RequireObj(a, file, "attributes");
        for (auto it = a.begin(); it != a.end(); ++it)
        {
            std::string v = it->is_string() ? it->get<std::string>() : it->dump();
            sc.attributes.emplace_back(it.key(), v);
        }
    }
    return sc;
}

} // namespace fabricsim
