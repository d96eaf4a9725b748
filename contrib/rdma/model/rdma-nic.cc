#include "rdma-nic.h"

#include "fabric-clock.h"
#include "unit-conversions.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/enum.h"
#include "ns3/integer.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cmath>

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
                            "First retransmission timeout (recovers a lost tail packet); later "
                            "ones back off by RetransmitBackoff. InfiniBand's local ACK timeout "
                            "is 4.096 us x 2^n (NCCL's n = 20: 4.29 s, fixed).",
                            TimeValue(MicroSeconds(1000)),
                            MakeTimeAccessor(&RdmaNic::m_rto),
                            MakeTimeChecker(PicoSeconds(1)))
              .AddAttribute("RetransmitBackoff",
                            "Factor the timeout grows by on each timeout in a row without an "
                            "acknowledgement (1: a fixed timeout, as InfiniBand's local ACK "
                            "timeout; 2: NVIDIA's adaptive retransmission).",
                            DoubleValue(2.0),
                            MakeDoubleAccessor(&RdmaNic::m_rtoBackoff),
                            MakeDoubleChecker<double>(1.0, 16.0))
              .AddAttribute("RetransmitTimeoutMax",
                            "Largest timeout the backoff reaches (4.096 us x 2^20, InfiniBand's "
                            "local ACK timeout as NCCL sets it).",
                            TimeValue(NanoSeconds(4294967296)),
                            MakeTimeAccessor(&RdmaNic::m_rtoMax),
                            MakeTimeChecker(PicoSeconds(1)))
              .AddAttribute("RetransmitJitter",
                            "Each timeout is scaled by a uniform draw in [1, 1 + j] when it is "
                            "armed (deterministic from the run's seed; 0: none), never below "
                            "the schedule: without it an incast's senders time out in lock-step.",
                            DoubleValue(1.0),
                            MakeDoubleAccessor(&RdmaNic::m_rtoJitter),
                            MakeDoubleChecker<double>(0.0, 1.0))
              .AddAttribute("RetryLimit",
                            "Timeouts in a row without an acknowledgement before the QP fails "
                            "(InfiniBand's retry_cnt; NCCL sets 7). The flow is then reported "
                            "failed, never left hanging.",
                            UintegerValue(7),
                            MakeUintegerAccessor(&RdmaNic::m_retryLimit),
                            MakeUintegerChecker<uint32_t>(0, 1000000))
              .AddAttribute("LossRecovery",
                            "go-back-n (RoCE's default): a NAK or timeout resends from the "
                            "first missing PSN on. selective (IRN; NVIDIA NICs' selective "
                            "repeat): the receiver keeps out-of-order packets and NAKs each "
                            "one, the sender resends only the missing PSNs.",
                            EnumValue(GO_BACK_N),
                            MakeEnumAccessor(&RdmaNic::m_lossRecovery),
                            MakeEnumChecker(GO_BACK_N, "go-back-n", SELECTIVE, "selective"))
              .AddAttribute("BdpCap",
                            "Cap each QP's packets in flight at the path's bandwidth-delay "
                            "product (IRN's BDP-FC).",
                            BooleanValue(false),
                            MakeBooleanAccessor(&RdmaNic::m_bdpCap),
                            MakeBooleanChecker())
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
    , m_rtoBackoff(2.0)
    , m_rtoJitter(1.0)
    , m_retryLimit(7)
    , m_lossRecovery(GO_BACK_N)
    , m_useWindow(false)
    , m_bdpCap(false)
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
    qp->m_qpn = kFirstQpn + uint32_t(m_qps.size());
    qp->m_srcHost = m_host;
    qp->m_dstHost = dst->m_host;
    qp->m_sport = sport;
    qp->m_priority = priority;
    qp->m_mtu = m_mtu;
    qp->m_baseRtt = baseRtt;
    qp->m_cc = cc;
    qp->m_nic = this;
    qp->m_remoteNic = PeekPointer(dst);

    RdmaRxQueuePair rx;
    rx.qpn = kFirstQpn + uint32_t(dst->m_rxQps.size());
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
        qp->m_nextSend = std::min(qp->m_nextSend, FabricClock::Now());
    }
    Wake();
}

uint64_t
RdmaNic::WindowOf(const RdmaQueuePair* qp) const
{
    uint64_t w = qp->m_cc->GetWindowBytes();
    const double bdp = qp->m_baseRtt.GetSeconds() * double(GetRateBps()) / 8.0;
    if (w == 0 && m_useWindow)
    {
        w = uint64_t(bdp * double(qp->m_cc->GetRateBps()) / double(GetRateBps()));
        w = std::max<uint64_t>(w, m_mtu);
    }
    if (m_bdpCap)
    {
        const uint64_t cap = std::max<uint64_t>(uint64_t(bdp), m_mtu);
        w = w == 0 ? cap : std::min(w, cap);
    }
    return w;
}

FabricPacket*
RdmaNic::DequeueNext(Time now, Time& wakeAt)
{
    if (!m_ctrl.empty())
    {
        if (!IsPaused(m_ctrlPriority, now))
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
        if (IsPaused(qp->m_priority, now))
        {
            wakeAt = std::min(wakeAt, PauseExpiry(qp->m_priority));
            ++m_rr;
            continue;
        }
        // The window holds back new data only: a selective resend fills a hole in it.
        uint64_t win = WindowOf(qp);
        const bool resend = qp->m_retxNext < qp->m_retxEnd;
        if (!resend && win > 0 && uint64_t(qp->m_sndNxt - qp->m_sndUna) * m_mtu >= win)
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
    const bool resend = qp->m_retxNext < qp->m_retxEnd; // selective: a lost PSN first
    const uint32_t psn = resend ? qp->m_retxNext : qp->m_sndNxt;
    size_t at = 0;
    if (resend)
    {
        at = size_t(std::upper_bound(msgs.begin(),
                                     msgs.end(),
                                     psn,
                                     [](uint32_t v, const RdmaMessage& m) { return v < m.endPsn; })
                    - msgs.begin());
    }
    else
    {
        while (qp->m_sendCursor < msgs.size() && msgs[qp->m_sendCursor].endPsn <= psn)
        {
            ++qp->m_sendCursor;
        }
        at = qp->m_sendCursor;
    }
    NS_ABORT_MSG_IF(at >= msgs.size(), "RdmaNic: no message holds PSN " << psn);
    const RdmaMessage& m = msgs[at];
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
    p->sendTimePs = FabricClock::Now().GetPicoSeconds();
    p->uid = (uint64_t(m_host) << 40) | ++m_uid;

    if (psn < qp->m_highestSent)
    {
        qp->m_retransmitPackets++;
        qp->m_retransmitBytes += payload;
    }
    if (resend)
    {
        qp->m_retxNext++;
        qp->SkipHeld();
    }
    else
    {
        qp->m_sndNxt++;
    }
    qp->m_highestSent = std::max(qp->m_highestSent, psn + 1);
    qp->m_cc->OnSend(p->WireBytes());
    uint64_t rate = qp->m_cc->GetRateBps();
    qp->m_nextSend = FabricClock::Now();
    if (rate < GetRateBps())
    {
        qp->m_nextSend += PicoSeconds(fabricsim::units::TransmitPs(p->WireBytes(), rate));
    }
    if (!qp->m_rtoEvent.IsPending())
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
    if (type == FrameType::Nack && m_lossRecovery == SELECTIVE)
    {
        c->hasSack = true;
        c->sackPsn = cause->psn;
    }
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
RdmaNic::DeliverInOrder(RdmaRxQueuePair& rx,
                        uint32_t payload,
                        bool last,
                        std::vector<uint64_t>& messages)
{
    rx.expectedPsn++;
    rx.msgBytes += payload;
    rx.deliveredBytes += payload;
    if (last)
    {
        rx.msn++;
        messages.push_back(rx.msgBytes);
        rx.msgBytes = 0;
    }
}

void
RdmaNic::ReceiveData(FabricPacket* p)
{
    NS_ABORT_MSG_IF(p->dstQpn < kFirstQpn || p->dstQpn - kFirstQpn >= m_rxQps.size(),
                    "RdmaNic: data for unknown QP " << p->dstQpn);
    m_dataDelivered++;
    m_dataBytesDelivered += p->frameBytes;
    RdmaRxQueuePair& rx = m_rxQps[p->dstQpn - kFirstQpn];
    Time now = FabricClock::Now();
    if (p->ce && (rx.lastCnp == Time::Min() || now - rx.lastCnp >= m_cnpInterval))
    {
        rx.lastCnp = now;
        rx.cnpsSent++;
        m_cnpsSent++;
        SendControl(FrameType::Cnp, rx, p->psn, p);
    }
    const bool last = p->opcode == RoceOpcode::kWriteLast || p->opcode == RoceOpcode::kWriteOnly;
    if (p->psn == rx.expectedPsn)
    {
        std::vector<uint64_t> messages; // whole messages now delivered, in order
        DeliverInOrder(rx, p->payload, last, messages);
        // Selective repeat: the packets held beyond this one are now in order too.
        bool filled = false;
        while (!rx.outOfOrder.empty() && rx.outOfOrder.begin()->first == rx.expectedPsn)
        {
            const auto [payload, isLast] = rx.outOfOrder.begin()->second;
            rx.outOfOrder.erase(rx.outOfOrder.begin());
            DeliverInOrder(rx, payload, isLast, messages);
            filled = true;
        }
        rx.unackedPackets++;
        if (!messages.empty() || filled || p->ackReq || rx.unackedPackets >= m_ackInterval)
        {
            rx.unackedPackets = 0;
            SendControl(FrameType::Ack, rx, rx.expectedPsn, p);
        }
        // After the ACK is queued: a callback that posts a reply must not overtake it.
        if (!rx.onDelivered.IsNull())
        {
            for (uint64_t bytes : messages)
            {
                rx.onDelivered(bytes);
            }
        }
    }
    else if (p->psn > rx.expectedPsn)
    {
        if (m_lossRecovery == SELECTIVE)
        {
            // Keep it and NAK the hole, naming this PSN (IRN: one NAK per out-of-order packet,
            // so the sender learns every PSN held).
            if (rx.outOfOrder.emplace(p->psn, std::make_pair(p->payload, last)).second)
            {
                rx.outOfOrderBuffered++;
                m_outOfOrderBuffered++;
            }
            rx.nacksSent++;
            m_nacksSent++;
            SendControl(FrameType::Nack, rx, rx.expectedPsn, p);
        }
        // Go-back-N: drop it and ask for the hole, at most once per interval for one hole.
        else if (rx.lastNackPsn != rx.expectedPsn || now - rx.lastNack >= m_nackInterval)
        {
            rx.lastNackPsn = rx.expectedPsn;
            rx.lastNack = now;
            rx.nacksSent++;
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
    qp->m_retries = 0; // progress: the retry count starts again
    if (qp->m_sndNxt < psn)
    {
        qp->m_sndNxt = psn;
    }
    qp->m_sacked.erase(qp->m_sacked.begin(), qp->m_sacked.lower_bound(psn));
    qp->SkipHeld();
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
    RdmaQueuePair* qp = TxQp(p->dstQpn, "ACK");
    uint32_t before = qp->m_sndUna;
    const bool retrying = qp->m_retries > 0;
    AckSample s;
    s.ackedPsn = p->psn;
    s.ecnEcho = p->ecnEcho;
    s.rtt = FabricClock::Now() - PicoSeconds(p->sendTimePs);
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
        if (retrying)
        {
            qp->m_curRto = DrawRto(0); // progress ends the backoff
        }
        qp->m_rtoDeadline = DeadlineAfter(qp->m_curRto); // push the timeout back lazily
    }
    delete p;
    Wake();
}

void
RdmaNic::ReceiveNack(FabricPacket* p)
{
    RdmaQueuePair* qp = TxQp(p->dstQpn, "NACK");
    qp->m_nacksReceived++;
    if (qp->m_failed)
    {
        delete p;
        return;
    }
    const uint32_t before = qp->m_sndUna;
    const bool retrying = qp->m_retries > 0;
    AdvanceUna(qp, p->psn);
    const bool newEpisode = qp->m_sndUna >= qp->m_recoveryPoint;
    if (newEpisode)
    {
        qp->m_recoveryPoint = qp->m_highestSent;
    }
    if (p->hasSack)
    {
        // Selective: the receiver holds sackPsn; every PSN below it not held is lost.
        if (p->sackPsn >= qp->m_sndUna && p->sackPsn < qp->m_highestSent)
        {
            qp->m_sacked.insert(p->sackPsn);
            qp->m_retxEnd = std::max(qp->m_retxEnd, p->sackPsn);
            qp->SkipHeld();
        }
        if (newEpisode)
        {
            m_retransmitTrace(qp->m_qpn, qp->m_sndUna);
        }
    }
    else if (p->psn < qp->m_sndNxt)
    {
        qp->m_sndNxt = std::max(p->psn, qp->m_sndUna);
        qp->m_sendCursor = 0;
        m_retransmitTrace(qp->m_qpn, qp->m_sndNxt);
    }
    if (qp->m_sndUna != before && retrying)
    {
        qp->m_curRto = DrawRto(0); // progress ends the backoff
    }
    qp->m_rtoDeadline = DeadlineAfter(qp->m_curRto);
    // Go-back-N NAKs come at most once per NackInterval per hole; a selective receiver NAKs
    // every packet beyond a hole, so there the congestion control hears once per episode.
    if (!p->hasSack || newEpisode)
    {
        qp->m_cc->OnNack();
    }
    delete p;
    Activate(qp);
}

void
RdmaNic::ReceiveCnp(FabricPacket* p)
{
    RdmaQueuePair* qp = TxQp(p->dstQpn, "CNP");
    m_cnpsReceived++;
    qp->m_cnpsReceived++;
    m_cnpRxTrace(qp->m_qpn, qp->m_dstHost);
    qp->m_cc->OnCnp();
    delete p;
}

RdmaQueuePair*
RdmaNic::TxQp(uint32_t qpn, const char* what) const
{
    NS_ABORT_MSG_IF(qpn < kFirstQpn || qpn - kFirstQpn >= m_qps.size(),
                    "RdmaNic: " << what << " for unknown QP " << qpn);
    return PeekPointer(m_qps[qpn - kFirstQpn]);
}

int64_t
RdmaNic::AssignStreams(int64_t stream)
{
    m_jitterStream = stream;
    if (m_rng)
    {
        m_rng->SetStream(stream);
    }
    return 1;
}

Time
RdmaNic::RetransmitTimeoutAfter(uint32_t retries) const
{
    // In picoseconds as a double: 2^retries overflows no integer, and the cap bounds it.
    const double ps = double(m_rto.GetPicoSeconds()) * std::pow(m_rtoBackoff, double(retries));
    return PicoSeconds(int64_t(std::min(ps, double(std::max(m_rtoMax, m_rto).GetPicoSeconds()))));
}

Time
RdmaNic::DrawRto(uint32_t retries)
{
    Time t = RetransmitTimeoutAfter(retries);
    if (m_rtoJitter > 0)
    {
        if (!m_rng)
        {
            // Made at the first draw, after setup, on its assigned stream: the streams of
            // everything built before (ECN marking, link loss) keep their numbers.
            m_rng = CreateObjectWithAttributes<UniformRandomVariable>("Stream",
                                                                      IntegerValue(m_jitterStream));
        }
        ++m_rtoDraws;
        const double f = m_rng->GetValue(1.0, 1.0 + m_rtoJitter);
        // Below 2^63 ps before the conversion: a cap near the clock's end doubled would wrap.
        const double ps = std::min(double(t.GetPicoSeconds()) * f, 0x1p62);
        t = PicoSeconds(std::max<int64_t>(1, int64_t(ps)));
    }
    return t;
}

Time
RdmaNic::DeadlineAfter(Time rto) const
{
    // The clock ends at 2^63 ps (106 days): a timeout past it fires at its end instead.
    const Time now = FabricClock::Now();
    return rto < Time::Max() - now ? now + rto : Time::Max();
}

void
RdmaNic::ArmRto(RdmaQueuePair* qp)
{
    if (qp->m_curRto.IsZero())
    {
        qp->m_curRto = DrawRto(qp->m_retries);
    }
    qp->m_rtoDeadline = DeadlineAfter(qp->m_curRto);
    if (!qp->m_rtoEvent.IsPending())
    {
        const Time left = qp->m_rtoDeadline - FabricClock::Now();
        qp->m_rtoEvent.Schedule(left, &RdmaNic::RtoFired, this, qp);
    }
}

void
RdmaNic::RtoFired(RdmaQueuePair* qp)
{
    qp->m_rtoEvent.Ran();
    if (qp->IsIdle() || qp->m_failed)
    {
        return;
    }
    Time now = FabricClock::Now();
    if (now < qp->m_rtoDeadline)
    {
        return qp->m_rtoEvent.Schedule(qp->m_rtoDeadline - now, &RdmaNic::RtoFired, this, qp);
    }
    // Timeout: nothing acknowledged for a whole RTO.
    qp->m_timeouts++;
    if (qp->m_retries >= m_retryLimit)
    {
        Fail(qp,
             "retry limit exceeded: " + std::to_string(qp->m_retries + 1)
                 + " timeouts in a row without an acknowledgement (RetryLimit "
                 + std::to_string(m_retryLimit) + ")");
        return;
    }
    qp->m_retries++;
    if (m_lossRecovery == SELECTIVE)
    {
        // Every packet in flight that the receiver does not hold is presumed lost.
        qp->m_retxNext = qp->m_sndUna;
        qp->m_retxEnd = qp->m_sndNxt;
        qp->SkipHeld();
    }
    else
    {
        qp->m_sndNxt = qp->m_sndUna; // go back to the first unacknowledged PSN
        qp->m_sendCursor = 0;
    }
    qp->m_recoveryPoint = qp->m_highestSent;
    m_retransmitTrace(qp->m_qpn, qp->m_sndUna);
    qp->m_cc->OnTimeout();
    qp->m_curRto = DrawRto(qp->m_retries);
    qp->m_rtoDeadline = DeadlineAfter(qp->m_curRto);
    qp->m_rtoEvent.Schedule(qp->m_rtoDeadline - now, &RdmaNic::RtoFired, this, qp);
    Activate(qp);
}

void
RdmaNic::Fail(RdmaQueuePair* qp, const std::string& why)
{
    // As a NIC moves the QP to the error state: no more sends; its messages never complete.
    NS_LOG_WARN("QP " << qp->m_qpn << " of host " << m_host << " failed: " << why);
    qp->m_failed = true;
    qp->m_failure = why;
    qp->m_rtoEvent.Cancel();
    qp->m_failedTrace(qp->m_qpn);
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
