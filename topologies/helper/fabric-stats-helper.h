/*
 * Observes an installed fabric: PFC event log, periodic queue-length and link-utilisation
 * samples (CSV), and the end-of-run totals (drops by reason, PFC frames, queue max and p99,
 * frame conservation). Everything is read from per-device counters and merged at the end.
 */
#ifndef FABRICSIM_FABRIC_STATS_HELPER_H
#define FABRICSIM_FABRIC_STATS_HELPER_H

#include "fabric-topology-helper.h"

#include <nlohmann/json.hpp>

#include <map>
#include <ostream>

namespace ns3
{

struct FabricTotals
{
    std::map<std::string, uint64_t> dropsByReason; ///< all DropReason names, zeros included
    uint64_t dropsTotal = 0;
    uint64_t pfcPauseSent = 0;
    uint64_t pfcResumeSent = 0;
    uint64_t pfcPauseReceived = 0;
    uint64_t pfcResumeReceived = 0;
    uint64_t maxQueueBytes = 0;
    uint64_t p99QueueBytes = 0;
    uint64_t p95QueueBytes = 0;
    uint64_t ecnMarked = 0;
    uint64_t cnpsSent = 0;
    uint64_t cnpsReceived = 0;
    uint64_t nacksSent = 0;
    uint64_t retransmittedPackets = 0;
    uint64_t timeouts = 0;
    // end-to-end conservation of non-PFC frames (PFC frames are hop-local)
    uint64_t sentFrames = 0;
    uint64_t deliveredFrames = 0;
    uint64_t droppedFrames = 0;
    uint64_t inFlightFrames = 0;
    uint64_t sentBytes = 0;
    uint64_t deliveredBytes = 0;
    uint64_t droppedBytes = 0;
    uint64_t inFlightBytes = 0;

    bool Conserved() const
    {
        return sentFrames == deliveredFrames + droppedFrames + inFlightFrames &&
               sentBytes == deliveredBytes + droppedBytes + inFlightBytes;
    }

    nlohmann::json ToJson() const;
};

class FabricStatsHelper
{
  public:
    explicit FabricStatsHelper(FabricTopologyHelper& fabric);

    /// Log every PFC frame sent by any port: time_ns,node,port,priority,event.
    void EnablePfcLog(std::ostream* os);

    /**
     * Sample every `interval` from `start` to `end`: non-empty queues per (port, priority) to
     * `queues` (time_ns,node,port,priority,bytes) and busy links to `links`
     * (time_ns,node,port,utilisation).
     */
    void EnableMonitor(std::ostream* queues, std::ostream* links, Time interval, Time start, Time end);

    FabricTotals Collect() const;

  private:
    void Sample();
    void PfcTx(uint32_t node, uint32_t port, uint8_t prio, uint16_t quanta);

    FabricTopologyHelper& m_fabric;
    std::ostream* m_pfcLog = nullptr;
    std::ostream* m_qlog = nullptr;
    std::ostream* m_llog = nullptr;
    Time m_interval;
    Time m_end;
    std::vector<uint64_t> m_lastTxBytes;
    std::vector<std::pair<uint32_t, uint32_t>> m_portIds; ///< (node, port) per monitored device
    std::vector<Ptr<FabricNetDevice>> m_devices;
};

} // namespace ns3

#endif
