/*
 * Observes an installed fabric: PFC event log, periodic monitor samples (CSV: queue lengths,
 * link utilisation, per-QP rates and CNPs, PFC pause state), and the end-of-run totals (drops
 * by reason, PFC frames, queue max and p99, frame conservation). Everything is read from per-device
 * counters and merged at the end.
 */
#ifndef FABRICSIM_FABRIC_STATS_HELPER_H
#define FABRICSIM_FABRIC_STATS_HELPER_H

#include "fabric-topology-helper.h"
#include "fabric-totals.h"

#include <nlohmann/json.hpp>

#include <array>
#include <map>
#include <ostream>
#include <sstream>

namespace ns3
{

/// Where each monitor series goes; a null stream leaves that series out.
struct MonitorStreams
{
    std::ostream* queues = nullptr;     ///< time_ns,node,port,priority,bytes (non-empty queues)
    std::ostream* links = nullptr;      ///< time_ns,node,port,utilisation (busy links)
    std::ostream* qpRates = nullptr;    ///< time_ns,host,qpn,dst,sport,priority,rate_gbps
    std::ostream* cnps = nullptr;       ///< time_ns,host,qpn,dst,sport,cnps,cnps_total
    std::ostream* pauseState = nullptr; ///< time_ns,node,port,priority,paused_ns
};

class FabricStatsHelper
{
  public:
    explicit FabricStatsHelper(FabricTopologyHelper& fabric);

    /**
     * Log every PFC frame sent by any port: time_ns,node,port,priority,event. The header goes
     * out now, the rows at WritePfcLog, ordered by time (to the picosecond), node, port and
     * priority: an order no partition of the run across ranks changes.
     */
    void EnablePfcLog(std::ostream* os);

    /// This rank's rows, and another rank's added (a run across MPI ranks).
    nlohmann::json PfcLogPart() const;
    void AddPfcLogPart(const nlohmann::json& rows);

    /// Writes the rows (call once, after the run).
    void WritePfcLog();

    /**
     * Sample every `interval` from `start` to `end` into the streams given (each gets a CSV
     * header now): non-empty egress queues per (port, priority); link utilisation over the last
     * interval (wire bytes, busy links only); the congestion-control rate of every QP with
     * unacknowledged data; CNPs each QP received in the interval and in all (QPs that got
     * some); and every (port, priority) its peer pauses, with how long it has been paused.
     * Nothing is scheduled unless some stream is given and `interval` > 0.
     */
    void EnableMonitor(const MonitorStreams& streams, Time interval, Time start, Time end);

    /// Queue and link series only (the original form).
    void EnableMonitor(
        std::ostream* queues, std::ostream* links, Time interval, Time start, Time end);

    /**
     * For a run across MPI ranks (call before EnableMonitor): each rank samples its own devices
     * and NICs and keeps the rows, each keyed by the sample time and the place of its device or
     * queue pair in the whole fabric; MonitorPart hands them over and WriteMonitor, on the rank
     * that writes, merges every rank's into the streams in the order one process writes them.
     */
    void SetAcrossRanks();
    nlohmann::json MonitorPart() const;
    void WriteMonitor(const std::vector<nlohmann::json>& parts);

    /**
     * Take a last sample at the current time (call after the run) when the window is open and
     * time moved since the previous sample, so that per-interval counts add up to run totals.
     */
    void FinishMonitor();

    /// The totals of the whole fabric (Collect) or, on a rank of a distributed run, this
    /// process's share of them (CollectPart: its nodes, its copies of the links) to be merged.
    FabricTotals Collect() const;
    FabricTotalsPart CollectPart() const;

    /**
     * PFC watchdog results for summary.json: total triggers and, per (switch, port, priority)
     * that triggered, the count, the first time and how long the queue had been paused then.
     */
    nlohmann::json WatchdogJson() const;

    /// This rank's share of WatchdogJson (its switches' records), and the whole from every
    /// rank's share (a run across MPI ranks).
    nlohmann::json WatchdogPart() const;
    static nlohmann::json MergeWatchdog(const std::vector<nlohmann::json>& parts);

    /// A deadlock report in summary.json form, with switch and host names.
    nlohmann::json DeadlockJson(const DeadlockReport& r) const;

    /// A deadlock report as one line for people.
    std::string DeadlockText(const DeadlockReport& r) const;

  private:
    /// Adds \p dev's counters to \p t.
    static void AddDevice(const FabricNetDevice& dev, FabricTotals& t);
    /// "sw1 port 2" or "host4" for the peer of a deadlock hop.
    std::string PeerName(const DeadlockHop& h) const;
    void Sample();
    void SampleOnce();
    void SampleQps(int64_t t);
    /// Where a row of \p series goes: \p stream, or (across ranks) that series' keyed rows.
    std::ostream& Row(std::ostream* stream, int series, uint32_t a, uint32_t b, uint32_t c);
    void PfcTx(uint32_t node, uint32_t port, uint8_t prio, uint16_t quanta);

    struct PfcRow
    {
        int64_t ps;
        uint32_t node;
        uint32_t port;
        uint8_t prio;
        bool pause;
    };

    FabricTopologyHelper& m_fabric;
    std::ostream* m_pfcLog = nullptr;
    std::vector<PfcRow> m_pfcRows;
    MonitorStreams m_mon;
    Time m_interval;
    Time m_end;
    Time m_lastSample = Time(-1); ///< negative until the first sample
    std::vector<uint64_t> m_lastTxBytes;
    std::vector<std::pair<uint32_t, uint32_t>> m_portIds; ///< (node, port) per monitored device
    std::vector<Ptr<FabricNetDevice>> m_devices;
    std::vector<Ptr<RdmaNic>> m_nics;
    std::vector<std::vector<uint64_t>> m_lastCnps; ///< per NIC, per QP
    std::vector<uint32_t> m_deviceOrder; ///< per monitored device: its place in the fabric's
    std::vector<uint32_t> m_nicOrder;    ///< per monitored NIC: its place in GetAllNics
    bool m_keyed = false;
    /// Across ranks: rows of queues, links, qp rates, CNPs and pause state, keyed.
    std::array<std::ostringstream, 5> m_keyedRows;
};

} // namespace ns3

#endif
