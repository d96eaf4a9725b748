#include "trace-test-util.h"

#include <sys/stat.h>

namespace fabricsim
{

std::string
CorpusPath(const std::string& rel)
{
    const std::string path = std::string(FABRICSIM_SHARED_DIR) + "/corpus/" + rel;
    struct stat st;
    return stat(path.c_str(), &st) == 0 ? path : "";
}

TestFabric::TestFabric(uint32_t hosts, double gbytesPerSec)
{
    nlohmann::json spec = {
        {"type", "single-switch"},
        {"hosts", hosts},
        {"host_link", {{"rate", std::to_string(int(gbytesPerSec)) + "GBps"}, {"delay", "100ns"}}}};
    Topology topo = BuildTopology(spec, "test");
    AnalyticalOptions ao;
    ao.m_mtuBytes = 4096;
    transport = std::make_unique<AnalyticalTransport>(topo, ao);
    api = std::make_unique<ScheduleCollectives>(*transport);
}

ReplayRun
TestFabric::Replay(const ImportedTrace& trace, const ReplayOptions& opt)
{
    return ReplayTrace(trace, opt, *api, [this]() { transport->Run(); });
}

} // namespace fabricsim
