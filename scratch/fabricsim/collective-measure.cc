#include "collective-measure.h"

#include "analytical-transport.h"
#include "executor-attributes.h"
#include "fabric-setup.h"

#include "ns3/fabric-collective-helper.h"
#include "ns3/fabric-stats-helper.h"
#include "ns3/simulator.h"

#include <memory>

namespace fabricsim
{

namespace
{

/// Watchdog for one size: the scenario's stop_ns when it sets one, else 100 simulated seconds.
int64_t
StopPs(const FabricScenario& sc)
{
    return sc.raw.contains("stop_ns") ? int64_t(sc.stopNs) * 1000 : int64_t(100) * 1000000000000LL;
}

} // namespace

std::string
CollectiveCcName(const FabricScenario& sc)
{
    auto it = sc.transport.ccPerPriority.find(sc.transport.priority);
    return it != sc.transport.ccPerPriority.end() ? it->second : sc.transport.cc;
}

int
ServerLocalSize(const Topology& topo, int ranks)
{
    if (ranks <= 0 || uint32_t(ranks) > topo.NumHosts())
    {
        return 0;
    }
    std::vector<uint32_t> hosts(ranks);
    for (int r = 0; r < ranks; ++r)
    {
        hosts[r] = uint32_t(r);
    }
    return ns3::FabricCollectiveHelper::ServerLocalSize(topo, hosts);
}

CollectiveMeasurement
MeasureCollective(const FabricScenario& sc,
                  const std::string& backend,
                  const Schedule& schedule,
                  uint64_t bytes,
                  int warmup,
                  int iters,
                  const std::vector<std::string>& ns3Args)
{
    ConfigureSimulator(sc, ns3Args);
    const ExecutorConfig cfg = ns3::ExecutorConfigFromAttributes();
    std::unique_ptr<ns3::FabricTopologyHelper> fabric;
    std::unique_ptr<Transport> analytical;
    std::unique_ptr<ns3::FabricCollectiveHelper> helper;
    if (backend == "analytical")
    {
        AnalyticalOptions ao;
        ao.m_mtuBytes = sc.transport.mtuBytes;
        ao.m_ackInterval = sc.transport.ackInterval;
        ao.m_messageOverheadPs = ns3::AnalyticalOverheadFromAttributes();
        analytical = std::make_unique<AnalyticalTransport>(sc.topology, ao);
        helper = std::make_unique<ns3::FabricCollectiveHelper>(*analytical);
    }
    else
    {
        ns3::ObjectFactory cc = CcFactory(CollectiveCcName(sc), sc.file, "transport.cc");
        fabric = InstallFabric(sc);
        helper = std::make_unique<ns3::FabricCollectiveHelper>(*fabric);
        helper->SetCongestionControl(cc);
        helper->SetPriority(sc.transport.priority);
        helper->SetStopTime(ns3::PicoSeconds(StopPs(sc)));
    }
    helper->SetExecutorConfig(cfg);

    const ns3::CollectiveRunResult r = helper->Run(schedule, bytes, warmup, iters);
    CollectiveMeasurement m;
    m.m_complete = r.complete;
    m.m_iterationUs = r.iterationUs;
    m.m_timeUs = r.timeUs;
    m.m_last = r.last;
    m.m_stuckReport = r.stuckReport;
    if (fabric)
    {
        ns3::FabricTotals totals = ns3::FabricStatsHelper(*fabric).Collect();
        m.m_fabric = {{"drops", totals.dropsTotal},
                      {"pfc_pauses_sent", totals.pfcPauseSent},
                      {"ecn_marked", totals.ecnMarked},
                      {"cnps_sent", totals.cnpsSent},
                      {"retransmitted_packets", totals.retransmittedPackets},
                      {"timeouts", totals.timeouts},
                      {"max_queue_bytes", totals.maxQueueBytes},
                      {"conserved", totals.Conserved()}};
        helper.reset();
        fabric.reset();
        ns3::Simulator::Destroy();
    }
    return m;
}

} // namespace fabricsim
