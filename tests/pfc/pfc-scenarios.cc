#include "pfc-scenarios.h"

#include <fstream>
#include <sstream>

using nlohmann::json;

namespace fabricsim::test
{

json
RingDeadlock(uint64_t flowBytes)
{
    json flows = json::array();
    json routes = json::array();
    for (int i = 0; i < 3; ++i)
    {
        int dst = (i + 2) % 3;
        flows.push_back({{"src", i}, {"dst", dst}, {"size_bytes", flowBytes}});
        // Switch i would send straight to switch i+2; send it the long way, through i+1.
        routes.push_back({{"switch", "sw" + std::to_string(i)},
                          {"dst", dst},
                          {"next", "sw" + std::to_string((i + 1) % 3)}});
    }
    return json{{"seed", 1},
                {"stop_ns", 100000000},
                {"topology",
                 {{"type", "ring"},
                  {"switches", 3},
                  {"hosts_per_switch", 1},
                  {"host_link", {{"rate", "100Gbps"}, {"delay", "1us"}}}}},
                {"transport", {{"cc", "none"}, {"pfc", true}, {"rto_ns", 100000}}},
                {"switch", {{"buffer_bytes", "2MiB"}}},
                {"routes", routes},
                {"traffic", {{"flows", flows}}}};
}

json
Incast(const std::string& cc, uint32_t senders, uint64_t flowBytes)
{
    return json{
        {"seed", 5},
        {"stop_ns", 50000000},
        {"topology",
         {{"type", "single-switch"},
          {"hosts", senders + 1},
          {"host_link", {{"rate", "100Gbps"}, {"delay", "1us"}}}}},
        {"transport", {{"cc", cc}, {"pfc", true}}},
        {"switch", {{"buffer_bytes", "4MiB"}}},
        {"traffic",
         {{"incast", {{"receiver", senders}, {"senders", senders}, {"size_bytes", flowBytes}}}}}};
}

Csv
ReadCsv(const std::string& path)
{
    Csv csv;
    std::ifstream in(path);
    std::string line;
    auto split = [](const std::string& l)
    {
        std::vector<std::string> v;
        std::stringstream ss(l);
        std::string f;
        while (std::getline(ss, f, ','))
        {
            v.push_back(f);
        }
        return v;
    };
    if (std::getline(in, line))
    {
        csv.header = split(line);
    }
    while (std::getline(in, line))
    {
        auto f = split(line);
        std::map<std::string, std::string> row;
        for (size_t i = 0; i < f.size() && i < csv.header.size(); ++i)
        {
            row[csv.header[i]] = f[i];
        }
        csv.rows.push_back(row);
    }
    return csv;
}

} // namespace fabricsim::test
