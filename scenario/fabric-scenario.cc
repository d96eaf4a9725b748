#include "fabric-scenario.h"

#include "file-reader.h"
#include "forwarding-loops.h"
#include "input-error.h"
#include "json-describe.h"
#include "json-reader.h"
#include "loss-recovery-spec.h"
#include "unit-conversions.h"
#include "units.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

namespace fabricsim
{

using nlohmann::json;

namespace
{

/// Byte sizes: integers, or strings with units ("100KB", "1MiB": common/units).
uint64_t
GetBytes(const JsonObject& o, const std::string& key, uint64_t def)
{
    const json* v = o.Find(key);
    if (!v || !v->is_string())
    {
        return o.OptionalUint(key, def);
    }
    const std::optional<double> b = ParseQuantity(v->get<std::string>(), UnitKind::Bytes);
    if (!b || !(*b >= 0) || !(*b < 0x1p64))
    {
        o.Fail(key, "a byte count like 4096 or \"100KB\"", DescribeJson(*v));
    }
    return uint64_t(*b + 0.5);
}

/**
 * Flow sizes the model carries: its packets number within the NIC's 32-bit PSN space at the
 * scenario's MTU, and sending it over the slowest link takes at most half of ns-3's clock (106
 * days; the other half leaves room for headers, queueing and the start time). Topology and
 * transport are read before traffic, so both are known here.
 */
void
CheckFlowSize(const FabricScenario& sc,
              uint64_t bytes,
              const std::string& file,
              const std::string& field,
              const std::string& found = "")
{
    const uint64_t byPsn = 0xfffffffeULL * sc.transport.mtuBytes;
    double minRate = 0;
    for (const auto& l : sc.topology.links)
    {
        minRate = minRate == 0 ? l.spec.rateBps : std::min(minRate, l.spec.rateBps);
    }
    const double byTime = minRate / 8 * units::kMaxSeconds / 2;
    if (bytes > byPsn || (minRate > 0 && double(bytes) > byTime))
    {
        const bool psn = double(byPsn) <= byTime || minRate == 0;
        const uint64_t most = psn ? byPsn : uint64_t(byTime);
        throw InputError(
            file,
            field,
            "a flow size of at most " + std::to_string(most) + " bytes ("
                + (psn ? "2^32 - 2 packets of mtu_bytes " + std::to_string(sc.transport.mtuBytes)
                       : "53 days at the slowest link's rate, " + DescribeJson(json(minRate))
                             + " b/s")
                + ")",
            found.empty() ? std::to_string(bytes) : found);
    }
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
                         JsonPath(path, "duration_ns"),
                         "start_ns + duration_ns at most " + std::to_string(units::kMaxNs)
                             + " (106 days)",
                         std::to_string(startNs) + " + " + std::to_string(durationNs));
    }
}

uint32_t
GetHost(const json& v, const Topology& topo, const std::string& file, const std::string& field)
{
    const std::optional<uint64_t> h = JsonObject::AsUint(v);
    if (!h || *h >= topo.NumHosts())
    {
        throw InputError(file,
                         field,
                         "a host index in [0, " + std::to_string(topo.NumHosts() - 1) + "]",
                         DescribeJson(v));
    }
    return uint32_t(*h);
}

std::vector<uint32_t>
GetHostList(const JsonObject& o, const Topology& topo, const std::string& key)
{
    std::vector<uint32_t> v;
    if (!o.Has(key))
    {
        return v;
    }
    const json& a = o.Array(key);
    for (size_t i = 0; i < a.size(); ++i)
    {
        v.push_back(GetHost(a[i], topo, o.File(), JsonIndex(o.Field(key), i)));
    }
    return v;
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
ParseWatchdog(const json& w, const std::string& file, PfcWatchdogSpec& spec)
{
    const std::string path = "switch.pfc_watchdog";
    const JsonObject wObj(w, file, path);
    wObj.CheckKeys({"enabled", "poll_interval_ns", "detection_ns", "restoration_ns", "action"});
    spec.enabled = wObj.OptionalBool("enabled", true);
    spec.pollNs = wObj.OptionalUint("poll_interval_ns", spec.pollNs, 1, units::kMaxNs);
    spec.detectionNs = wObj.OptionalUint("detection_ns", spec.detectionNs, 0, units::kMaxNs);
    spec.restorationNs = wObj.OptionalUint("restoration_ns", spec.restorationNs, 0, units::kMaxNs);
    spec.action = wObj.OptionalString("action", spec.action);
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

/// Routes that loop are refused here, naming the route (FindForwardingLoop: the routes the
/// switches will really use, at setup; link events are checked as they happen, in the run).
void
CheckRoutesLoopFree(const std::vector<RouteOverride>& routes,
                    const Topology& topo,
                    const std::string& file)
{
    RouteOverrides overrides;
    std::map<std::pair<uint32_t, uint32_t>, size_t> index; // as applied: a later route wins
    for (size_t i = 0; i < routes.size(); ++i)
    {
        for (uint32_t d : routes[i].dstHosts)
        {
            overrides[{routes[i].node, d}] = routes[i].ports;
            index[{routes[i].node, d}] = i;
        }
    }
    if (auto loop = FindForwardingLoop(topo, Routing(topo), overrides))
    {
        throw InputError(file,
                         "routes[" + std::to_string(index.at(loop->route)) + "]",
                         "routes that reach host " + std::to_string(loop->dstHost)
                             + " without a loop",
                         "a forwarding loop " + loop->Describe(topo));
    }
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
        const JsonObject rObj(r, file, p);
        rObj.CheckKeys({"switch", "dst", "next", "port"});
        RouteOverride ro;
        ro.node = RouteSwitch(r, topo, file, p);
        const auto& nb = peers[ro.node];
        if (!r.contains("dst"))
        {
            throw InputError(file, p + ".dst", "a host index or an array of them", "nothing");
        }
        if (r["dst"].is_array())
        {
            ro.dstHosts = GetHostList(rObj, topo, "dst");
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
            uint64_t port = rObj.OptionalUint("port", 0);
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
    CheckRoutesLoopFree(out, topo, file);
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
    json doc = ParseJson(ReadFileBounded(path, "scenario file"), path);
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
LoadFlowCdf(const std::string& path, const FileReferrer& ref)
{
    LineReader in(path, "flow-size CDF file", kDataFileLimits, ref);
    std::vector<std::pair<double, double>> cdf;
    std::string line;
    while (in.Next(line))
    {
        const uint64_t lineNo = in.LineNumber();
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

json
FabricPart(const json& doc)
{
    json f = doc;
    for (const char* k : {"model", "hardware", "parallelism", "serving"})
    {
        if (f.is_object())
        {
            f.erase(k);
        }
    }
    return f;
}

FabricScenario
ParseScenarioFabric(const json& doc, const std::string& file)
{
    return ParseFabricScenario(FabricPart(doc), file);
}

FabricScenario
ParseFabricScenario(const json& doc, const std::string& file)
{
    FabricScenario sc;
    sc.file = file;
    auto slash = file.find_last_of('/');
    sc.dir = slash == std::string::npos ? "." : file.substr(0, slash);
    sc.raw = doc;
    const JsonObject root(doc, file, "");
    root.CheckKeys({"name",
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
    sc.name = root.OptionalString("name", file);
    root.OptionalString("description", ""); // a string, if given
    sc.seed = root.OptionalUint("seed", 1, 1);
    sc.stopNs = root.OptionalUint("stop_ns", 1000000000ULL, 1, units::kMaxNs);
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
        const JsonObject tObj(t, file, "transport");
        tObj.CheckKeys({"cc",
                        "cc_per_priority",
                        "mtu_bytes",
                        "pfc",
                        "priority",
                        "ack_interval",
                        "rto_ns",
                        "cnp_interval_ns",
                        "window",
                        "loss_recovery",
                        "local_ack_timeout",
                        "rto_backoff",
                        "rto_max_ns",
                        "rto_jitter",
                        "retry_limit",
                        "bdp_cap"});
        sc.transport.cc = tObj.OptionalString("cc", sc.transport.cc);
        if (t.contains("cc_per_priority"))
        {
            const json& m = t["cc_per_priority"];
            const JsonObject mObj(m, file, "transport.cc_per_priority");
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
        sc.transport.mtuBytes = uint32_t(tObj.OptionalUint("mtu_bytes", 1000, 64));
        if (sc.transport.mtuBytes > 9000)
        {
            throw InputError(file,
                             "transport.mtu_bytes",
                             "an MTU in [64, 9000]",
                             std::to_string(sc.transport.mtuBytes));
        }
        sc.transport.pfc = tObj.OptionalBool("pfc", true);
        uint64_t prio = tObj.OptionalUint("priority", 3);
        if (prio > 6)
        {
            throw InputError(file,
                             "transport.priority",
                             "a data class in [0, 6] (7 carries control frames)",
                             std::to_string(prio));
        }
        sc.transport.priority = uint8_t(prio);
        sc.transport.ackInterval = uint32_t(tObj.OptionalUint("ack_interval", 1, 1));
        sc.transport.rtoNs = tObj.OptionalUint("rto_ns", sc.transport.rtoNs, 1, units::kMaxNs);
        sc.transport.cnpIntervalNs
            = tObj.OptionalUint("cnp_interval_ns", sc.transport.cnpIntervalNs, 0, units::kMaxNs);
        sc.transport.window = tObj.OptionalBool("window", false);
        ReadLossRecovery(tObj, sc.transport);
    }

    if (doc.contains("switch"))
    {
        const json& s = doc["switch"];
        const JsonObject sObj(s, file, "switch");
        sObj.CheckKeys({"buffer_bytes",
                        "alpha",
                        "reserve_bytes",
                        "resume_offset_bytes",
                        "headroom_bytes",
                        "pause_quanta",
                        "ecmp_seed",
                        "ecn",
                        "pfc_watchdog"});
        sc.sw.bufferBytes = GetBytes(sObj, "buffer_bytes", sc.sw.bufferBytes);
        if (sc.sw.bufferBytes == 0)
        {
            throw InputError(file, "switch.buffer_bytes", "a positive byte count", "0");
        }
        sc.sw.alpha = sObj.OptionalNumber("alpha", sc.sw.alpha, 1e-6, 1e6);
        sc.sw.reserveBytes = GetBytes(sObj, "reserve_bytes", sc.sw.reserveBytes);
        sc.sw.resumeOffsetBytes = GetBytes(sObj, "resume_offset_bytes", sc.sw.resumeOffsetBytes);
        sc.sw.headroomBytes = GetBytes(sObj, "headroom_bytes", 0);
        sc.sw.pauseQuanta = uint32_t(sObj.OptionalUint("pause_quanta", 0xffff, 1));
        if (sc.sw.pauseQuanta > 0xffff)
        {
            throw InputError(
                file, "switch.pause_quanta", "1..65535", std::to_string(sc.sw.pauseQuanta));
        }
        sc.sw.ecmpSeed = uint32_t(sObj.OptionalUint("ecmp_seed", 0, 0, UINT32_MAX));
        if (s.contains("ecn"))
        {
            const json& e = s["ecn"];
            const JsonObject eObj(e, file, "switch.ecn");
            eObj.CheckKeys({"enabled", "kmin_bytes", "kmax_bytes", "pmax", "per_rate"});
            sc.sw.ecn.enabled = eObj.OptionalBool("enabled", true);
            sc.sw.ecn.kminBytes = GetBytes(eObj, "kmin_bytes", sc.sw.ecn.kminBytes);
            sc.sw.ecn.kmaxBytes = GetBytes(eObj, "kmax_bytes", sc.sw.ecn.kmaxBytes);
            sc.sw.ecn.pmax = eObj.OptionalNumber("pmax", sc.sw.ecn.pmax, 0, 1);
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
        const JsonObject tObj(t, file, "traffic");
        tObj.CheckKeys({"flows", "flow_file", "poisson", "incast"});
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
                    throw InputError(
                        file, p + ".dst", "a host other than src", std::to_string(s.dst));
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
                    throw InputError(file,
                                     p + ".priority",
                                     "a data class in [0, 6]",
                                     std::to_string(s.priority));
                }
                s.cc = fObj.OptionalString("cc", "");
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
            ParseHpccFlowFile(Resolve(sc.dir, t["flow_file"].get<std::string>()),
                              sc,
                              {file, "traffic.flow_file"});
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
        auto il = asList("incast");
        for (size_t i = 0; i < il.size(); ++i)
        {
            std::string p = "traffic.incast"
                            + (il.size() > 1 ? "[" + std::to_string(i) + "]" : std::string());
            const json& o = il[i];
            const JsonObject oObj(o, file, p);
            oObj.CheckKeys(
                {"receiver", "senders", "size_bytes", "start_ns", "load", "duration_ns"});
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
                is.senders = GetHostList(oObj, sc.topology, "senders");
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
            const JsonObject eventObj(le[i], file, p);
            eventObj.CheckKeys({"link", "at_ns", "state"});
            LinkEvent ev;
            ev.link = uint32_t(eventObj.OptionalUint("link", UINT64_MAX));
            if (ev.link >= sc.topology.links.size())
            {
                throw InputError(file,
                                 p + ".link",
                                 "a link id in [0, " + std::to_string(sc.topology.links.size() - 1)
                                     + "]",
                                 le[i].contains("link") ? DescribeJson(le[i]["link"]) : "nothing");
            }
            ev.atNs = eventObj.OptionalUint("at_ns", 0, 0, units::kMaxNs);
            std::string st = eventObj.OptionalString("state", "down");
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
        const JsonObject pcObj(pc, file, "pcap");
        pcObj.CheckKeys({"hosts", "switches"});
        sc.pcapHosts = GetHostList(pcObj, sc.topology, "hosts");
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
        const JsonObject mObj(m, file, "monitor");
        mObj.CheckKeys({"interval_ns",
                        "start_ns",
                        "end_ns",
                        "queues",
                        "links",
                        "qp_rates",
                        "cnps",
                        "pause_state"});
        sc.monitor.intervalNs
            = mObj.OptionalUint("interval_ns", sc.monitor.intervalNs, 0, units::kMaxNs);
        sc.monitor.startNs = mObj.OptionalUint("start_ns", 0, 0, units::kMaxNs);
        sc.monitor.endNs = mObj.OptionalUint("end_ns", UINT64_MAX, 0, units::kMaxNs);
        if (sc.monitor.endNs < sc.monitor.startNs)
        {
            throw InputError(file,
                             "monitor.end_ns",
                             "a time >= monitor.start_ns (" + std::to_string(sc.monitor.startNs)
                                 + ")",
                             std::to_string(sc.monitor.endNs));
        }
        sc.monitor.queues = mObj.OptionalBool("queues", true);
        sc.monitor.links = mObj.OptionalBool("links", true);
        sc.monitor.qpRates = mObj.OptionalBool("qp_rates", true);
        sc.monitor.cnps = mObj.OptionalBool("cnps", true);
        sc.monitor.pauseState = mObj.OptionalBool("pause_state", true);
    }

    // A watchdog that resolves deadlocks gets the chance to: detection then only reports.
    sc.deadlock.stop = !(sc.sw.watchdog.enabled && sc.sw.watchdog.action != "report");
    if (doc.contains("deadlock"))
    {
        const json& d = doc["deadlock"];
        const JsonObject dObj(d, file, "deadlock");
        dObj.CheckKeys({"check_interval_ns", "stall_ns", "on_detect"});
        sc.deadlock.checkIntervalNs
            = dObj.OptionalUint("check_interval_ns", sc.deadlock.checkIntervalNs, 0, units::kMaxNs);
        sc.deadlock.stallNs = dObj.OptionalUint("stall_ns", sc.deadlock.stallNs, 0, units::kMaxNs);
        std::string on = dObj.OptionalString("on_detect", sc.deadlock.stop ? "stop" : "report");
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
        const JsonObject aObj(a, file, "attributes");
        for (auto it = a.begin(); it != a.end(); ++it)
        {
            std::string v = it->is_string() ? it->get<std::string>() : it->dump();
            sc.attributes.emplace_back(it.key(), v);
        }
    }
    return sc;
}

} // namespace fabricsim
