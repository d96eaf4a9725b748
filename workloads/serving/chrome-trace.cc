#include "chrome-trace.h"

namespace fabricsim
{

using nlohmann::json;

void
ChromeTrace::Slice(uint32_t pid,
                   uint32_t tid,
                   const std::string& name,
                   const std::string& cat,
                   int64_t startPs,
                   int64_t durPs,
                   json args)
{
    json e;
    e["ph"] = "X";
    e["pid"] = pid;
    e["tid"] = tid;
    e["name"] = name;
    e["cat"] = cat;
    e["ts"] = double(startPs) / 1e6;
    e["dur"] = double(durPs) / 1e6;
    if (!args.empty())
    {
        e["args"] = std::move(args);
    }
    m_events.push_back(std::move(e));
}

void
ChromeTrace::NameProcess(uint32_t pid, const std::string& name)
{
    m_processNames[pid] = name;
}

void
ChromeTrace::NameThread(uint32_t pid, uint32_t tid, const std::string& name)
{
    m_threadNames[{pid, tid}] = name;
}

json
ChromeTrace::ToJson() const
{
    json events = json::array();
    for (const auto& [pid, name] : m_processNames)
    {
        events.push_back(
            {{"ph", "M"}, {"pid", pid}, {"name", "process_name"}, {"args", {{"name", name}}}});
        events.push_back({{"ph", "M"},
                          {"pid", pid},
                          {"name", "process_sort_index"},
                          {"args", {{"sort_index", pid}}}});
    }
    for (const auto& [key, name] : m_threadNames)
    {
        events.push_back({{"ph", "M"},
                          {"pid", key.first},
                          {"tid", key.second},
                          {"name", "thread_name"},
                          {"args", {{"name", name}}}});
    }
    for (const auto& e : m_events)
    {
        events.push_back(e);
    }
    return {{"traceEvents", std::move(events)}, {"displayTimeUnit", "ns"}};
}

void
ChromeTrace::Write(std::ostream& out) const
{
    out << ToJson().dump() << "\n";
}

} // namespace fabricsim
