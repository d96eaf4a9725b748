// The scenario document's root keys and topology; each other block has its reader
// (scenario-readers.h).
#include "fabric-scenario.h"

#include "input-error.h"
#include "json-reader.h"
#include "scenario-fields.h"
#include "scenario-readers.h"
#include "scenario.h"
#include "unit-conversions.h"

namespace fabricsim
{

using nlohmann::json;

namespace
{

/// "topology" (docs/topology.md); an HPCC topology file's path is relative to the scenario.
Topology
ReadTopology(const json& doc, const std::string& dir, const std::string& file)
{
    if (!doc.contains("topology"))
    {
        throw InputError(file, "topology", "a topology object", "nothing");
    }
    json topo = doc["topology"];
    if (topo.is_object() && topo.contains("type") && topo["type"].is_string()
        && topo["type"].get<std::string>() == "hpcc-file" && topo.contains("path")
        && topo["path"].is_string())
    {
        topo["path"] = Resolve(dir, topo["path"].get<std::string>());
    }
    return BuildTopology(topo, file);
}

/// "attributes": ns-3 attribute defaults, values as written (non-strings as JSON text).
std::vector<std::pair<std::string, std::string>>
ReadAttributes(const json& a, const std::string& file)
{
    const JsonObject aObj(a, file, "attributes");
    std::vector<std::pair<std::string, std::string>> out;
    for (auto it = a.begin(); it != a.end(); ++it)
    {
        std::string v = it->is_string() ? it->get<std::string>() : it->dump();
        out.emplace_back(it.key(), v);
    }
    return out;
}

} // namespace

FabricScenario
ParseFabricScenario(const json& doc, const std::string& file)
{
    FabricScenario sc;
    sc.file = file;
    auto slash = file.find_last_of('/');
    sc.dir = slash == std::string::npos ? "." : file.substr(0, slash);
    const JsonObject root(doc, file, "");
    CheckScenarioKeys(root);
    sc.name = root.OptionalString("name", file);
    root.OptionalString("description", ""); // a string, if given
    sc.seed = root.OptionalUint("seed", 1, 1);
    sc.stopNs = root.OptionalUint("stop_ns", 1000000000ULL, 1, units::kMaxNs);
    sc.stopGiven = root.Has("stop_ns");
    sc.topology = ReadTopology(doc, sc.dir, file);

    if (doc.contains("transport"))
    {
        ReadTransport(doc["transport"], file, sc.transport);
    }
    if (doc.contains("switch"))
    {
        ReadSwitch(doc["switch"], file, sc.sw);
    }
    if (doc.contains("traffic"))
    {
        ReadTraffic(doc["traffic"], sc);
    }
    if (doc.contains("link_events"))
    {
        ReadLinkEvents(doc["link_events"], sc);
    }
    if (doc.contains("pcap"))
    {
        ReadPcap(doc["pcap"], sc);
    }
    if (doc.contains("monitor"))
    {
        ReadMonitor(doc["monitor"], file, sc.monitor);
    }
    ReadDeadlock(
        doc.contains("deadlock") ? &doc["deadlock"] : nullptr, sc.sw.watchdog, file, sc.deadlock);
    if (doc.contains("routes"))
    {
        sc.routes = ReadRoutes(doc["routes"], sc.topology, file);
    }
    if (doc.contains("attributes"))
    {
        sc.attributes = ReadAttributes(doc["attributes"], file);
    }
    return sc;
}

} // namespace fabricsim
