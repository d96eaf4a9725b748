/*
 * The NIC's side of the collective memo (link-memo.h): whether its queue pairs rest, their
 * state relative to now, and every counter and sequence number a span moves.
 */
#include "rdma-nic.h"

namespace ns3
{

void
RdmaNic::ProbeRest(MemoProbe& probe) const
{
    FabricNetDevice::ProbeRest(probe);
    const std::string who = "host " + std::to_string(m_host) + " (" + MemoName() + ")";
    if (!m_ctrl.empty())
    {
        probe.Block(who + ": " + std::to_string(m_ctrl.size()) + " control frame(s) queued");
    }
    if (!m_active.empty())
    {
        probe.Block(who + ": queue pairs with data to send");
    }
    if (!m_cnpRxTrace.IsEmpty() || !m_retransmitTrace.IsEmpty())
    {
        probe.Block(who + ": a queue-pair trace is connected");
    }
    probe.Mix(m_rr);
    probe.Mix(m_qps.size());
    for (const Ptr<RdmaQueuePair>& qp : m_qps)
    {
        const std::string q = who + " QP " + std::to_string(qp->m_qpn);
        if (!qp->IsIdle() || qp->m_active || !qp->m_sacked.empty())
        {
            probe.Block(q + ": messages unacknowledged");
        }
        if (qp->m_rtoEvent.IsPending())
        {
            probe.Block(q + ": a retransmission timer is armed");
        }
        if (!qp->m_msgCompleteTrace.IsEmpty() || !qp->m_failedTrace.IsEmpty())
        {
            probe.Block(q + ": a trace is connected");
        }
        for (uint64_t v :
             {uint64_t(qp->m_dstHost),
              uint64_t(qp->m_sport),
              uint64_t(qp->m_priority),
              uint64_t(qp->m_mtu),
              uint64_t(qp->m_remoteQpn),
              uint64_t(qp->m_baseRtt.GetPicoSeconds()),
              uint64_t(qp->m_curRto.GetPicoSeconds()),
              uint64_t(qp->m_retries),
              uint64_t(qp->m_failed),
              uint64_t(qp->m_sendCursor),
              // sequence numbers relative to the acknowledged one
              uint64_t(qp->m_sndNxt - qp->m_sndUna),
              uint64_t(qp->m_psnEnd - qp->m_sndUna),
              uint64_t(qp->m_highestSent - qp->m_sndUna),
              // PSNs left to resend (none once the episode is over)
              uint64_t(qp->m_retxNext < qp->m_retxEnd ? qp->m_retxEnd - qp->m_retxNext : 0),
              uint64_t(int32_t(qp->m_retxEnd - qp->m_sndUna) > 0),
              uint64_t(int32_t(qp->m_recoveryPoint - qp->m_sndUna) > 0
                           ? qp->m_recoveryPoint - qp->m_sndUna
                           : 0)})
        {
            probe.Mix(v);
        }
        probe.MixTime(qp->m_nextSend);
        // The timeout's deadline is read only while its timer is armed, never at rest.
        qp->m_cc->ProbeRest(probe, qp->m_sndUna);
    }
    probe.Mix(m_rxQps.size());
    for (const RdmaRxQueuePair& rx : m_rxQps)
    {
        if (rx.msgBytes != 0 || !rx.outOfOrder.empty())
        {
            probe.Block(who + " receiver QP " + std::to_string(rx.qpn)
                        + ": a message part-received");
        }
        for (uint64_t v : {uint64_t(rx.senderQpn),
                           uint64_t(rx.senderHost),
                           uint64_t(rx.sport),
                           uint64_t(rx.priority),
                           uint64_t(rx.unackedPackets)})
        {
            probe.Mix(v);
        }
        // Rate-limits the next CNP: it matters only to a span with an ECN mark, and not once
        // a whole CNP interval has passed.
        if (rx.lastCnp == Time::Min() || probe.Now() - rx.lastCnp >= m_cnpInterval)
        {
            probe.MixSignal(0);
        }
        else
        {
            probe.MixSignal(1);
            probe.MixSignalSince(rx.lastCnp);
        }
    }
}

void
RdmaNic::VisitMemo(MemoRecord& r)
{
    FabricNetDevice::VisitMemo(r);
    r.Sum(m_uid);
    uint64_t rr = m_rr;
    r.Last(rr);
    m_rr = size_t(rr);
    r.Signal(m_cnpsSent);
    r.Signal(m_cnpsReceived);
    r.Fault(m_nacksSent, "NAKs");
    r.Fault(m_outOfOrderBuffered, "out-of-order packets");
    r.Sum(m_dataDelivered);
    r.Sum(m_dataBytesDelivered);
    const size_t nq = r.Shape(m_qps.size(), "queue pairs opened");
    for (size_t i = 0; i < nq; ++i)
    {
        RdmaQueuePair* qp = PeekPointer(m_qps[i]);
        r.Sum(qp->m_nextMsgId);
        for (uint32_t* psn : {&qp->m_psnEnd,
                              &qp->m_sndNxt,
                              &qp->m_sndUna,
                              &qp->m_highestSent,
                              &qp->m_retxNext,
                              &qp->m_retxEnd,
                              &qp->m_recoveryPoint})
        {
            r.Sum(*psn);
        }
        uint64_t cursor = qp->m_sendCursor;
        r.Last(cursor);
        qp->m_sendCursor = size_t(cursor);
        r.LastTime(qp->m_nextSend);
        r.LastTime(qp->m_rtoDeadline);
        int64_t rto = qp->m_curRto.GetPicoSeconds();
        r.Last(rto);
        qp->m_curRto = PicoSeconds(rto);
        r.Last(qp->m_retries);
        r.Fault(qp->m_retransmitPackets, "retransmissions");
        r.Sum(qp->m_retransmitBytes);
        r.Fault(qp->m_timeouts, "timeouts");
        r.Fault(qp->m_nacksReceived, "NAKs");
        r.Signal(qp->m_cnpsReceived);
        qp->m_cc->VisitMemo(r);
    }
    // A new queue pair draws its first timeout's jitter: the reason above comes first.
    r.Fault(m_rtoDraws, "random draws of the timeout jitter");
    const size_t nr = r.Shape(m_rxQps.size(), "receiver queue pairs opened");
    for (size_t i = 0; i < nr; ++i)
    {
        RdmaRxQueuePair& rx = m_rxQps[i];
        r.Sum(rx.expectedPsn);
        r.Sum(rx.msn);
        r.Last(rx.msgBytes);
        r.Last(rx.unackedPackets);
        r.LastTime(rx.lastNack);
        r.Sum(rx.lastNackPsn);
        r.LastTime(rx.lastCnp);
        r.Sum(rx.deliveredBytes);
        r.Signal(rx.cnpsSent);
        r.Fault(rx.nacksSent, "NAKs");
        r.Fault(rx.outOfOrderBuffered, "out-of-order packets");
    }
}

} // namespace ns3
