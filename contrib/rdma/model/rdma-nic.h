/*
 * RoCEv2 NIC port as an ns-3 NetDevice: queue pairs carrying RDMA WRITEs, per-QP pacing at the
 * congestion-control rate, a strict-priority control queue (ACK/NACK/CNP), round-robin among
 * eligible QPs, optional in-flight window (or IRN's BDP cap), PFC reaction, loss recovery by
 * go-back-N or selective repeat with NAKs and a retransmission timeout that backs off up to a
 * retry limit (then the QP fails, as a NIC's QP goes to the error state), and
 * receiver-generated CNPs rate-limited per QP.
 */
#ifndef FABRICSIM_RDMA_NIC_H
#define FABRICSIM_RDMA_NIC_H

#include "fabric-net-device.h"
#include "rdma-queue-pair.h"

#include "ns3/object-factory.h"
#include "ns3/random-variable-stream.h"

#include <deque>
#include <vector>

namespace ns3
{

/**
 * \brief A RoCEv2 NIC port.
 */
class RdmaNic : public FabricNetDevice
{
  public:
    static TypeId GetTypeId();
    RdmaNic();

    /// Signature of the CnpReceived (qpn, destination host) and Retransmit (qpn, first PSN) traces.
    typedef void (*QpTracedCallback)(uint32_t qpn, uint32_t value);
    ~RdmaNic() override;

    /// QPNs 0 and 1 are InfiniBand's management QPs (SMI, GSI): data QPs are numbered from 2,
    /// so that Wireshark decodes every data frame as RC traffic.
    static constexpr uint32_t kFirstQpn = 2;

    /// Fixes the random stream of the timeout jitter (ns-3's AssignStreams); returns 1.
    int64_t AssignStreams(int64_t stream);

    /// The timeout armed after \p retries timeouts in a row: RetransmitTimeout x
    /// RetransmitBackoff^retries, at most RetransmitTimeoutMax; the jitter then scales it by
    /// U[1, 1 + RetransmitJitter].
    Time RetransmitTimeoutAfter(uint32_t retries) const;

    /// Host index this port belongs to (addresses are derived from it).
    void SetHostIndex(uint32_t host);
    uint32_t GetHostIndex() const;

    /**
     * Open a reliable connection to `dst` and return the sender-side QP. The receiver state is
     * created on `dst` (connection set-up happens out of band, as with RDMA CM).
     * \param cc congestion-control instance for this QP (Init is called here)
     * \param baseRtt base round-trip time of the path (for windows and CC)
     * \param onDelivered receiver-side callback per whole message delivered in order
     */
    Ptr<RdmaQueuePair> Connect(Ptr<RdmaNic> dst,
                               uint8_t priority,
                               uint16_t sport,
                               Ptr<CongestionControl> cc,
                               Time baseRtt,
                               Callback<void, uint64_t> onDelivered = Callback<void, uint64_t>());

    /// Called by a QP when it has new data.
    void Activate(RdmaQueuePair* qp);

    uint8_t GetControlPriority() const
    {
        return m_ctrlPriority;
    }

    const std::vector<Ptr<RdmaQueuePair>>& GetQueuePairs() const
    {
        return m_qps;
    }

    const std::vector<RdmaRxQueuePair>& GetRxQueuePairs() const
    {
        return m_rxQps;
    }

    uint64_t GetCnpsSent() const
    {
        return m_cnpsSent;
    }

    uint64_t GetCnpsReceived() const
    {
        return m_cnpsReceived;
    }

    uint64_t GetNacksSent() const
    {
        return m_nacksSent;
    }

    /// Packets the receiver side held out of order (selective repeat).
    uint64_t GetOutOfOrderBuffered() const
    {
        return m_outOfOrderBuffered;
    }

    uint64_t GetDataFramesDelivered() const
    {
        return m_dataDelivered;
    }

    uint64_t GetDataBytesDelivered() const
    {
        return m_dataBytesDelivered;
    }

    uint64_t QueuedFrames() const override;
    uint64_t QueuedBytes() const override;

    /// At rest: no control frame queued, every queue pair idle with no timer armed, every
    /// receiver with nothing held; the digest holds the queue pairs and their congestion
    /// control.
    void ProbeRest(MemoProbe& probe) const override;
    void VisitMemo(MemoRecord& record) override;

  protected:
    void DoDispose() override;
    FabricPacket* DequeueNext(Time now, Time& wakeAt) override;
    bool HasPendingWork() const override;
    void HandleReceive(FabricPacket* p) override;

  private:
    FabricPacket* MakeDataPacket(RdmaQueuePair* qp);
    void ReceiveData(FabricPacket* p);
    void ReceiveAck(FabricPacket* p);
    void ReceiveNack(FabricPacket* p);
    void ReceiveCnp(FabricPacket* p);
    void SendControl(FrameType type,
                     const RdmaRxQueuePair& rx,
                     uint32_t psn,
                     const FabricPacket* cause);
    void AdvanceUna(RdmaQueuePair* qp, uint32_t psn);
    void DeliverInOrder(RdmaRxQueuePair& rx,
                        uint32_t payload,
                        bool last,
                        std::vector<uint64_t>& messages);
    void ArmRto(RdmaQueuePair* qp);
    void RtoFired(RdmaQueuePair* qp);
    void Fail(RdmaQueuePair* qp, const std::string& why);
    Time DrawRto(uint32_t retries);
    Time DeadlineAfter(Time rto) const;
    RdmaQueuePair* TxQp(uint32_t qpn, const char* what) const;
    void CcUpdated(RdmaQueuePair* qp);
    uint64_t WindowOf(const RdmaQueuePair* qp) const;

    uint32_t m_host;
    uint8_t m_ctrlPriority;
    uint32_t m_ackInterval;
    Time m_cnpInterval;
    Time m_nackInterval;
    Time m_rto;
    double m_rtoBackoff;
    Time m_rtoMax;
    double m_rtoJitter;
    uint32_t m_retryLimit;
    LossRecovery m_lossRecovery;
    bool m_useWindow;
    bool m_bdpCap;
    Ptr<UniformRandomVariable> m_rng; ///< RTO jitter (made at the first draw)
    int64_t m_jitterStream = -1;      ///< its stream (-1: ns-3 picks one)

    std::vector<Ptr<RdmaQueuePair>> m_qps; ///< by QPN
    std::vector<RdmaRxQueuePair> m_rxQps;  ///< by QPN
    std::vector<RdmaQueuePair*> m_active;  ///< QPs with data to send
    size_t m_rr;
    std::deque<FabricPacket*> m_ctrl;
    uint64_t m_uid;

    uint64_t m_cnpsSent = 0;
    uint64_t m_cnpsReceived = 0;
    uint64_t m_nacksSent = 0;
    uint64_t m_outOfOrderBuffered = 0;
    uint64_t m_dataDelivered = 0;
    uint64_t m_dataBytesDelivered = 0;
    uint64_t m_rtoDraws = 0; ///< timeout jitter drawn (a replay cannot draw the same values)

    TracedCallback<uint32_t, uint32_t> m_cnpRxTrace;      ///< qpn, dst host
    TracedCallback<uint32_t, uint32_t> m_retransmitTrace; ///< qpn, from psn
};

} // namespace ns3

#endif
