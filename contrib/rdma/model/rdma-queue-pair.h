/*
 * Reliable-connection queue pair state. The sender side holds posted RDMA WRITE messages and
 * the send window (PSNs); packets are generated on demand when the NIC schedules the QP, so no
 * per-QP packet buffers exist. Loss recovery is go-back-N (RoCE's default) or selective repeat
 * (IRN and NVIDIA NICs' opt-in): then the sender keeps the PSNs the receiver reported holding
 * and resends only the others. The receiver side tracks the expected PSN, keeps out-of-order
 * packets in selective mode, and rate-limits NACKs and CNPs.
 */
#ifndef FABRICSIM_RDMA_QUEUE_PAIR_H
#define FABRICSIM_RDMA_QUEUE_PAIR_H

#include "congestion-control.h"
#include "pending-event.h"

#include "ns3/callback.h"
#include "ns3/event-id.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/traced-callback.h"

#include <deque>
#include <map>
#include <set>
#include <string>

namespace ns3
{

class RdmaNic;
struct RdmaRxQueuePair;

/// How a NIC recovers lost packets (attribute RdmaNic::LossRecovery: "go-back-n", "selective").
enum LossRecovery
{
    GO_BACK_N, ///< a NAK (PSN sequence error) or a timeout resends everything from the hole
    SELECTIVE  ///< the receiver keeps out-of-order packets; only the missing PSNs are resent
};

/// One posted RDMA WRITE.
struct RdmaMessage
{
    uint64_t id = 0;
    uint64_t bytes = 0;
    uint32_t startPsn = 0;
    uint32_t endPsn = 0; ///< one past the last PSN
    Time posted;
    Callback<void, uint64_t> onAcked; ///< called with id when fully acknowledged
};

/**
 * \brief Sender side of a reliable-connection QP.
 */
class RdmaQueuePair : public Object
{
  public:
    static TypeId GetTypeId();
    RdmaQueuePair();

    /// Signature of the MessageComplete trace source: message id, bytes, time posted.
    typedef void (*MessageCompleteCallback)(uint64_t id, uint64_t bytes, Time posted);
    /// Signature of the Failed trace source: the QP's number.
    typedef void (*FailedCallback)(uint32_t qpn);

    /**
     * Post an RDMA WRITE of `bytes` (any size > 0). `onAcked(id)` runs when the last byte is
     * acknowledged. Returns the message id (0, 1, 2, ... per QP).
     */
    uint64_t PostWrite(uint64_t bytes,
                       Callback<void, uint64_t> onAcked = Callback<void, uint64_t>());

    uint32_t GetQpn() const
    {
        return m_qpn;
    }

    uint32_t GetSrcHost() const
    {
        return m_srcHost;
    }

    uint32_t GetDstHost() const
    {
        return m_dstHost;
    }

    uint16_t GetSport() const
    {
        return m_sport;
    }

    uint8_t GetPriority() const
    {
        return m_priority;
    }

    Ptr<CongestionControl> GetCc() const
    {
        return m_cc;
    }

    Time GetBaseRtt() const
    {
        return m_baseRtt;
    }

    /// Payload bytes posted and not yet acknowledged.
    uint64_t PendingBytes() const;
    /// True when PSNs remain to be (re)transmitted (never after the QP failed).
    bool HasDataToSend() const
    {
        return !m_failed && (m_sndNxt < m_psnEnd || m_retxNext < m_retxEnd);
    }
    /// True when everything posted has been acknowledged.
    bool IsIdle() const
    {
        return m_sndUna == m_psnEnd;
    }

    /// Packets sent again (a PSN sent before), and their payload bytes.
    uint64_t GetRetransmits() const
    {
        return m_retransmitPackets;
    }

    uint64_t GetRetransmitBytes() const
    {
        return m_retransmitBytes;
    }

    /// NAKs (PSN sequence error) this QP received.
    uint64_t GetNacksReceived() const
    {
        return m_nacksReceived;
    }

    /// The receiver's side of this connection (its NAKs sent, out-of-order packets held).
    const RdmaRxQueuePair& GetReceiver() const;

    /// True once the retry limit was exhausted: the QP stops, its messages never complete.
    bool HasFailed() const
    {
        return m_failed;
    }

    /// Why the QP failed ("" while it has not).
    const std::string& GetFailure() const
    {
        return m_failure;
    }

    uint64_t GetTimeouts() const
    {
        return m_timeouts;
    }

    /// CNPs this QP received (congestion notifications from its receiver).
    uint64_t GetCnpsReceived() const
    {
        return m_cnpsReceived;
    }

  private:
    friend class RdmaNic;

    /// How a NIC recovers lost packets (attribute RdmaNic::LossRecovery: "go-back-n", "selective").
    enum LossRecovery
    {
        GO_BACK_N, ///< a NAK (PSN sequence error) or a timeout resends everything from the hole
        SELECTIVE  ///< the receiver keeps out-of-order packets; only the missing PSNs are resent
    };

    uint32_t m_qpn = 0;
    uint32_t m_remoteQpn = 0;
    uint32_t m_srcHost = 0;
    uint32_t m_dstHost = 0;
    uint16_t m_sport = 0;
    uint8_t m_priority = 3;
    uint32_t m_mtu = 1000;
    Time m_baseRtt;
    Ptr<CongestionControl> m_cc;
    RdmaNic* m_nic = nullptr;
    RdmaNic* m_remoteNic = nullptr; ///< the receiver's NIC (holds the RdmaRxQueuePair)

    std::deque<RdmaMessage> m_msgs; ///< unacknowledged messages in PSN order
    uint64_t m_nextMsgId = 0;
    uint32_t m_psnEnd = 0; ///< one past the last PSN posted
    uint32_t m_sndNxt = 0;
    uint32_t m_sndUna = 0;
    size_t m_sendCursor = 0; ///< index in m_msgs of the message holding m_sndNxt
    Time m_nextSend;
    bool m_active = false; ///< in the NIC's active list

    Time m_rtoDeadline;
    PendingEvent m_rtoEvent;
    Time m_curRto;          ///< the timeout armed now (grows with each retry)
    uint32_t m_retries = 0; ///< timeouts in a row without an acknowledgement
    bool m_failed = false;
    std::string m_failure;
    uint64_t m_retransmitPackets = 0;
    uint64_t m_retransmitBytes = 0;
    uint64_t m_timeouts = 0;
    uint64_t m_nacksReceived = 0;
    uint64_t m_cnpsReceived = 0;
    uint32_t m_highestSent = 0; ///< one past the highest PSN ever sent

    // Selective repeat: PSNs above m_sndUna the receiver reported holding, and the lost PSNs
    // still to resend: those in [m_retxNext, m_retxEnd) not in m_sacked. m_retxNext only moves
    // forward within a loss episode (each PSN is resent once per NAK-driven episode; a timeout
    // starts again from m_sndUna) and rests on a PSN to resend or at or past m_retxEnd.
    std::set<uint32_t> m_sacked;
    uint32_t m_retxNext = 0;
    uint32_t m_retxEnd = 0;
    uint32_t m_recoveryPoint = 0; ///< m_highestSent when the current loss episode began

    /// Moves m_retxNext past PSNs acknowledged or held by the receiver.
    void SkipHeld();

    TracedCallback<uint64_t, uint64_t, Time> m_msgCompleteTrace; ///< id, bytes, posted time
    TracedCallback<uint32_t> m_failedTrace;                      ///< qpn
};

/// Receiver side of a QP.
struct RdmaRxQueuePair
{
    uint32_t qpn = 0;
    uint32_t senderQpn = 0;
    uint32_t senderHost = 0;
    uint16_t sport = 0;
    uint8_t priority = 3;
    uint32_t expectedPsn = 0;
    uint32_t msn = 0;
    uint64_t msgBytes = 0;
    uint32_t unackedPackets = 0;
    Time lastNack = Time::Min();
    uint32_t lastNackPsn = 0xffffffff;
    Time lastCnp = Time::Min();
    uint64_t deliveredBytes = 0;
    uint64_t cnpsSent = 0;
    uint64_t nacksSent = 0;
    /// Selective repeat: packets above expectedPsn held until the hole fills (psn -> payload
    /// bytes, last of its message).
    std::map<uint32_t, std::pair<uint32_t, bool>> outOfOrder;
    uint64_t outOfOrderBuffered = 0; ///< packets ever held out of order
    /// called with the message's bytes when a whole message has arrived in order
    Callback<void, uint64_t> onDelivered;
};

} // namespace ns3

#endif
