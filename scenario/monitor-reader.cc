// The blocks that say what a run records and when it stops or changes: docs/scenario.md's rows
// link_events[], pcap, monitor.* and deadlock.*.
#include "input-error.h"
#include "json-describe.h"
#include "json-reader.h"
#include "scenario-fields.h"
#include "scenario-readers.h"
#include "unit-conversions.h"

#include <algorithm>

namespace fabricsim
{

using nlohmann::json;

void
ReadLinkEvents(const json& le, FabricScenario& sc)
{
    const std::string& file = sc.file;
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

void
ReadPcap(const json& pc, FabricScenario& sc)
{
    const std::string& file = sc.file;
    const JsonObject pcObj(pc, file, "pcap");
    pcObj.CheckKeys({"hosts", "switches"});
    sc.pcapHosts = GetHostList(pcObj, sc.topology, "hosts");
    if (pc.contains("switches"))
    {
        const json& sw = pc["switches"];
        if (!sw.is_array())
        {
            throw InputError(file, "pcap.switches", "an array of switch names", DescribeJson(sw));
        }
        for (size_t i = 0; i < sw.size(); ++i)
        {
            std::string f = "pcap.switches[" + std::to_string(i) + "]";
            uint32_t id
                = sw[i].is_string() ? sc.topology.FindNode(sw[i].get<std::string>()) : UINT32_MAX;
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

void
ReadMonitor(const json& m, const std::string& file, MonitorSpec& spec)
{
    const JsonObject mObj(m, file, "monitor");
    mObj.CheckKeys({"interval_ns",
                    "start_ns",
                    "end_ns",
                    "queues",
                    "links",
                    "qp_rates",
                    "cnps",
                    "pause_state"});
    spec.intervalNs = mObj.OptionalUint("interval_ns", spec.intervalNs, 0, units::kMaxNs);
    spec.startNs = mObj.OptionalUint("start_ns", 0, 0, units::kMaxNs);
    spec.endNs = mObj.OptionalUint("end_ns", UINT64_MAX, 0, units::kMaxNs);
    if (spec.endNs < spec.startNs)
    {
        throw InputError(file,
                         "monitor.end_ns",
                         "a time >= monitor.start_ns (" + std::to_string(spec.startNs) + ")",
                         std::to_string(spec.endNs));
    }
    spec.queues = mObj.OptionalBool("queues", true);
    spec.links = mObj.OptionalBool("links", true);
    spec.qpRates = mObj.OptionalBool("qp_rates", true);
    spec.cnps = mObj.OptionalBool("cnps", true);
    spec.pauseState = mObj.OptionalBool("pause_state", true);
}

void
ReadDeadlock(const json* d,
             const PfcWatchdogSpec& watchdog,
             const std::string& file,
             DeadlockSpec& spec)
{
    // A watchdog that resolves deadlocks gets the chance to: detection then only reports.
    spec.stop = !(watchdog.enabled && watchdog.action != "report");
    if (!d)
    {
        return;
    }
    const JsonObject dObj(*d, file, "deadlock");
    dObj.CheckKeys({"check_interval_ns", "stall_ns", "on_detect"});
    spec.checkIntervalNs
        = dObj.OptionalUint("check_interval_ns", spec.checkIntervalNs, 0, units::kMaxNs);
    spec.stallNs = dObj.OptionalUint("stall_ns", spec.stallNs, 0, units::kMaxNs);
    std::string on = dObj.OptionalString("on_detect", spec.stop ? "stop" : "report");
    if (on != "stop" && on != "report")
    {
        throw InputError(file, "deadlock.on_detect", "\"stop\" or \"report\"", "\"" + on + "\"");
    }
    spec.stop = on == "stop";
}

} // namespace fabricsim
