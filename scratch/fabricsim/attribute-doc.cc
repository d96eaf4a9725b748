#include "attribute-doc.h"

#include "ns3/config.h"
#include "ns3/fabric-module.h"
#include "ns3/fabric-topology-helper.h"
#include "ns3/simulator.h"
#include "ns3/type-id.h"

#include <algorithm>
#include <map>
#include <sstream>
#include <vector>

namespace fabricsim
{

using namespace ns3;

namespace
{

std::string
Cell(std::string s)
{
    std::replace(s.begin(), s.end(), '\n', ' ');
    std::string out;
    for (char c : s)
    {
        out += (c == '|') ? std::string("\\|") : std::string(1, c);
    }
    return out;
}

/// Where FabricTopologyHelper puts each type in the Config namespace (checked below).
const std::vector<std::pair<std::string, std::string>> kCandidatePaths = {
    {"ns3::FabricNetDevice", "/NodeList/*/DeviceList/*/$ns3::FabricNetDevice"},
    {"ns3::RdmaNic", "/NodeList/*/DeviceList/*/$ns3::RdmaNic"},
    {"ns3::SwitchPort", "/NodeList/*/DeviceList/*/$ns3::SwitchPort"},
    {"ns3::FabricSwitch", "/NodeList/*/$ns3::FabricSwitch"},
    {"ns3::SharedBufferMmu", "/NodeList/*/$ns3::FabricSwitch/Mmu"},
    {"ns3::PfcWatchdog", "/NodeList/*/$ns3::FabricSwitch/PfcWatchdog"},
    {"ns3::FabricChannel", "/ChannelList/*/$ns3::FabricChannel"},
};

/// How to reach instances of types that are not in the Config namespace.
const std::map<std::string, std::string> kNoPathHints = {
    {"ns3::CongestionControl",
     "One per queue pair: set defaults with `--ns3::Type::Name=...` or `Config::SetDefault`; "
     "connect trace sources on the object, `qp->GetCc()`."},
    {"ns3::RdmaQueuePair",
     "Reach it as `FlowRecord::qp` of `FabricTrafficHelper::GetFlows()`, or as what "
     "`FabricTopologyHelper::Connect` returns, and connect trace sources on the object."},
    {"ns3::DeadlockDetector",
     "Created by the program that wants one (`CreateObject<DeadlockDetector>()`); connect "
     "its trace source on that object."},
    {"ns3::CollectiveExecutor",
     "An attribute holder, not an instance: every collective run reads these defaults when it "
     "starts (`--ns3::CollectiveExecutor::...`, a scenario's `attributes`, `Config::SetDefault`)."},
    {"ns3::AnalyticalBackend",
     "An attribute holder read by the analytical (flow-level) backend when it is created; set "
     "the defaults as for `ns3::CollectiveExecutor`."},
    {"ns3::NcclTuner",
     "An attribute holder read by `fabricsim calibrate`; set the defaults with `--ns3::` or the "
     "system scenario's `attributes`."},
    {"ns3::FabricScheduler",
     "The event scheduler of every run (another with `--SchedulerType=NAME`, or ns-3's "
     "SchedulerType global value in a program): simultaneous events in one order "
     "(docs/performance.md)."},
};

/// Section title of a TypeId group, in page order.
const std::vector<std::pair<std::string, std::string>> kGroups = {
    {"Rdma", "Module rdma"},
    {"Fabric", "Module fabric"},
    {"Fabricsim", "Module collectives (executor, analytical backend, calibration)"},
};

/**
 * The candidate paths that really resolve, by type: installs a one-switch fabric, asks
 * Config::LookupMatches for each path, keeps those whose matches are all of that type, and
 * destroys the fabric again.
 */
std::map<std::string, std::vector<std::string>>
VerifiedConfigPaths()
{
    std::map<std::string, std::vector<std::string>> paths;
    {
        FabricTopologyHelper fabric(
            BuildTopology({{"type", "single-switch"}, {"hosts", 2}}, "attribute-doc"));
        fabric.Install();
        for (const auto& [type, path] : kCandidatePaths)
        {
            Config::MatchContainer m = Config::LookupMatches(path);
            bool ok = m.GetN() > 0;
            for (std::size_t i = 0; i < m.GetN(); ++i)
            {
                TypeId found = m.Get(i)->GetInstanceTypeId();
                ok = ok && (found.GetName() == type || found.IsChildOf(TypeId::LookupByName(type)));
            }
            if (ok)
            {
                paths[type].push_back(path);
            }
        }
    }
    Simulator::Destroy();
    return paths;
}

/// The "Config path" line of type `t`; empty for packet headers (never objects in a fabric).
std::string
ConfigPathLine(const TypeId& t, const std::map<std::string, std::vector<std::string>>& paths)
{
    auto it = paths.find(t.GetName());
    if (it != paths.end())
    {
        std::string line = "Config path:";
        for (std::size_t i = 0; i < it->second.size(); ++i)
        {
            line += std::string(i ? "," : "") + " `" + it->second[i] + "`";
        }
        return line + "\n";
    }
    for (TypeId p = t;; p = p.GetParent())
    {
        auto hint = kNoPathHints.find(p.GetName());
        if (hint != kNoPathHints.end())
        {
            // Subclasses point to the base type rather than repeat its hint.
            return "Config path: none. " + (p == t ? hint->second : "See `" + p.GetName() + "`.")
                   + "\n";
        }
        if (p.GetName() == "ns3::Header" || p == p.GetParent())
        {
            return "";
        }
    }
}

} // namespace

std::string
AttributeReferenceMarkdown()
{
    const auto paths = VerifiedConfigPaths();
    auto groupRank = [](const std::string& g)
    {
        for (std::size_t i = 0; i < kGroups.size(); ++i)
        {
            if (kGroups[i].first == g)
            {
                return i;
            }
        }
        return kGroups.size();
    };
    std::vector<TypeId> types;
    for (uint16_t i = 0; i < TypeId::GetRegisteredN(); ++i)
    {
        TypeId t = TypeId::GetRegistered(i);
        if (groupRank(t.GetGroupName()) < kGroups.size())
        {
            types.push_back(t);
        }
    }
    std::sort(types.begin(),
              types.end(),
              [&](const TypeId& a, const TypeId& b)
              {
                  return a.GetGroupName() != b.GetGroupName()
                             ? groupRank(a.GetGroupName()) < groupRank(b.GetGroupName())
                             : a.GetName() < b.GetName();
              });
    std::ostringstream o;
    o << "# Attributes and trace sources\n\n"
         "Generated by `fabricsim attributes` from the ns-3 TypeId registry (a test keeps this "
         "page in\n"
         "sync). Set any attribute from a scenario (`\"attributes\": {\"ns3::Type::Name\": "
         "\"value\"}`),\n"
         "from the command line (`--ns3::Type::Name=value`) or with `Config::SetDefault`. Units "
         "are in\n"
         "the value's type: `Time` takes `1us`, `DataRate` takes `100Gbps`.\n"
         "\n"
         "A type's Config path says where `FabricTopologyHelper` puts its instances, for\n"
         "`Config::Set` and `Config::Connect` (each path is checked on an installed fabric\n"
         "when this page is generated). In `/NodeList/N/DeviceList/D/...`, N is the topology\n"
         "node id (hosts first, so host h is node h, as long as the program created no other\n"
         "nodes before) and D the node's port (its k-th link); `/ChannelList/L` is link L.\n"
         "Example: `/NodeList/4/DeviceList/0/$ns3::SwitchPort/QueueBytes`. See\n"
         "[scenario-scripts.md](scenario-scripts.md).\n";
    std::string group;
    for (const TypeId& t : types)
    {
        if (t.GetGroupName() != group)
        {
            group = t.GetGroupName();
            o << "\n## " << kGroups[groupRank(group)].second << "\n";
        }
        o << "\n### " << t.GetName() << "\n\nParent: `" << t.GetParent().GetName() << "`\n";
        std::string where = ConfigPathLine(t, paths);
        if (!where.empty())
        {
            o << "\n" << where;
        }
        if (t.GetAttributeN() > 0)
        {
            o << "\n| attribute | type | default | description |\n|---|---|---|---|\n";
            for (std::size_t a = 0; a < t.GetAttributeN(); ++a)
            {
                TypeId::AttributeInformation info = t.GetAttribute(a);
                o << "| `" << info.name << "` | " << Cell(info.checker->GetValueTypeName())
                  << " | `" << Cell(info.initialValue->SerializeToString(info.checker)) << "` | "
                  << Cell(info.help) << " |\n";
            }
        }
        if (t.GetTraceSourceN() > 0)
        {
            o << "\n| trace source | callback | description |\n|---|---|---|\n";
            for (std::size_t s = 0; s < t.GetTraceSourceN(); ++s)
            {
                TypeId::TraceSourceInformation info = t.GetTraceSource(s);
                o << "| `" << info.name << "` | `" << Cell(info.callback) << "` | "
                  << Cell(info.help) << " |\n";
            }
        }
    }
    return o.str();
}

} // namespace fabricsim
