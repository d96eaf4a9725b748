/*
 * The one way a command builds its backend from a scenario: the packet-level fabric (ns-3 NICs,
 * switches, congestion control) or the analytical flow model, each carrying the scenario's
 * transport (MTU, ACK interval, per-message overhead, data priority and its congestion control)
 * and one watchdog rule, with the collectives helper over it. `run`, `collective`, `replay` and
 * `calibrate` all build their backend here, so the two backends cannot drift apart from one
 * command to the next (the analytical one in `run` once ignored the MTU).
 */
#ifndef FABRICSIM_FABRIC_BACKEND_H
#define FABRICSIM_FABRIC_BACKEND_H

#include "analytical-transport.h"
#include "fabric-scenario.h"

#include "ns3/fabric-collective-helper.h"
#include "ns3/fabric-topology-helper.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace fabricsim
{

enum class BackendKind
{
    kPacket,     ///< ns-3 packet-level fabric
    kAnalytical, ///< flow-level max-min model (AnalyticalTransport)
};

/// "packet" or "analytical"; InputError naming \p file and \p field otherwise.
BackendKind ParseBackendKind(const std::string& name,
                             const std::string& file,
                             const std::string& field);
std::string ToString(BackendKind kind);

/// The analytical model's wire accounting for a scenario: its MTU and ACK interval, and the
/// per-message overhead of ns3::AnalyticalBackend (read after ConfigureSimulator applied the
/// scenario's attributes and --ns3:: overrides).
AnalyticalOptions AnalyticalOptionsFor(const FabricScenario& sc);

/// Idle analytical copies of the scenario's fabric, on which "auto" times its candidate
/// algorithms (CollectiveOptions::m_probe): the choice NCCL's tuner makes by a cost model, made
/// here by the flow model whichever backend then runs the call.
std::function<std::unique_ptr<Transport>()> AutoProbe(const FabricScenario& sc);

/// The packet backend's stop time: the scenario's stop_ns when it sets one, else none (0).
int64_t WatchdogPs(const FabricScenario& sc);

/// The packet backend's stall watchdog: with messages in flight and none delivered for this
/// long (100 simulated seconds), unfinished work is reported stuck rather than run forever. A
/// run as long as its workload makes it (a serving replay of minutes) is never cut short.
constexpr int64_t kStallWatchdogPs = int64_t(100) * 1000000000000LL;

/// Congestion control of the scenario's data priority (cc_per_priority, else transport.cc).
std::string CollectiveCcName(const FabricScenario& sc);

/**
 * A scenario's backend: applies its simulator settings and attribute overrides (\p ns3Args are
 * "--ns3::Type::Attr=value" strings, which win), then builds the fabric or the analytical
 * model and the collectives helper over it, with the executor tunables of the
 * ns3::CollectiveExecutor attributes. Only one packet backend may exist at a time (ns-3 has one
 * simulator); destroying it destroys the simulator.
 */
class FabricBackend
{
  public:
    FabricBackend(const FabricScenario& sc,
                  BackendKind kind,
                  const std::vector<std::string>& ns3Args = {});
    ~FabricBackend();

    FabricBackend(const FabricBackend&) = delete;
    FabricBackend& operator=(const FabricBackend&) = delete;

    BackendKind Kind() const
    {
        return m_kind;
    }

    /// The collectives helper (Run, the Collective API, the event loop) over this backend.
    ns3::FabricCollectiveHelper& Collectives()
    {
        return *m_helper;
    }

    /// The transport under the helper.
    Transport& GetTransport()
    {
        return m_helper->GetTransport();
    }

    /// The installed fabric, or nullptr on the analytical backend.
    ns3::FabricTopologyHelper* Fabric() const
    {
        return m_fabric.get();
    }

    /// Events run so far: ns-3's on the packet backend, the flow model's on the analytical one.
    uint64_t EventCount() const;

  private:
    BackendKind m_kind;
    std::unique_ptr<ns3::FabricTopologyHelper> m_fabric;
    std::unique_ptr<AnalyticalTransport> m_analytical;
    std::unique_ptr<ns3::FabricCollectiveHelper> m_helper; // last: goes before what it uses
};

} // namespace fabricsim

#endif
