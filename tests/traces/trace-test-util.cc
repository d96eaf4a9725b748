#include "trace-test-util.h"

namespace fabricsim
{

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
