#include "fabric-net-device.h"

#include "fabric-channel.h"
#include "fabric-clock.h"
#include "roce-headers.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/data-rate.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/pcap-file-wrapper.h"
#include "ns3/simulator.h"
#include "ns3/trace-helper.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("FabricNetDevice");

/// TransmitComplete as an event object the device keeps: no allocation and no EventId per
/// frame on a busy port.
class FabricNetDevice::CompletionEvent final : public EventImpl
{
  public:
    explicit CompletionEvent(FabricNetDevice* dev)
        : m_dev(dev)
    {
    }

    /// The device is disposed: a copy still pending must not run.
    void Detach()
    {
        m_dev = nullptr;
    }

  private:
    void Notify() override
    {
        if (m_dev)
        {
            m_dev->TransmitComplete();
        }
    }

    FabricNetDevice* m_dev;
};
NS_OBJECT_ENSURE_REGISTERED(FabricNetDevice);

const char*
DropReasonName(DropReason r)
{
    switch (r)
    {
    case DropReason::BufferOverflow:
        return "buffer_overflow";
    case DropReason::LinkDown:
        return "link_down";
    case DropReason::Corruption:
        return "corruption";
    case DropReason::TtlExpired:
        return "ttl_expired";
    case DropReason::NoRoute:
        return "no_route";
    case DropReason::PfcWatchdog:
        return "pfc_watchdog";
    default:
        return "unknown";
    }
}

TypeId
FabricNetDevice::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::FabricNetDevice")
              .SetParent<NetDevice>()
              .SetGroupName("Rdma")
              .AddAttribute("DataRate",
                            "Line rate of the port.",
                            DataRateValue(DataRate("100Gbps")),
                            MakeDataRateAccessor(&FabricNetDevice::m_rate),
                            MakeDataRateChecker())
              .AddAttribute("Mtu",
                            "Maximum RDMA payload per frame in bytes (RoCE path MTU).",
                            UintegerValue(1000),
                            MakeUintegerAccessor(&FabricNetDevice::m_mtu),
                            MakeUintegerChecker<uint32_t>(64, 9000))
              .AddTraceSource("Tx",
                              "A frame starts serialisation on this port.",
                              MakeTraceSourceAccessor(&FabricNetDevice::m_txTrace),
                              "ns3::FabricNetDevice::FrameTracedCallback")
              .AddTraceSource("Rx",
                              "A frame fully arrived at this port.",
                              MakeTraceSourceAccessor(&FabricNetDevice::m_rxTrace),
                              "ns3::FabricNetDevice::FrameTracedCallback")
              .AddTraceSource("Drop",
                              "A frame was dropped here (with the reason).",
                              MakeTraceSourceAccessor(&FabricNetDevice::m_dropTrace),
                              "ns3::FabricNetDevice::DropTracedCallback")
              .AddTraceSource("PfcRx",
                              "A PFC frame arrived: priority, quanta (0 = resume).",
                              MakeTraceSourceAccessor(&FabricNetDevice::m_pfcRxTrace),
                              "ns3::FabricNetDevice::PfcTracedCallback")
              .AddTraceSource("PfcTx",
                              "A PFC frame was sent: priority, quanta (0 = resume).",
                              MakeTraceSourceAccessor(&FabricNetDevice::m_pfcTxTrace),
                              "ns3::FabricNetDevice::PfcTracedCallback");
    return tid;
}

FabricNetDevice::FabricNetDevice()
    : m_busyUntil(0)
    , m_rateBps(100000000000ULL)
    , m_completionPending(false)
    , m_pauseHorizon(0)
    , m_mtu(1000)
    , m_ifIndex(0)
    , m_rate(DataRate("100Gbps"))
    , m_wakeAt(Time::Max())
{
    m_pausedUntil.fill(Time(0));
    m_peerPausedUntil.fill(Time(0));
    m_pauseStart.fill(Time(0));
}

FabricNetDevice::~FabricNetDevice()
{
    for (auto* p : m_pfcQueue)
    {
        delete p;
    }
}

void
FabricNetDevice::DoDispose()
{
    if (m_completion)
    {
        m_completion->Detach();
        m_completion->Unref();
        m_completion = nullptr;
    }
    m_channel = nullptr;
    m_linkUp = false;
    m_node = nullptr;
    m_pcap = nullptr;
    NetDevice::DoDispose();
}

void
FabricNetDevice::Attach(Ptr<FabricChannel> ch)
{
    m_channel = ch;
    m_rateBps = m_rate.GetBitRate();
    NS_ABORT_MSG_IF(m_rateBps == 0, "FabricNetDevice: zero DataRate");
    ch->Attach(this);
    m_linkUp = ch->IsUp();
}

Ptr<FabricChannel>
FabricNetDevice::GetFabricChannel() const
{
    return m_channel;
}

DataRate
FabricNetDevice::GetDataRate() const
{
    return m_rate;
}

bool
FabricNetDevice::IsPaused(uint8_t prio) const
{
    return IsPaused(prio, FabricClock::Now());
}

bool
FabricNetDevice::PeerPausing(uint8_t prio) const
{
    return FabricClock::Now() < m_peerPausedUntil[prio];
}

void
FabricNetDevice::SetPauseIgnored(uint8_t prio, bool ignore)
{
    if (ignore)
    {
        m_pauseIgnored |= uint8_t(1u << prio);
        SetPausedUntil(prio, FabricClock::Now());
    }
    else
    {
        m_pauseIgnored &= uint8_t(~(1u << prio));
        SetPausedUntil(prio, m_peerPausedUntil[prio]);
    }
    Wake();
}

void
FabricNetDevice::SetPausedUntil(uint8_t prio, Time until)
{
    m_pausedUntil[prio] = until;
    m_pauseHorizon = std::max(m_pauseHorizon, until);
}

void
FabricNetDevice::Receive(FabricPacket* p)
{
    m_stats.rxFrames++;
    m_stats.rxBytes += p->frameBytes;
    if (m_pcap)
    {
        WritePcap(p);
    }
    if (p->type == FrameType::Pfc)
    {
        m_stats.rxPfcFrames++;
        // Pause quanta are in units of 512 bit times at this port's speed; 0 resumes.
        for (uint8_t c = 0; c < 8; ++c)
        {
            if (!(p->pfcClassEnable & (1u << c)))
            {
                continue;
            }
            uint16_t q = p->pfcQuanta[c];
            (q ? m_stats.pfcReceived[c] : m_stats.pfcResumeReceived[c])++;
            m_pfcRxTrace(c, q);
            Time now = FabricClock::Now();
            if (q == 0)
            {
                m_peerPausedUntil[c] = now;
            }
            else
            {
                if (now >= m_peerPausedUntil[c])
                {
                    m_pauseStart[c] = now; // a new pause, not a refresh
                }
                m_peerPausedUntil[c] = now + PicoSeconds(PauseQuantaPs(q, m_rateBps));
            }
            if (!(m_pauseIgnored & (1u << c)))
            {
                SetPausedUntil(c, m_peerPausedUntil[c]);
            }
        }
        delete p;
        Wake();
        return;
    }
    m_stats.rxDataFrames += (p->type == FrameType::Data);
    m_rxTrace(*p);
    HandleReceive(p);
}

void
FabricNetDevice::SendPfc(uint8_t prio, uint16_t quanta)
{
    auto* p = new FabricPacket;
    p->type = FrameType::Pfc;
    p->priority = prio;
    p->pfcClassEnable = uint8_t(1u << prio);
    p->pfcQuanta[prio] = quanta;
    p->frameBytes = RoceSize::kPfcFrame;
    (quanta ? m_stats.pfcSent[prio] : m_stats.pfcResumeSent[prio])++;
    m_pfcTxTrace(prio, quanta);
    m_pfcQueue.push_back(p);
    ++m_pfcQueued;
    Wake();
}

void
FabricNetDevice::Wake()
{
    if (!m_channel)
    {
        return;
    }
    const Time now = FabricClock::Now();
    if (now < m_busyUntil)
    {
        if (!m_completionPending)
        {
            ScheduleWake(m_busyUntil, now);
        }
        return;
    }
    FabricPacket* p = nullptr;
    if (m_pfcQueued != 0)
    {
        p = m_pfcQueue.front();
        m_pfcQueue.pop_front();
        --m_pfcQueued;
    }
    else
    {
        Time wakeAt = Time::Max();
        p = DequeueNext(now, wakeAt);
        if (!p)
        {
            if (wakeAt != Time::Max())
            {
                ScheduleWake(wakeAt, now);
            }
            return;
        }
    }
    StartTransmit(p, now);
}

void
FabricNetDevice::ScheduleWake(Time at, Time now)
{
    // One pending wake-up at most: keep the earliest. m_wakeAt is the pending one's time (Max:
    // none), exact where EventId::IsRunning is not (pending-event.h).
    if (m_wakeAt <= at)
    {
        return;
    }
    if (m_wakeAt != Time::Max())
    {
        m_wakeEvent.PeekEventImpl()->Cancel();
    }
    m_wakeAt = at;
    m_wakeEvent
        = Simulator::Schedule(at > now ? at - now : Time(0), &FabricNetDevice::WakeEvent, this);
}

void
FabricNetDevice::WakeEvent()
{
    m_wakeAt = Time::Max();
    Wake();
}

void
FabricNetDevice::StartTransmit(FabricPacket* p, Time now)
{
    OnTransmitStart(p);
    m_stats.txFrames++;
    m_stats.txBytes += p->frameBytes;
    if (p->type == FrameType::Data)
    {
        m_stats.txDataPayload += p->payload;
    }
    else if (p->type == FrameType::Pfc)
    {
        m_stats.txPfcFrames++;
    }
    m_txTrace(*p);
    if (m_pcap)
    {
        WritePcap(p);
    }
    Time t = TxTime(p->WireBytes());
    if (m_linkUp)
    {
        m_channel->Transmit(this, p, t);
    }
    else
    {
        DropPacket(p, DropReason::LinkDown);
    }
    m_busyUntil = now + t;
    m_completionPending = HasPendingWork();
    if (m_completionPending)
    {
        if (!m_completion)
        {
            m_completion = new CompletionEvent(this);
        }
        m_completion->Ref(); // the simulator's reference, dropped after the event runs
        Simulator::ScheduleWithContext(m_nodeId, t, m_completion);
    }
}

bool
FabricNetDevice::HasPendingWork() const
{
    return m_pfcQueued != 0;
}

bool
FabricNetDevice::IsBusy() const
{
    return FabricClock::Now() < m_busyUntil;
}

void
FabricNetDevice::TransmitComplete()
{
    m_completionPending = false;
    Wake();
}

void
FabricNetDevice::DropPacket(FabricPacket* p, DropReason reason)
{
    m_stats.drops[size_t(reason)]++;
    if (p->type == FrameType::Pfc)
    {
        m_stats.dropPfcFrames++;
    }
    m_stats.dropBytes[size_t(reason)] += p->frameBytes;
    m_dropTrace(*p, reason);
    delete p;
}

uint64_t
FabricNetDevice::QueuedFrames() const
{
    return m_pfcQueue.size();
}

uint64_t
FabricNetDevice::QueuedBytes() const
{
    uint64_t b = 0;
    for (auto* p : m_pfcQueue)
    {
        b += p->frameBytes;
    }
    return b;
}

void
FabricNetDevice::EnablePcap(const std::string& filename)
{
    // Nanosecond timestamps: frames at 400G are 80 ns apart, below pcap's microseconds.
    m_pcap = CreateObjectWithAttributes<PcapFileWrapper>("NanosecMode", BooleanValue(true));
    m_pcap->Open(filename, std::ios::out | std::ios::binary);
    m_pcap->Init(PcapHelper::DLT_EN10MB, 65535);
}

void
FabricNetDevice::WritePcap(const FabricPacket* p)
{
    Ptr<Packet> pkt = RoceFrameSerializer::Serialize(*p, m_address);
    m_pcap->Write(FabricClock::Now(), pkt);
}

void
FabricNetDevice::NotifyLinkChange()
{
    m_linkUp = m_channel && m_channel->IsUp();
    for (auto& cb : m_linkChangeCallbacks)
    {
        cb();
    }
    Wake();
}

// ---- NetDevice boilerplate: this device carries fabric frames, not ns-3 IP packets ----

void
FabricNetDevice::SetIfIndex(const uint32_t index)
{
    m_ifIndex = index;
}

uint32_t
FabricNetDevice::GetIfIndex() const
{
    return m_ifIndex;
}

Ptr<Channel>
FabricNetDevice::GetChannel() const
{
    return m_channel;
}

void
FabricNetDevice::SetAddress(Address address)
{
    m_address = Mac48Address::ConvertFrom(address);
}

Address
FabricNetDevice::GetAddress() const
{
    return m_address;
}

bool
FabricNetDevice::SetMtu(const uint16_t mtu)
{
    m_mtu = mtu;
    return true;
}

uint16_t
FabricNetDevice::GetMtu() const
{
    return uint16_t(m_mtu);
}

bool
FabricNetDevice::IsLinkUp() const
{
    return m_linkUp;
}

void
FabricNetDevice::AddLinkChangeCallback(Callback<void> callback)
{
    m_linkChangeCallbacks.push_back(callback);
}

bool
FabricNetDevice::IsBroadcast() const
{
    return false;
}

Address
FabricNetDevice::GetBroadcast() const
{
    return Mac48Address::GetBroadcast();
}

bool
FabricNetDevice::IsMulticast() const
{
    return false;
}

Address
FabricNetDevice::GetMulticast(Ipv4Address) const
{
    return Mac48Address::GetMulticast(Ipv4Address("224.0.0.1"));
}

Address
FabricNetDevice::GetMulticast(Ipv6Address addr) const
{
    return Mac48Address::GetMulticast(addr);
}

bool
FabricNetDevice::IsBridge() const
{
    return false;
}

bool
FabricNetDevice::IsPointToPoint() const
{
    return true;
}

bool
FabricNetDevice::Send(Ptr<Packet>, const Address&, uint16_t)
{
    // Traffic enters through queue pairs (RdmaNic::PostWrite), never the IP stack.
    return false;
}

bool
FabricNetDevice::SendFrom(Ptr<Packet>, const Address&, const Address&, uint16_t)
{
    return false;
}

Ptr<Node>
FabricNetDevice::GetNode() const
{
    return m_node;
}

void
FabricNetDevice::SetNode(Ptr<Node> node)
{
    m_node = node;
    m_nodeId = node ? node->GetId() : 0;
}

bool
FabricNetDevice::NeedsArp() const
{
    return false;
}

void
FabricNetDevice::SetReceiveCallback(NetDevice::ReceiveCallback)
{
}

void
FabricNetDevice::SetPromiscReceiveCallback(PromiscReceiveCallback)
{
}

bool
FabricNetDevice::SupportsSendFrom() const
{
    return false;
}

std::string
FabricNetDevice::MemoName() const
{
    return "node " + std::to_string(m_node ? m_node->GetId() : 0) + " device "
           + std::to_string(m_ifIndex);
}

void
FabricNetDevice::ProbeRest(MemoProbe& probe) const
{
    const Time now = probe.Now();
    if (!m_pfcQueue.empty())
    {
        probe.Block(MemoName() + ": " + std::to_string(m_pfcQueue.size()) + " PFC frame(s) queued");
    }
    if (m_busyUntil > now || m_completionPending)
    {
        probe.Block(MemoName() + ": a frame is being sent");
    }
    if (m_wakeAt != Time::Max())
    {
        probe.Block(MemoName() + ": a wake-up is pending");
    }
    for (uint8_t c = 0; c < 8; ++c)
    {
        if (m_pausedUntil[c] > now || m_peerPausedUntil[c] > now)
        {
            probe.Block(MemoName() + ": class " + std::to_string(c) + " paused");
        }
    }
    if (m_pcap)
    {
        probe.Block(MemoName() + ": a pcap capture is on");
    }
    if (!m_txTrace.IsEmpty() || !m_rxTrace.IsEmpty() || !m_dropTrace.IsEmpty()
        || !m_pfcRxTrace.IsEmpty() || !m_pfcTxTrace.IsEmpty())
    {
        probe.Block(MemoName() + ": a frame trace is connected");
    }
    probe.Mix(m_pauseIgnored);
}

void
FabricNetDevice::VisitMemo(MemoRecord& r)
{
    FabricDeviceStats& s = m_stats;
    for (uint64_t* f : {&s.txFrames,
                        &s.txBytes,
                        &s.rxFrames,
                        &s.rxBytes,
                        &s.rxDataFrames,
                        &s.txDataPayload,
                        &s.txPfcFrames,
                        &s.rxPfcFrames})
    {
        r.Sum(*f);
    }
    for (auto* a : {&s.pfcSent, &s.pfcResumeSent, &s.pfcReceived, &s.pfcResumeReceived})
    {
        for (uint64_t& f : *a)
        {
            r.Fault(f, "PFC pauses");
        }
    }
    r.Fault(s.dropPfcFrames, "drops");
    for (uint64_t& f : s.drops)
    {
        r.Fault(f, "drops");
    }
    r.SumBlock(s.dropBytes.data(), s.dropBytes.size());
    r.LastTime(m_busyUntil);
    for (uint8_t c = 0; c < 8; ++c)
    {
        r.LastTime(m_pausedUntil[c]);
        r.LastTime(m_peerPausedUntil[c]);
        r.LastTime(m_pauseStart[c]);
    }
    r.LastTime(m_wakeAt);
}

} // namespace ns3
