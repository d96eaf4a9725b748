#include "fabric-backend.h"

#include "executor-attributes.h"
#include "fabric-setup.h"
#include "input-error.h"

#include "ns3/simulator.h"

namespace fabricsim
{

BackendKind
ParseBackendKind(const std::string& name, const std::string& file, const std::string& field)
{
    if (name == "packet")
    {
        return BackendKind::kPacket;
    }
    if (name == "analytical")
    {
        return BackendKind::kAnalytical;
    }
    throw InputError(file, field, "packet or analytical", "\"" + name + "\"");
}

std::string
ToString(BackendKind kind)
{
    return kind == BackendKind::kPacket ? "packet" : "analytical";
}

AnalyticalOptions
AnalyticalOptionsFor(const FabricScenario& sc)
{
    AnalyticalOptions ao;
    ao.m_mtuBytes = sc.transport.mtuBytes;
    ao.m_ackInterval = sc.transport.ackInterval;
    ao.m_messageOverheadPs = ns3::AnalyticalOverheadFromAttributes();
    return ao;
}

std::function<std::unique_ptr<Transport>()>
AutoProbe(const FabricScenario& sc)
{
    return AnalyticalProbe(sc.topology, AnalyticalOptionsFor(sc));
}

int64_t
WatchdogPs(const FabricScenario& sc)
{
    // stop_ns is range-checked where it is read (below 2^63 ps).
    return sc.stopGiven ? int64_t(sc.stopNs) * 1000 : 0;
}

std::string
CollectiveCcName(const FabricScenario& sc)
{
    auto it = sc.transport.ccPerPriority.find(sc.transport.priority);
    return it != sc.transport.ccPerPriority.end() ? it->second : sc.transport.cc;
}

FabricBackend::FabricBackend(const FabricScenario& sc,
                             BackendKind kind,
                             const std::vector<std::string>& ns3Args)
    : m_kind(kind)
{
    ConfigureSimulator(sc, ns3Args);
    if (kind == BackendKind::kPacket)
    {
        // Checked before the fabric exists: an unknown name is bad input, not a half-built run.
        ns3::ObjectFactory cc = CcFactory(CollectiveCcName(sc), sc.file, "transport.cc");
        m_fabric = InstallFabric(sc);
        m_helper = std::make_unique<ns3::FabricCollectiveHelper>(*m_fabric);
        m_helper->SetCongestionControl(cc);
        m_helper->SetPriority(sc.transport.priority);
        m_helper->SetStopTime(ns3::PicoSeconds(WatchdogPs(sc)));
        m_helper->SetStallTime(ns3::PicoSeconds(kStallWatchdogPs));
    }
    else
    {
        AnalyticalOptions ao = AnalyticalOptionsFor(sc); // the probes "auto" times stay uncapped
        ao.m_stopPs = WatchdogPs(sc);
        m_analytical = std::make_unique<AnalyticalTransport>(sc.topology, ao);
        m_helper = std::make_unique<ns3::FabricCollectiveHelper>(*m_analytical, &sc.topology);
    }
    m_helper->SetExecutorConfig(ns3::ExecutorConfigFromAttributes());
}

uint64_t
FabricBackend::EventCount() const
{
    return m_analytical ? m_analytical->EventsRun() : ns3::Simulator::GetEventCount();
}

FabricBackend::~FabricBackend()
{
    m_helper.reset();
    m_analytical.reset();
    if (m_fabric)
    {
        m_fabric.reset();
        ns3::Simulator::Destroy();
    }
}

} // namespace fabricsim
