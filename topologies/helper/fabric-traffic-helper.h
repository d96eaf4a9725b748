/*
 * Starts RDMA WRITE flows on an installed fabric (one QP per flow, source ports allocated per
 * host pair), records their completion times against the ideal FCT, and reports when every flow
 * has finished so a run can end early instead of idling to its stop time.
 */
#ifndef FABRICSIM_FABRIC_TRAFFIC_HELPER_H
#define FABRICSIM_FABRIC_TRAFFIC_HELPER_H

#include "fabric-topology-helper.h"

#include <nlohmann/json.hpp>

#include <iosfwd>
#include <map>
#include <vector>

namespace ns3
{

struct FlowRecord
{
    uint32_t id = 0;
    uint32_t src = 0;
    uint32_t dst = 0;
    uint16_t sport = 0;
    uint8_t priority = 3;
    uint64_t sizeBytes = 0;
    Time start;
    Time finish; ///< zero until complete (sender saw the last ACK)
    Time ideal;
    bool done = false;
    Ptr<RdmaQueuePair> qp;
};

/// A flow's loss-recovery counters and what was left of it: its sender's (on the sender's rank
/// of a distributed run) and its receiver's (on the receiver's).
struct FlowCounters
{
    uint64_t pendingBytes = 0;
    bool failed = false;
    std::string failure;
    uint64_t retransmits = 0;
    uint64_t retransmitBytes = 0;
    uint64_t timeouts = 0;
    uint64_t nacksReceived = 0;
    uint64_t nacksSent = 0;          ///< by the receiver
    uint64_t outOfOrderBuffered = 0; ///< by the receiver
};

class FabricTrafficHelper
{
  public:
    explicit FabricTrafficHelper(FabricTopologyHelper& fabric);

    /**
     * A flow of `bytes` from src to dst starting at `start`. The QP is connected now (as a
     * pre-established RC connection) and the WRITE is posted at `start`.
     * \returns the flow id
     */
    uint32_t AddFlow(uint32_t src,
                     uint32_t dst,
                     uint64_t bytes,
                     Time start,
                     uint8_t priority,
                     const ObjectFactory& cc);

    /// Called once when every added flow this process simulates the sender of (every flow, but
    /// on a rank of a distributed run) has completed or failed (its QP's retry limit ran out).
    void SetAllDoneCallback(Callback<void> cb);

    /// Flows whose sender this process simulates (all of them but on a distributed run).
    uint32_t LocalFlows() const
    {
        return m_localFlows;
    }

    const std::vector<FlowRecord>& GetFlows() const
    {
        return m_flows;
    }

    uint32_t CompletedFlows() const
    {
        return m_completed;
    }

    /// Flows whose QP failed (retry limit exhausted): reported, never waited for.
    uint32_t FailedFlows() const
    {
        return m_failed;
    }

    /**
     * This rank's side of every flow, for a run across MPI ranks: the completion, the pending
     * bytes and the sender's counters of the flows whose sender it simulates, and the receiver's
     * counters of those whose receiver it simulates.
     */
    nlohmann::json LocalOutcomes() const;

    /**
     * Takes every rank's LocalOutcomes (each flow's sender side once, its receiver side once):
     * the outputs below then describe the whole run. Throws std::runtime_error when a side is
     * missing or given twice.
     */
    void ApplyOutcomes(const std::vector<nlohmann::json>& parts);

    // Outputs as `fabricsim run` writes them, so scenario programs and the CLI agree.

    /// fct.csv: a header and one row per completed flow (HPCC-style columns plus slowdown).
    void WriteFctCsv(std::ostream& os) const;

    /// summary.json's "flows": every flow with fct_ns and slowdown, or fct_ns null and the
    /// bytes still pending when it did not finish (with "failed": why, when its QP failed), and
    /// its loss-recovery counters (retransmitted packets and bytes, timeouts, NAKs received and
    /// sent by its receiver, packets its receiver held out of order).
    nlohmann::json FlowsJson() const;

    /// fct / ideal of every completed flow, in flow order.
    std::vector<double> Slowdowns() const;

    /// Nearest-rank percentile `q` in (0, 1] of `v`; 0 when `v` is empty.
    static double Percentile(std::vector<double> v, double q);

  private:
    void Start(uint32_t id);
    void Done(uint32_t id, uint64_t msgId);
    void Failed(uint32_t id);
    void Finished();
    /// The flow's counters: gathered (ApplyOutcomes) or read from its queue pairs.
    FlowCounters CountersOf(const FlowRecord& f) const;

    FabricTopologyHelper& m_fabric;
    std::vector<FlowRecord> m_flows;
    std::map<std::pair<uint32_t, uint32_t>, uint16_t> m_nextPort;
    uint32_t m_localFlows = 0;
    uint32_t m_completed = 0;
    uint32_t m_failed = 0;
    Callback<void> m_allDone;
    std::vector<FlowCounters> m_gathered; ///< every flow's, once ApplyOutcomes ran
};

} // namespace ns3

#endif
