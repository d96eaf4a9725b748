#include "rdma-nic.h"

#include "unit-conversions.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RdmaNic");
NS_OBJECT_ENSURE_REGISTERED(RdmaNic);

TypeId
RdmaNic::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::RdmaNic")
              .SetParent<FabricNetDevice>()
              .SetGroupName("Rdma")
              .AddConstructor<RdmaNic>()
              .AddAttribute(
                  "ControlPriority",
                  "802.1p class of ACK/NACK/CNP frames (served first by NIC and switches).",
                  UintegerValue(7),
                  MakeUintegerAccessor(&RdmaNic::m_ctrlPriority),
                  MakeUintegerChecker<uint8_t>(0, 7))
              .AddAttribute("AckInterval",
                            "Acknowledge every N data packets (the last packet of a message is "
                            "always acknowledged).",
                            UintegerValue(1),
                            MakeUintegerAccessor(&RdmaNic::m_ackInterval),
                            MakeUintegerChecker<uint32_t>(1))
              .AddAttribute("CnpInterval",
                            "Minimum time between two CNPs for one QP (min_time_between_cnps).",
                            TimeValue(MicroSeconds(50)),
                            MakeTimeAccessor(&RdmaNic::m_cnpInterval),
                            MakeTimeChecker())
              .AddAttribute("NackInterval",
                            "Minimum time between two NACKs for the same expected PSN.",
                            TimeValue(MicroSeconds(500)),
                            MakeTimeAccessor(&RdmaNic::m_nackInterval),
                            MakeTimeChecker())
              .AddAttribute("RetransmitTimeout",
                            "Go-back-N retransmission timeout (recovers a lost tail packet).",
                            TimeValue(MicroSeconds(1000)),
                            MakeTimeAccessor(&RdmaNic::m_rto),
                            MakeTimeChecker())
              .AddAttribute("UseWindow",
                            "Limit in-flight bytes to the BDP scaled by rate / line rate (when the "
                            "congestion control does not set its own window).",
                            BooleanValue(false),
                            MakeBooleanAccessor(&RdmaNic::m_useWindow),
                            MakeBooleanChecker())
              .AddTraceSource("CnpReceived",
                              "A CNP arrived for a QP: qpn, destination host of the QP.",
                              MakeTraceSourceAccessor(&RdmaNic::m_cnpRxTrace),
                              "ns3::RdmaNic::QpTracedCallback")
              .AddTraceSource("Retransmit",
                              "Go-back-N restart: qpn, first PSN resent.",
                              MakeTraceSourceAccessor(&RdmaNic::m_retransmitTrace),
                              "ns3::RdmaNic::QpTracedCallback");
    return tid;
}

RdmaNic::RdmaNic()
    : m_host(0)
    , m_ctrlPriority(7)
    , m_ackInterval(1)
    , m_rtoMaxRetries(0)
    , m_useWindow(false)
    , m_rr(0)
    , m_uid(0)
{
}

RdmaNic::~RdmaNic()
{
    for (auto* p : m_ctrl)
    {
        delete p;
    }
}

void
RdmaNic::DoDispose()
{
    for (auto& qp : m_qps)
    {
        qp->m_rtoEvent.Cancel();
        qp->m_nic = nullptr;
        qp->Dispose();
    }
    m_qps.clear();
    m_active.clear();
    FabricNetDevice::DoDispose();
}

void
RdmaNic::SetHostIndex(uint32_t host)
{
    m_host = host;
}

uint32_t
RdmaNic::GetHostIndex() const
{
    return m_host;
}

Ptr<RdmaQueuePair>
RdmaNic::Connect(Ptr<RdmaNic> dst,
                 uint8_t priority,
                 uint16_t sport,
                 Ptr<CongestionControl> cc,
                 Time baseRtt,
                 Callback<void, uint64_t> onDelivered)
{
    auto qp = CreateObject<RdmaQueuePair>();
    qp->m_qpn = uint32_t(m_qps.size());
    qp->m_srcHost = m_host;
    qp->m_dstHost = dst->m_host;
    qp->m_sport = sport;
    qp->m_priority = priority;
    qp->m_mtu = m_mtu;
    qp->m_baseRtt = baseRtt;
    qp->m_cc = cc;
    qp->m_nic = this;

    RdmaRxQueuePair rx;
    rx.qpn = uint32_t(dst->m_rxQps.size());
    rx.senderQpn = qp->m_qpn;
    rx.senderHost = m_host;
    rx.sport = sport;
    rx.priority = priority;
    rx.onDelivered = onDelivered;
    qp->m_remoteQpn = rx.qpn;
    dst->m_rxQps.push_back(rx);

    cc->Init(GetRateBps(), baseRtt, m_mtu);
    RdmaQueuePair* raw = PeekPointer(qp);
    cc->SetUpdateCallback(Callback<void>([this, raw]() { CcUpdated(raw); }));
    m_qps.push_back(qp);
    return qp;
}

void
RdmaNic::Activate(RdmaQueuePair* qp)
{
    if (!qp->m_active && qp->HasDataToSend())
    {
        qp->m_active = true;
        m_active.push_back(qp);
    }
    Wake();
}

void
RdmaNic::CcUpdated(RdmaQueuePair* qp)
{
    // A faster rate may let a paced QP send earlier than planned.
    uint64_t rate = qp->m_cc->GetRateBps();
    if (rate >= GetRateBps())
    {
        qp->m_nextSend = std::min(qp->m_nextSend, Simulator::Now());
    }
    Wake();
}

uint64_t
RdmaNic::WindowOf(const RdmaQueuePair* qp) const
{
    uint64_t w = qp->m_cc->GetWindowBytes();
    if (w == 0 && m_useWindow)
    {
        double bdp = qp->m_baseRtt.GetSeconds() * double(GetRateBps()) / 8.0;
        w = uint64_t(bdp * double(qp->m_cc->GetRateBps()) / double(GetRateBps()));
        w = std::max<uint64_t>(w, m_mtu);
    }
    return w;
}

FabricPacket*
RdmaNic::DequeueNext(Time& wakeAt)
{
    Time now = Simulator::Now();
    if (!m_ctrl.empty())
    {
        if (!IsPaused(m_ctrlPriority))
        {
            FabricPacket* p = m_ctrl.front();
            m_ctrl.pop_front();
            return p;
        }
        wakeAt = std::min(wakeAt, PauseExpiry(m_ctrlPriority));
    }
    size_t checked = 0;
    while (checked < m_active.size())
    {
        if (m_rr >= m_active.size())
        {
            m_rr = 0;
        }
        RdmaQueuePair* qp = m_active[m_rr];
        if (!qp->HasDataToSend())
        {
            qp->m_active = false;
            m_active.erase(m_active.begin() + m_rr);
            continue;
        }
        ++checked;
        if (IsPaused(qp->m_priority))
        {
            wakeAt = std::min(wakeAt, PauseExpiry(qp->m_priority));
            ++m_rr;
            continue;
        }
        uint64_t win = WindowOf(qp);
        if (win > 0 && uint64_t(qp->m_sndNxt - qp->m_sndUna) * m_mtu >= win)
        {
            ++m_rr; // an ACK will wake us
            continue;
        }
        if (qp->m_nextSend > now)
        {
            wakeAt = std::min(wakeAt, qp->m_nextSend);
            ++m_rr;
            continue;
        }
        ++m_rr;
        return MakeDataPacket(qp);
    }
    return nullptr;
}

bool
RdmaNic::HasPendingWork() const
{
    return FabricNetDevice::HasPendingWork() || !m_ctrl.empty() || !m_active.empty();
}

FabricPacket*
RdmaNic::MakeDataPacket(RdmaQueuePair* qp)
{
    auto& msgs = qp->m_msgs;
    while (qp->m_sendCursor < msgs.size() && msgs[qp->m_sendCursor].endPsn <= qp->m_sndNxt)
    {
        ++qp->m_sendCursor;
    }
    NS_ABORT_MSG_IF(qp->m_sendCursor >= msgs.size(), "RdmaNic: no message holds the next PSN");
    const RdmaMessage& m = msgs[qp->m_sendCursor];
    uint32_t psn = qp->m_sndNxt;
    uint64_t off = uint64_t(psn - m.startPsn) * m_mtu;
    uint32_t payload = uint32_t(std::min<uint64_t>(m_mtu, m.bytes - off));
    bool first = psn == m.startPsn;
    bool last = psn + 1 == m.endPsn;

    auto* p = new FabricPacket;
    p->type = FrameType::Data;
    p->priority = qp->m_priority;
    p->opcode = (first && last) ? RoceOpcode::kWriteOnly
                : first         ? RoceOpcode::kWriteFirst
                : last          ? RoceOpcode::kWriteLast
                                : RoceOpcode::kWriteMiddle;
    p->ackReq = last;
    p->srcHost = m_host;
    p->dstHost = qp->m_dstHost;
    p->sport = qp->m_sport;
    p->dstQpn = qp->m_remoteQpn;
    p->psn = psn;
    p->payload = payload;
    p->frameBytes = RoceSize::DataFrame(payload, first);
    if (first)
    {
        p->remoteVa = 0x10000000ULL + m.id * 0x100000ULL;
        p->dmaLength = uint32_t(std::min<uint64_t>(m.bytes, 0xffffffffULL));
    }
    if (qp->m_cc->NeedsInt())
    {
        // INT shim: switches push one hop record each on frames that carry it.
        p->intBytes = RoceSize::kIntHeader;
        p->frameBytes += RoceSize::kIntHeader;
    }
    p->sendTimePs = Simulator::Now().GetPicoSeconds();
    p->uid = (uint64_t(m_host) << 40) | ++m_uid;

    qp->m_sndNxt++;
    qp->m_highestSent = std::max(qp->m_highestSent, qp->m_sndNxt);
    qp->m_cc->OnSend(p->WireBytes());
    uint64_t rate = qp->m_cc->GetRateBps();
    qp->m_nextSend = Simulator::Now();
    if (rate < GetRateBps())
    {
        qp->m_nextSend += PicoSeconds(fabricsim::units::TransmitPs(p->WireBytes(), rate));
    }
    if (!qp->m_rtoEvent.IsRunning())
    {
        ArmRto(qp);
    }
    return p;
}

void
RdmaNic::HandleReceive(FabricPacket* p)
{
    switch (p->type)
    {
    case FrameType::Data:
        ReceiveData(p);
        break;
    case FrameType::Ack:
        ReceiveAck(p);
        break;
    case FrameType::Nack:
        ReceiveNack(p);
        break;
    case FrameType::Cnp:
        ReceiveCnp(p);
        break;
    default:
        delete p;
        break;
    }
}

void
RdmaNic::SendControl(FrameType type,
                     const RdmaRxQueuePair& rx,
                     uint32_t psn,
                     const FabricPacket* cause)
{
    auto* c = new FabricPacket;
    c->type = type;
    c->priority = m_ctrlPriority;
    c->srcHost = m_host;
    c->dstHost = rx.senderHost;
    c->sport = rx.sport;
    c->dstQpn = rx.senderQpn;
    c->psn = psn;
    c->msn = rx.msn;
    c->uid = (uint64_t(m_host) << 40) | ++m_uid;
    if (type == FrameType::Cnp)
    {
        c->opcode = RoceOpcode::kCnp;
        c->frameBytes = RoceSize::kCnpFrame;
        c->ecnCapable = false;
    }
    else
    {
        c->opcode = RoceOpcode::kAck;
        c->syndrome = (type == FrameType::Nack) ? 0x60 : 0x1f;
        c->frameBytes = RoceSize::kAckFrame;
        c->sendTimePs = cause->sendTimePs;
        c->ecnEcho = cause->ce;
        c->intHops = cause->intHops;
        c->intBytes = cause->intBytes; // the echoed INT stack travels in the ACK
        c->frameBytes += cause->intBytes;
    }
    m_ctrl.push_back(c);
    Wake();
}

void
RdmaNic::ReceiveData(FabricPacket* p)
{
    NS_ABORT_MSG_IF(p->dstQpn >= m_rxQps.size(), "RdmaNic: data for unknown QP " << p->dstQpn);
    m_dataDelivered++;
    m_dataBytesDelivered += p->frameBytes;
    RdmaRxQueuePair& rx = m_rxQps[p->dstQpn];
    Time now = Simulator::Now();
    if (p->ce && (rx.lastCnp == Time::Min() || now - rx.lastCnp >= m_cnpInterval))
    {
        rx.lastCnp = now;
        rx.cnpsSent++;
        m_cnpsSent++;
        SendControl(FrameType::Cnp, rx, p->psn, p);
    }
    if (p->psn == rx.expectedPsn)
    {
        rx.expectedPsn++;
        rx.msgBytes += p->payload;
        rx.deliveredBytes += p->payload;
        bool last = p->opcode == RoceOpcode::kWriteLast || p->opcode == RoceOpcode::kWriteOnly;
        rx.unackedPackets++;
        if (last || p->ackReq || rx.unackedPackets >= m_ackInterval)
        {
            rx.unackedPackets = 0;
            if (last)
            {
                rx.msn++;
            }
            SendControl(FrameType::Ack, rx, rx.expectedPsn, p);
        }
        if (last)
        {
            uint64_t bytes = rx.msgBytes;
            rx.msgBytes = 0;
            if (!rx.onDelivered.IsNull())
            {
                rx.onDelivered(bytes);
            }
        }
    }
    else if (p->psn > rx.expectedPsn)
    {
        // Out of order: ask for go-back-N, at most once per interval for the same hole.
        if (rx.lastNackPsn != rx.expectedPsn || now - rx.lastNack >= m_nackInterval)
        {
            rx.lastNackPsn = rx.expectedPsn;
            rx.lastNack = now;
            m_nacksSent++;
            SendControl(FrameType::Nack, rx, rx.expectedPsn, p);
        }
    }
    else
    {
        // Duplicate (an earlier ACK was lost or a retransmission overlapped): re-acknowledge.
        SendControl(FrameType::Ack, rx, rx.expectedPsn, p);
    }
    delete p;
}

void
RdmaNic::AdvanceUna(RdmaQueuePair* qp, uint32_t psn)
{
    if (psn <= qp->m_sndUna)
    {
        return;
    }
    psn = std::min(psn, qp->m_psnEnd);
    qp->m_sndUna = psn;
    if (qp->m_sndNxt < psn)
    {
        qp->m_sndNxt = psn;
    }
    // Complete whole messages; run callbacks after the state is consistent (they may post).
    std::vector<RdmaMessage> done;
    while (!qp->m_msgs.empty() && qp->m_msgs.front().endPsn <= psn)
    {
        done.push_back(std::move(qp->m_msgs.front()));
        qp->m_msgs.pop_front();
        if (qp->m_sendCursor > 0)
        {
            --qp->m_sendCursor;
        }
    }
    for (auto& m : done)
    {
        qp->m_msgCompleteTrace(m.id, m.bytes, m.posted);
        if (!m.onAcked.IsNull())
        {
            m.onAcked(m.id);
        }
    }
}

void
RdmaNic::ReceiveAck(FabricPacket* p)
{
    NS_ABORT_MSG_IF(p->dstQpn >= m_qps.size(), "RdmaNic: ACK for unknown QP " << p->dstQpn);
    RdmaQueuePair* qp = PeekPointer(m_qps[p->dstQpn]);
    uint32_t before = qp->m_sndUna;
    AckSample s;
    s.ackedPsn = p->psn;
    s.ecnEcho = p->ecnEcho;
    s.rtt = Simulator::Now() - PicoSeconds(p->sendTimePs);
    s.intHops = &p->intHops;
    static const uint8_t initialTtl = FabricPacket().ttl;
    s.hops = uint32_t(initialTtl - p->ttl);
    AdvanceUna(qp, p->psn);
    s.newlyAckedBytes = uint64_t(qp->m_sndUna - before) * m_mtu;
    s.sndNxt = qp->m_sndNxt;
    qp->m_cc->OnAck(s);
    if (qp->IsIdle())
    {
        qp->m_rtoEvent.Cancel();
    }
    else if (qp->m_sndUna != before)
    {
        qp->m_rtoDeadline = Simulator::Now() + m_rto; // progress: push the timeout back lazily
    }
    delete p;
    Wake();
}

void
RdmaNic::ReceiveNack(FabricPacket* p)
{
    NS_ABORT_MSG_IF(p->dstQpn >= m_qps.size(), "RdmaNic: NACK for unknown QP " << p->dstQpn);
    RdmaQueuePair* qp = PeekPointer(m_qps[p->dstQpn]);
    AdvanceUna(qp, p->psn);
    if (p->psn < qp->m_sndNxt)
    {
        qp->m_retransmitPackets += qp->m_sndNxt - p->psn;
        qp->m_sndNxt = std::max(p->psn, qp->m_sndUna);
        qp->m_sendCursor = 0;
        m_retransmitTrace(qp->m_qpn, qp->m_sndNxt);
    }
    qp->m_rtoDeadline = Simulator::Now() + m_rto;
    qp->m_cc->OnNack();
    delete p;
    Activate(qp);
}

void
RdmaNic::ReceiveCnp(FabricPacket* p)
{
    NS_ABORT_MSG_IF(p->dstQpn >= m_qps.size(), "RdmaNic: CNP for unknown QP " << p->dstQpn);
    RdmaQueuePair* qp = PeekPointer(m_qps[p->dstQpn]);
    m_cnpsReceived++;
    qp->m_cnpsReceived++;
    m_cnpRxTrace(qp->m_qpn, qp->m_dstHost);
    qp->m_cc->OnCnp();
    delete p;
}

void
RdmaNic::ArmRto(RdmaQueuePair* qp)
{
    qp->m_rtoDeadline = Simulator::Now() + m_rto;
    if (!qp->m_rtoEvent.IsRunning())
    {
        qp->m_rtoEvent = Simulator::Schedule(m_rto, &RdmaNic::RtoFired, this, qp);
    }
}

void
RdmaNic::RtoFired(RdmaQueuePair* qp)
{
    if (qp->IsIdle())
    {
        return;
    }
    Time now = Simulator::Now();
    if (now < qp->m_rtoDeadline)
    {
        qp->m_rtoEvent = Simulator::Schedule(qp->m_rtoDeadline - now, &RdmaNic::RtoFired, this, qp);
        return;
    }
    // Timeout: nothing acknowledged for a whole RTO; resend from the first unacked PSN.
    qp->m_timeouts++;
    qp->m_retransmitPackets += qp->m_sndNxt - qp->m_sndUna;
    qp->m_sndNxt = qp->m_sndUna;
    qp->m_sendCursor = 0;
    m_retransmitTrace(qp->m_qpn, qp->m_sndNxt);
    qp->m_cc->OnTimeout();
    qp->m_rtoDeadline = now + m_rto;
    qp->m_rtoEvent = Simulator::Schedule(m_rto, &RdmaNic::RtoFired, this, qp);
    Activate(qp);
}

uint64_t
RdmaNic::QueuedFrames() const
{
    return FabricNetDevice::QueuedFrames() + m_ctrl.size();
}

uint64_t
RdmaNic::QueuedBytes() const
{
    uint64_t b = FabricNetDevice::QueuedBytes();
    for (auto* p : m_ctrl)
    {
        b += p->frameBytes;
    }
    return b;
}

} // namespace ns3
