/*
 * A fabric scenario: the parsed, validated form of scenario.json (topology, transport, switch,
 * traffic, link events, pcap, monitors). Parsing checks every key and value and throws
 * fabricsim::InputError (file, field, expected, found) before anything is built or written.
 */
#ifndef FABRICSIM_FABRIC_SCENARIO_H
#define FABRICSIM_FABRIC_SCENARIO_H

#include "file-reader.h"
#include "topology.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace fabricsim
{

struct FlowSpec
{
    uint32_t src = 0;
    uint32_t dst = 0;
    uint64_t sizeBytes = 0;
    uint64_t startNs = 0;
    int priority = -1; ///< -1 = transport default
    std::string cc;    ///< empty = transport default
    std::string tag;   ///< "explicit", "poisson", "incast", "file"
};

struct PoissonSpec
{
    std::string cdfPath;
    double load = 0.3; ///< fraction of host link capacity
    uint64_t startNs = 0;
    uint64_t durationNs = 0;
    std::vector<uint32_t> hosts; ///< empty = all
};

struct IncastSpec
{
    uint32_t receiver = 0;
    std::vector<uint32_t> senders;
    uint64_t sizeBytes = 0;
    uint64_t startNs = 0;
    /// >0: repeat as a background load (fraction of the receiver's link) until the end.
    double load = 0;
    uint64_t durationNs = 0;
};

struct LinkEvent
{
    uint32_t link = 0;
    uint64_t atNs = 0;
    bool up = false;
};

struct TransportSpec
{
    std::string cc = "dcqcn";
    /// CC per priority class ("cc_per_priority": {"5": "hpcc"}); a flow's own "cc" wins over it
    std::map<uint8_t, std::string> ccPerPriority;
    uint32_t mtuBytes = 1000;
    bool pfc = true;
    uint8_t priority = 3;
    uint32_t ackInterval = 1;
    uint64_t rtoNs = 1000000;
    uint64_t cnpIntervalNs = 50000;
    bool window = false;
    /// Loss recovery (RdmaNic attributes, docs/congestion-control.md)
    std::string lossRecovery = "go-back-n"; ///< or "selective"
    double rtoBackoff = 2.0;                ///< timeout growth per retry (1: fixed)
    uint64_t rtoMaxNs = 4294967296;         ///< backoff cap (4.096 us x 2^20)
    double rtoJitter = 1.0;                 ///< each timeout x U[1, 1 + jitter]
    uint32_t retryLimit = 7;                ///< timeouts in a row before the QP fails
    bool bdpCap = false;                    ///< IRN's BDP-FC
};

struct EcnSpec
{
    bool enabled = true;
    uint64_t kminBytes = 100000;
    uint64_t kmaxBytes = 400000;
    double pmax = 0.2;
    double perRateBps = 25e9; ///< thresholds scale with port rate relative to this (0 = absolute)
};

/// PFC watchdog of every switch ("switch.pfc_watchdog"; off unless the object is given).
struct PfcWatchdogSpec
{
    bool enabled = false;
    uint64_t pollNs = 10000000;         ///< polling interval
    uint64_t detectionNs = 200000000;   ///< paused this long with frames queued = stuck
    uint64_t restorationNs = 200000000; ///< no pause this long = normal again
    std::string action = "drop";        ///< "report", "ignore-pause" or "drop"
};

struct SwitchSpec
{
    uint64_t bufferBytes = 32ull << 20;
    double alpha = 0.125;
    uint64_t reserveBytes = 4096;
    uint64_t resumeOffsetBytes = 3072;
    uint64_t headroomBytes = 0; ///< 0 = computed per port
    uint32_t pauseQuanta = 0xffff;
    uint32_t ecmpSeed = 0;
    EcnSpec ecn;
    PfcWatchdogSpec watchdog;
};

/// Monitor time series ("monitor"): off unless interval_ns > 0; each series can be left out.
struct MonitorSpec
{
    uint64_t intervalNs = 0; ///< 0 disables the CSV time series
    uint64_t startNs = 0;
    uint64_t endNs = UINT64_MAX;
    bool queues = true;     ///< queue.csv
    bool links = true;      ///< link_util.csv
    bool qpRates = true;    ///< qp_rate.csv
    bool cnps = true;       ///< cnp.csv
    bool pauseState = true; ///< pause.csv
};

/// PFC deadlock detection ("deadlock"; runs only with PFC on).
struct DeadlockSpec
{
    uint64_t checkIntervalNs = 100000; ///< 0 disables it
    uint64_t stallNs = 1000000;        ///< nothing transmitted this long with frames queued
    bool stop = true; ///< "on_detect": "stop" ends the run (exit 3); "report" only records it
};

/// Forced next hops of a switch toward some hosts ("routes").
struct RouteOverride
{
    uint32_t node = 0; ///< topology node id of the switch
    std::vector<uint32_t> dstHosts;
    std::vector<uint16_t> ports;
};

struct FabricScenario
{
    std::string file; ///< path it was read from ("" for inline)
    std::string dir;  ///< directory for relative paths
    std::string name; ///< "name", else the file
    uint64_t seed = 1;
    uint64_t stopNs = 0;
    bool stopGiven = false; ///< "stop_ns" given: an inference run's cap (it ends with its work)
    Topology topology;
    TransportSpec transport;
    SwitchSpec sw;
    std::vector<FlowSpec>
        flows; ///< explicit and file flows (generated ones are added by the runner)
    std::vector<PoissonSpec> poisson;
    std::vector<IncastSpec> incasts;
    std::vector<LinkEvent> linkEvents;
    std::vector<uint32_t> pcapHosts;
    std::vector<std::string> pcapSwitches; ///< switch node names
    MonitorSpec monitor;
    DeadlockSpec deadlock;
    std::vector<RouteOverride> routes;
    std::vector<std::pair<std::string, std::string>> attributes; ///< ns-3 attribute defaults
};

/// Read a scenario file and apply "--set key.path=value" overrides (value parsed as JSON, else
/// taken as a string). Throws fabricsim::InputError on any problem.
nlohmann::json LoadScenarioJson(const std::string& path, const std::vector<std::string>& sets);

/// Apply one "key.path=value" override to a JSON document.
void ApplySet(nlohmann::json& doc, const std::string& assignment, const std::string& file);

/// Parse and validate the fabric part of a scenario document, a fabric or an inference
/// scenario (whose model, hardware, parallelism and serving blocks ReadScenario reads:
/// scenario.h); the top-level keys of both are checked here.
FabricScenario ParseFabricScenario(const nlohmann::json& doc, const std::string& file);

/// Parse the flow-size CDF format of the corpus ("size_bytes cumulative_percent" lines).
/// \p ref is the scenario field that named the file.
std::vector<std::pair<double, double>> LoadFlowCdf(const std::string& path,
                                                   const FileReferrer& ref);
/// Mean of a CDF under linear interpolation.
double CdfMean(const std::vector<std::pair<double, double>>& cdf);

} // namespace fabricsim

#endif
