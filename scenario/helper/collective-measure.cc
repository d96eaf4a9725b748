#include "collective-measure.h"

#include "fabric-backend.h"

#include "ns3/fabric-collective-helper.h"
#include "ns3/fabric-stats-helper.h"

namespace fabricsim
{

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
                  BackendKind backend,
                  const Schedule& schedule,
                  uint64_t bytes,
                  int warmup,
                  int iters,
                  const std::vector<std::string>& ns3Args)
{
    FabricBackend fb(sc, backend, ns3Args);
    ns3::FabricCollectiveHelper& helper = fb.Collectives();
    const ns3::CollectiveRunResult r = helper.Run(schedule, bytes, warmup, iters);
    CollectiveMeasurement m;
    m.m_complete = r.complete;
    m.m_iterationUs = r.iterationUs;
    m.m_timeUs = r.timeUs;
    m.m_last = r.last;
    m.m_stuckReport = r.stuckReport;
    m.m_reachedStopTime = r.reachedStopTime;
    if (ns3::FabricTopologyHelper* fabric = fb.Fabric())
    {
        ns3::FabricTotals totals = ns3::FabricStatsHelper(*fabric).Collect();
        m.m_fabric = {{"drops", totals.dropsTotal},
                      {"pfc_pauses_sent", totals.pfcPauseSent},
                      {"ecn_marked", totals.ecnMarked},
                      {"cnps_sent", totals.cnpsSent},
                      {"retransmitted_packets", totals.retransmittedPackets},
                      {"timeouts", totals.timeouts},
                      {"qp_failures", totals.qpFailures},
                      {"max_queue_bytes", totals.maxQueueBytes},
                      {"conserved", totals.Conserved()}};
    }
    return m;
}

} // namespace fabricsim
