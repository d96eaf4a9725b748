#include "switch-port.h"

#include "fabric-switch.h"

#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/fabric-clock.h"
#include "ns3/simulator.h"
#include "ns3/trace-source-accessor.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cstdint>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(SwitchPort);

TypeId
SwitchPort::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::SwitchPort")
              .SetParent<FabricNetDevice>()
              .SetGroupName("Fabric")
              .AddConstructor<SwitchPort>()
              .AddAttribute("StrictPriorityClasses",
                            "Bit mask of classes served with strict priority (control traffic).",
                            UintegerValue(1u << 7),
                            MakeUintegerAccessor(&SwitchPort::m_strictMask),
                            MakeUintegerChecker<uint8_t>())
              .AddAttribute("DwrrQuantum",
                            "DWRR quantum in bytes per round for each data class.",
                            UintegerValue(1600),
                            MakeUintegerAccessor(&SwitchPort::m_quantum),
                            MakeUintegerChecker<uint32_t>(64))
              .AddAttribute("EcnKmin",
                            "ECN RED: no marking at or below this queue (bytes).",
                            UintegerValue(400000),
                            MakeUintegerAccessor(&SwitchPort::m_kmin),
                            MakeUintegerChecker<uint64_t>())
              .AddAttribute("EcnKmax",
                            "ECN RED: always mark above this queue (bytes).",
                            UintegerValue(1600000),
                            MakeUintegerAccessor(&SwitchPort::m_kmax),
                            MakeUintegerChecker<uint64_t>())
              .AddAttribute("EcnPmax",
                            "ECN RED: marking probability at Kmax.",
                            DoubleValue(0.2),
                            MakeDoubleAccessor(&SwitchPort::m_pmax),
                            MakeDoubleChecker<double>(0, 1))
              .AddAttribute("EcnEnabled",
                            "Mark ECN-capable data frames.",
                            BooleanValue(true),
                            MakeBooleanAccessor(&SwitchPort::m_ecnEnabled),
                            MakeBooleanChecker())
              .AddAttribute("PauseQuanta",
                            "Quanta in XOFF frames (512 bit times each); refreshed at half life.",
                            UintegerValue(0xffff),
                            MakeUintegerAccessor(&SwitchPort::m_pauseQuanta),
                            MakeUintegerChecker<uint16_t>(1))
              .AddAttribute("IntHopBytes",
                            "Bytes one INT hop record adds to a frame (8 as in HPCC; the values "
                            "themselves are kept exact, for any link speed and hop count).",
                            UintegerValue(8),
                            MakeUintegerAccessor(&SwitchPort::m_intHopBytes),
                            MakeUintegerChecker<uint32_t>())
              .AddTraceSource(
                  "QueueBytes",
                  "Egress queue occupancy changed (frame enqueued, dequeued or flushed): "
                  "priority, bytes queued in that class, bytes queued in the port.",
                  MakeTraceSourceAccessor(&SwitchPort::m_queueTrace),
                  "ns3::SwitchPort::QueueBytesTracedCallback");
    return tid;
}

SwitchPort::SwitchPort()
    : m_switch(nullptr)
    , m_index(0)
    , m_strictMask(1u << 7)
    , m_ecnEnabled(true)
    , m_quantum(1600)
    , m_intHopBytes(8)
    , m_kmin(400000)
    , m_kmax(1600000)
    , m_pmax(0.2)
    , m_pauseQuanta(0xffff)
{
}

SwitchPort::~SwitchPort()
{
    for (auto& q : m_q)
    {
        for (auto* p : q)
        {
            delete p;
        }
    }
}

void
SwitchPort::DoDispose()
{
    for (auto& e : m_xoffRefresh)
    {
        e.Cancel();
    }
    m_switch = nullptr;
    FabricNetDevice::DoDispose();
}

void
SwitchPort::SetSwitch(FabricSwitch* sw, uint32_t index)
{
    m_switch = sw;
    m_index = index;
}

void
SwitchPort::SetEcn(uint64_t kmin, uint64_t kmax, double pmax)
{
    m_kmin = kmin;
    m_kmax = kmax;
    m_pmax = pmax;
}

void
SwitchPort::Enqueue(FabricPacket* p)
{
    m_q[p->priority].push_back(p);
    m_nonEmpty |= uint8_t(1u << p->priority);
    m_qBytes[p->priority] += p->frameBytes;
    m_totalBytes += p->frameBytes;
    if (m_totalBytes > m_maxBytes)
    {
        m_maxBytes = m_totalBytes;
    }
    NotifyQueue(p->priority);
    Wake();
}

FabricPacket*
SwitchPort::Pop(uint8_t prio)
{
    FabricPacket* p = m_q[prio].front();
    m_q[prio].pop_front();
    if (m_q[prio].empty())
    {
        m_nonEmpty &= uint8_t(~(1u << prio));
    }
    m_qBytes[prio] -= p->frameBytes;
    m_totalBytes -= p->frameBytes;
    if (m_ecnEnabled && p->type == FrameType::Data && p->ecnCapable && !p->ce
        && m_switch->ShouldMarkEcn(m_qBytes[prio], m_kmin, m_kmax, m_pmax))
    {
        p->ce = true;
        m_ecnMarked++;
    }
    NotifyQueue(prio);
    m_switch->OnDequeue(this, p);
    return p;
}

uint64_t
SwitchPort::FlushQueue(uint8_t prio, DropReason reason)
{
    // Detach the queue first: releasing buffer may resume peers and wake ports re-entrantly.
    std::deque<FabricPacket*> q;
    q.swap(m_q[prio]);
    m_nonEmpty &= uint8_t(~(1u << prio));
    m_totalBytes -= m_qBytes[prio];
    m_qBytes[prio] = 0;
    m_deficit[prio] = 0;
    if (!q.empty())
    {
        NotifyQueue(prio);
    }
    for (auto* p : q)
    {
        m_switch->OnDequeue(this, p);
        DropPacket(p, reason);
    }
    return q.size();
}

FabricPacket*
SwitchPort::DequeueNext(Time now, Time& wakeAt)
{
    if (m_totalBytes == 0)
    {
        return nullptr;
    }
    // The classes with frames that are paused now (none while no pause reaches this far: the
    // common case); wakeAt matters only when nothing is returned, so it takes them all.
    uint8_t paused = 0;
    if (now < PauseHorizon())
    {
        for (uint32_t c = 0; c < 8; ++c)
        {
            if ((m_nonEmpty & (1u << c)) && IsPaused(uint8_t(c), now))
            {
                paused |= uint8_t(1u << c);
                wakeAt = std::min(wakeAt, PauseExpiry(uint8_t(c)));
            }
        }
    }
    // Strict-priority classes first, highest class first.
    const uint32_t strict = m_strictMask & m_nonEmpty & ~paused;
    if (strict != 0)
    {
        return Pop(uint8_t(31 - __builtin_clz(strict)));
    }
    // DWRR among the other classes that have frames and are not paused. Deficits grow by a
    // quantum per visit, so while any class is eligible the loop ends with a frame even when a
    // frame is larger than the quantum (jumbo MTUs): never give up with frames queued. The
    // round goes straight to the next eligible class: the classes it passes over change no
    // state (an empty class's deficit is already zero, a paused one keeps its own).
    const uint32_t eligible = ~m_strictMask & m_nonEmpty & ~paused & 0xffu;
    if (eligible == 0)
    {
        return nullptr;
    }
    while (true)
    {
        uint32_t c = m_dwrrCur;
        if (!(eligible & (1u << c)))
        {
            const uint32_t ahead = eligible & (0xffu << c);
            c = uint32_t(__builtin_ctz(ahead != 0 ? ahead : eligible));
            m_dwrrCur = c;
            m_dwrrFresh = false;
        }
        if (!m_dwrrFresh)
        {
            m_deficit[c] += m_quantum;
            m_dwrrFresh = true;
        }
        const uint32_t size = m_q[c].front()->frameBytes;
        if (m_deficit[c] >= int64_t(size))
        {
            m_deficit[c] -= size;
            FabricPacket* p = Pop(uint8_t(c));
            if (!(m_nonEmpty & (1u << c)))
            {
                m_deficit[c] = 0;
                m_dwrrCur = (c + 1) & 7;
                m_dwrrFresh = false;
            }
            return p;
        }
        m_dwrrCur = (c + 1) & 7;
        m_dwrrFresh = false;
    }
}

void
SwitchPort::OnTransmitStart(FabricPacket* p)
{
    if (p->type == FrameType::Data && p->intBytes > 0)
    {
        // The record describes the link as this frame leaves: its rate, the time, the bytes
        // sent so far including this frame, and the queue it leaves behind (HPCC's INT).
        p->frameBytes += m_intHopBytes;
        p->intBytes += m_intHopBytes;
        m_intBytesAdded += m_intHopBytes;
        IntHop h;
        h.rateBps = GetRateBps();
        h.tsPs = uint64_t(FabricClock::Now().GetPicoSeconds());
        h.txBytes = m_txWireBytes + p->WireBytes();
        h.qlenBytes = uint32_t(std::min<uint64_t>(m_totalBytes, UINT32_MAX));
        p->intHops.push_back(h);
    }
    m_txWireBytes += p->WireBytes();
}

bool
SwitchPort::HasPendingWork() const
{
    return FabricNetDevice::HasPendingWork() || m_totalBytes > 0;
}

void
SwitchPort::HandleReceive(FabricPacket* p)
{
    m_switch->Forward(this, p);
}

void
SwitchPort::PrefetchReceivePath(unsigned ahead, const FabricPacket* p) const
{
    switch (ahead)
    {
    case 4:
        // This port's own fields come after the device's (its switch and index first).
        __builtin_prefetch(&m_switch);
        __builtin_prefetch(&m_index);
        break;
    case 3:
        // The switch is line-aligned; Forward reads its first two lines.
        __builtin_prefetch(m_switch);
        __builtin_prefetch(reinterpret_cast<const char*>(m_switch) + 64);
        break;
    default:
        m_switch->PrefetchForward(m_index, p, ahead);
    }
}

void
SwitchPort::PrefetchAsEgress(uint8_t prio) const
{
    PrefetchHot();
    __builtin_prefetch(&m_switch);
    __builtin_prefetch(&m_index);
    __builtin_prefetch(&m_qBytes[prio & 7]);
    __builtin_prefetch(&m_q[prio & 7]);
}

void
SwitchPort::PausePeer(uint8_t prio)
{
    if (m_xoff[prio])
    {
        return;
    }
    m_xoff[prio] = true;
    SendPfc(prio, m_pauseQuanta);
    // Refresh before the pause expires at the peer while the condition holds.
    Time half = PicoSeconds(PauseQuantaPs(m_pauseQuanta, GetRateBps()) / 2);
    m_xoffRefresh[prio].Schedule(half, &SwitchPort::RefreshXoff, this, prio);
}

void
SwitchPort::RefreshXoff(uint8_t prio)
{
    m_xoffRefresh[prio].Ran();
    if (!m_xoff[prio])
    {
        return;
    }
    SendPfc(prio, m_pauseQuanta);
    Time half = PicoSeconds(PauseQuantaPs(m_pauseQuanta, GetRateBps()) / 2);
    m_xoffRefresh[prio].Schedule(half, &SwitchPort::RefreshXoff, this, prio);
}

void
SwitchPort::ResumePeer(uint8_t prio)
{
    if (!m_xoff[prio])
    {
        return;
    }
    m_xoff[prio] = false;
    m_xoffRefresh[prio].Cancel();
    SendPfc(prio, 0);
}

uint64_t
SwitchPort::QueuedFrames() const
{
    uint64_t n = FabricNetDevice::QueuedFrames();
    for (auto& q : m_q)
    {
        n += q.size();
    }
    return n;
}

uint64_t
SwitchPort::QueuedBytes() const
{
    return FabricNetDevice::QueuedBytes() + m_totalBytes;
}

void
SwitchPort::ProbeRest(MemoProbe& probe) const
{
    FabricNetDevice::ProbeRest(probe);
    if (m_totalBytes != 0)
    {
        probe.Block(MemoName() + ": " + std::to_string(EgressFrames()) + " frame(s) queued");
    }
    for (uint8_t c = 0; c < 8; ++c)
    {
        if (m_xoff[c] || m_xoffRefresh[c].IsPending())
        {
            probe.Block(MemoName() + ": pausing its peer on class " + std::to_string(c));
        }
    }
    if (!m_queueTrace.IsEmpty())
    {
        probe.Block(MemoName() + ": a queue trace is connected");
    }
    probe.Mix(m_wdDrop);
    probe.Mix(m_dwrrCur);
    probe.Mix(m_dwrrFresh);
    for (int64_t d : m_deficit)
    {
        probe.Mix(uint64_t(d));
    }
}

void
SwitchPort::VisitMemo(MemoRecord& r)
{
    FabricNetDevice::VisitMemo(r);
    r.Max(m_maxBytes);
    r.Signal(m_ecnMarked);
    r.Sum(m_txWireBytes);
    r.Sum(m_intBytesAdded);
    r.Last(m_dwrrCur);
    r.Last(m_dwrrFresh);
    for (int64_t& d : m_deficit)
    {
        r.Last(d);
    }
}

} // namespace ns3
