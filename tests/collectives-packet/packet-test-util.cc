#include "packet-test-util.h"

#include "nccl-report.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace fabricsim
{
namespace test
{

nlohmann::json
SingleSwitchScenario(int hosts, const std::string& rate, uint32_t mtu, uint32_t ackInterval)
{
    return {{"name", "single-switch-" + std::to_string(hosts)},
            {"topology",
             {{"type", "single-switch"},
              {"hosts", hosts},
              {"host_link", {{"rate", rate}, {"delay", "1us"}}}}},
            {"transport", {{"cc", "dcqcn"}, {"mtu_bytes", mtu}, {"ack_interval", ackInterval}}}};
}

nlohmann::json
RailScenario(int servers, int accels, uint32_t mtu, uint32_t ackInterval)
{
    return {{"name", "rail-" + std::to_string(servers) + "x" + std::to_string(accels)},
            {"topology",
             {{"type", "rail-optimized"},
              {"servers", servers},
              {"accels_per_server", accels},
              {"spines", std::max(1, accels)},
              {"host_link", {{"rate", "400Gbps"}, {"delay", "1us"}}},
              {"fabric_link", {{"rate", "400Gbps"}, {"delay", "1us"}}},
              {"scale_up", {{"rate", "450GBps"}, {"delay", "100ns"}}}}},
            {"transport", {{"cc", "dcqcn"}, {"mtu_bytes", mtu}, {"ack_interval", ackInterval}}}};
}

FabricScenario
Scenario(const nlohmann::json& doc)
{
    return ParseFabricScenario(doc, "test.json");
}

CollectiveMeasurement
Measure(const nlohmann::json& scenario,
        const std::string& backend,
        const Schedule& schedule,
        uint64_t bytes)
{
    return MeasureCollective(
        Scenario(scenario), ParseBackendKind(backend, "test", "backend"), schedule, bytes, 0, 1);
}

double
BusBw(CollectiveKind kind, int ranks, uint64_t bytes, const CollectiveMeasurement& m)
{
    return MakeNcclRow(kind, ranks, bytes, m.m_timeUs, 0).m_busbwGbps;
}

std::string
FreshDir(const std::string& tag)
{
    static std::atomic<int> counter{0};
    const char* tmp = std::getenv("TMPDIR");
    // Unique per process and call; the command creates it.
    return std::string(tmp ? tmp : "/tmp") + "/fabricsim-collpkt-" + tag + "-"
           + std::to_string(getpid()) + "-" + std::to_string(counter++);
}

std::string
Slurp(const std::string& path)
{
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

} // namespace test
} // namespace fabricsim
