#include "fabric-setup.h"

#include "input-error.h"
#include "json-reader.h"

#include "ns3/boolean.h"
#include "ns3/config.h"
#include "ns3/double.h"
#include "ns3/global-value.h"
#include "ns3/map-scheduler.h"
#include "ns3/rng-seed-manager.h"
#include "ns3/shared-buffer-mmu.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace fabricsim
{

using namespace ns3;

namespace
{

void
SetDefault(const std::string& name, const AttributeValue& v)
{
    Config::SetDefault(name, v);
}

/// " (did you mean ...?)" when \p path names no ns-3 attribute but one is a few edits away,
/// written as the user would write it (\p prefix "--" on the command line).
std::string
AttributeHint(const std::string& path, const std::string& prefix = "")
{
    std::vector<std::string> names;
    for (uint16_t i = 0; i < TypeId::GetRegisteredN(); ++i)
    {
        const TypeId t = TypeId::GetRegistered(i);
        for (std::size_t j = 0; j < t.GetAttributeN(); ++j)
        {
            names.push_back(prefix + t.GetName() + "::" + t.GetAttribute(j).name);
        }
    }
    if (std::find(names.begin(), names.end(), prefix + path) != names.end())
    {
        return ""; // the name is right: the value is not
    }
    return DidYouMean(prefix + path, names);
}

} // namespace

std::pair<uint32_t, uint64_t>
Ns3SeedAndRun(uint64_t seed)
{
    // MRG32k3a takes the same seed for all six of its components, so ns-3 refuses one at or past
    // its second modulus, 4294944443 (rng-stream.cc CheckSeed), and aborts.
    if (seed >= 1 && seed <= kNs3MaxSeed)
    {
        return {uint32_t(seed), 1};
    }
    const uint64_t past = seed - kNs3MaxSeed - 1; // seed 0 (refused by the reader) wraps too
    return {uint32_t(past % kNs3MaxSeed + 1), past / kNs3MaxSeed + 2};
}

ObjectFactory
SchedulerFactory()
{
    TypeIdValue chosen;
    GlobalValue::GetValueByName("SchedulerType", chosen);
    if (chosen.Get() != MapScheduler::GetTypeId())
    {
        return ObjectFactory(chosen.Get().GetName()); // the user's
    }
    // One order for simultaneous events, whatever order they were scheduled in (a binary heap,
    // as fast as ns-3's PriorityQueueScheduler: docs/performance.md).
    return ObjectFactory("ns3::FabricScheduler");
}

void
ConfigureSimulator(const FabricScenario& sc, const std::vector<std::string>& ns3Args)
{
    // Attribute defaults of an earlier run in this process do not leak; the scheduler and the
    // simulator engine chosen for the process (--SchedulerType; fabricsim-mpi's distributed
    // engine) stay, though Config::Reset resets global values too.
    const ObjectFactory scheduler = SchedulerFactory();
    TypeIdValue chosen;
    GlobalValue::GetValueByName("SchedulerType", chosen);
    StringValue engine;
    GlobalValue::GetValueByName("SimulatorImplementationType", engine);
    Config::Reset();
    GlobalValue::Bind("SchedulerType", chosen);
    GlobalValue::Bind("SimulatorImplementationType", engine);
    const auto [seed, run] = Ns3SeedAndRun(sc.seed);
    RngSeedManager::SetSeed(seed);
    RngSeedManager::SetRun(run);
    Simulator::SetScheduler(scheduler);

    const TransportSpec& t = sc.transport;
    SetDefault("ns3::RdmaNic::AckInterval", UintegerValue(t.ackInterval));
    SetDefault("ns3::RdmaNic::CnpInterval", TimeValue(NanoSeconds(t.cnpIntervalNs)));
    SetDefault("ns3::RdmaNic::RetransmitTimeout", TimeValue(NanoSeconds(t.rtoNs)));
    SetDefault("ns3::RdmaNic::UseWindow", BooleanValue(t.window));
    SetDefault("ns3::RdmaNic::LossRecovery", StringValue(t.lossRecovery));
    SetDefault("ns3::RdmaNic::RetransmitBackoff", DoubleValue(t.rtoBackoff));
    SetDefault("ns3::RdmaNic::RetransmitTimeoutMax", TimeValue(NanoSeconds(t.rtoMaxNs)));
    SetDefault("ns3::RdmaNic::RetransmitJitter", DoubleValue(t.rtoJitter));
    SetDefault("ns3::RdmaNic::RetryLimit", UintegerValue(t.retryLimit));
    SetDefault("ns3::RdmaNic::BdpCap", BooleanValue(t.bdpCap));
    const SwitchSpec& s = sc.sw;
    SetDefault("ns3::SharedBufferMmu::BufferSize", UintegerValue(s.bufferBytes));
    SetDefault("ns3::SharedBufferMmu::AlphaBase", DoubleValue(s.alpha));
    SetDefault("ns3::SharedBufferMmu::ReserveBytes", UintegerValue(s.reserveBytes));
    SetDefault("ns3::SharedBufferMmu::ResumeOffset", UintegerValue(s.resumeOffsetBytes));
    SetDefault("ns3::SharedBufferMmu::HeadroomBytes", UintegerValue(s.headroomBytes));
    SetDefault("ns3::SharedBufferMmu::PfcEnabled", BooleanValue(t.pfc));
    SetDefault("ns3::SharedBufferMmu::LosslessClasses", UintegerValue(1u << t.priority));
    SetDefault("ns3::SwitchPort::PauseQuanta", UintegerValue(s.pauseQuanta));
    SetDefault("ns3::FabricSwitch::EcmpSeed", UintegerValue(s.ecmpSeed));
    const PfcWatchdogSpec& wd = s.watchdog;
    SetDefault("ns3::PfcWatchdog::Interval",
               TimeValue(wd.enabled ? NanoSeconds(wd.pollNs) : Time(0)));
    SetDefault("ns3::PfcWatchdog::DetectionTime", TimeValue(NanoSeconds(wd.detectionNs)));
    SetDefault("ns3::PfcWatchdog::RestorationTime", TimeValue(NanoSeconds(wd.restorationNs)));
    SetDefault("ns3::PfcWatchdog::Action", StringValue(wd.action));
    SetDefault("ns3::DeadlockDetector::CheckInterval",
               TimeValue(NanoSeconds(sc.deadlock.checkIntervalNs)));
    SetDefault("ns3::DeadlockDetector::StallTime", TimeValue(NanoSeconds(sc.deadlock.stallNs)));

    for (auto& [name, value] : sc.attributes)
    {
        if (!Config::SetDefaultFailSafe(name, StringValue(value)))
        {
            throw InputError(sc.file,
                             "attributes." + name,
                             "an ns-3 attribute (ns3::Type::Name) with a valid value",
                             "\"" + value + "\"" + AttributeHint(name));
        }
    }
    for (auto& arg : ns3Args)
    {
        auto eq = arg.find('=');
        std::string name = arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
        std::string value = eq == std::string::npos ? "" : arg.substr(eq + 1);
        if (eq == std::string::npos || !Config::SetDefaultFailSafe(name, StringValue(value)))
        {
            throw InputError(
                "<command line>",
                arg,
                "--ns3::Type::Attribute=value naming an existing attribute and a valid value",
                "\"" + arg + "\"" + AttributeHint(name, "--"));
        }
    }
}

ObjectFactory
CcFactory(const std::string& name, const std::string& file, const std::string& field)
{
    return CongestionControlFactory::Get(name, file, field);
}

std::unique_ptr<FabricTopologyHelper>
InstallFabric(const FabricScenario& sc, const std::vector<uint32_t>& systemIds)
{
    auto fabric = std::make_unique<FabricTopologyHelper>(sc.topology);
    fabric->SetMtu(sc.transport.mtuBytes);
    if (!systemIds.empty())
    {
        fabric->SetSystemIds(systemIds);
    }
    EcnConfig ecn;
    ecn.enabled = sc.sw.ecn.enabled;
    ecn.kminBytes = sc.sw.ecn.kminBytes;
    ecn.kmaxBytes = sc.sw.ecn.kmaxBytes;
    ecn.pmax = sc.sw.ecn.pmax;
    ecn.refRateBps = uint64_t(sc.sw.ecn.perRateBps);
    fabric->SetEcn(ecn);
    try
    {
        fabric->Install();
    }
    catch (const BufferTooSmall& e)
    {
        // A realistic 256 x 400G switch needs more than the default 32 MiB for PFC headroom.
        throw InputError(sc.file,
                         "switch.buffer_bytes",
                         "at least " + std::to_string(e.Needed() + 1)
                             + " bytes: the per-queue reserve and PFC headroom of a "
                             + std::to_string(e.Ports())
                             + "-port switch (or a smaller switch.headroom_bytes)",
                         std::to_string(e.Buffer()));
    }
    fabric->AssignStreams(1000);
    for (auto& ev : sc.linkEvents)
    {
        fabric->ScheduleLinkState(ev.link, NanoSeconds(ev.atNs), ev.up);
    }
    return fabric;
}

} // namespace fabricsim
