#include "collective-measure.h"

#include "analytical-transport.h"
#include "executor-attributes.h"
#include "fabric-setup.h"
#include "packet-transport.h"

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
    const uint32_t first = topo.nodes[topo.hosts[0]].group;
    int local = 0;
    while (local < ranks && topo.nodes[topo.hosts[local]].group == first)
    {
        local++;
    }
    if (local < 2 || ranks % local != 0)
    {
        return 0;
    }
    auto group = [&](int r)
    {
        return topo.nodes[topo.hosts[r]].group;
    };
    for (int r = 0; r < ranks; ++r)
    {
        const int lead = r - r % local;
        // Same server as its server's first rank, and a different server from the previous one.
        if (group(r) != group(lead) || (lead > 0 && group(lead) == group(lead - local)))
        {
            return 0;
        }
    }
    return local;
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
    std::unique_ptr<Transport> transport;
    if (backend == "analytical")
    {
        AnalyticalOptions ao;
        ao.m_mtuBytes = sc.transport.mtuBytes;
        ao.m_ackInterval = sc.transport.ackInterval;
        ao.m_messageOverheadPs = ns3::AnalyticalOverheadFromAttributes();
        transport = std::make_unique<AnalyticalTransport>(sc.topology, ao);
    }
    else
    {
        ns3::ObjectFactory cc = CcFactory(CollectiveCcName(sc), sc.file, "transport.cc");
        fabric = InstallFabric(sc);
        PacketTransportOptions po;
        po.m_priority = sc.transport.priority;
        po.m_stopPs = StopPs(sc);
        transport = std::make_unique<PacketTransport>(*fabric, cc, po);
    }

    CollectiveMeasurement m;
    m.m_complete = true;
    for (int i = 0; i < warmup + iters && m.m_complete; ++i)
    {
        Executor ex(*transport, schedule, cfg);
        ex.Start(bytes);
        transport->Run();
        m.m_last = ex.Result();
        if (!m.m_last.m_complete)
        {
            m.m_complete = false;
            m.m_stuckReport = m.m_last.StuckReport();
            if (auto* pt = dynamic_cast<PacketTransport*>(transport.get()))
            {
                for (const std::string& line : pt->InFlightReport())
                {
                    m.m_stuckReport += "  undelivered: " + line + "\n";
                }
                if (pt->StoppedByWatchdog())
                {
                    m.m_stuckReport
                        += "  stopped at the watchdog (stop_ns) with transfers still in flight\n";
                }
            }
        }
        else if (i >= warmup)
        {
            m.m_iterationUs.push_back(double(m.m_last.DurationPs()) * 1e-6);
        }
    }
    double sum = 0;
    for (double t : m.m_iterationUs)
    {
        sum += t;
    }
    m.m_timeUs = m.m_iterationUs.empty() ? 0 : sum / double(m.m_iterationUs.size());
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
        transport.reset();
        fabric.reset();
        ns3::Simulator::Destroy();
    }
    return m;
}

} // namespace fabricsim
