#include "fabric-channel.h"

#include "fabric-clock.h"
#include "fabric-net-device.h"
#include "keyed-event.h"

#include "ns3/double.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/simulator.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("FabricChannel");
NS_OBJECT_ENSURE_REGISTERED(FabricChannel);

/// The arrival of the earliest frame on the wire toward end `dir`, keyed by where it arrives
/// (ns3::FabricScheduler's order). One per direction, scheduled again for every frame.
class FabricChannel::DeliveryEvent final : public KeyedEventImpl
{
  public:
    DeliveryEvent(FabricChannel* channel, int dir, uint64_t key)
        : KeyedEventImpl(key)
        , m_channel(channel)
        , m_dir(dir)
    {
    }

    /// The channel is disposed. Simulator::Destroy disposes channels before it drops the
    /// events still pending; those never run, and a detached one could not touch the channel.
    void Detach()
    {
        m_channel = nullptr;
    }

    void Prefetch(unsigned ahead) const override
    {
        if (!m_channel)
        {
            return;
        }
        m_channel->PrefetchDelivery(m_dir, ahead);
    }

  private:
    void Notify() override
    {
        if (m_channel)
        {
            m_channel->Deliver(m_dir);
        }
    }

    FabricChannel* m_channel;
    int m_dir;
};

TypeId
FabricChannel::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::FabricChannel")
              .SetParent<Channel>()
              .SetGroupName("Rdma")
              .AddConstructor<FabricChannel>()
              .AddAttribute("Delay",
                            "Propagation delay of the link (each direction).",
                            TimeValue(MicroSeconds(1)),
                            MakeTimeAccessor(&FabricChannel::m_delay),
                            MakeTimeChecker())
              .AddAttribute("LossRate",
                            "Probability that a frame is corrupted in flight (dropped at the "
                            "receiver, counted as corruption).",
                            DoubleValue(0.0),
                            MakeDoubleAccessor(&FabricChannel::m_lossRate),
                            MakeDoubleChecker<double>(0.0, 1.0));
    return tid;
}

FabricChannel::FabricChannel()
    : m_epoch(0)
    , m_lossRate(0.0)
    , m_up(true)
{
    m_rng[0] = CreateObject<UniformRandomVariable>();
    m_rng[1] = CreateObject<UniformRandomVariable>();
}

void
FabricChannel::Attach(Ptr<FabricNetDevice> dev)
{
    NS_ABORT_MSG_IF(m_dev[1], "FabricChannel: already has two ends");
    int i = m_dev[0] ? 1 : 0;
    m_dev[i] = dev;
    // Cached: the receiving node's id is the event context of every delivery.
    m_context[i] = dev->GetNode() ? dev->GetNode()->GetId() : 0;
}

void
FabricChannel::Transmit(FabricNetDevice* from, FabricPacket* p, Time txTime)
{
    int i = (from == PeekPointer(m_dev[0])) ? 1 : 0;
    const Time delay = txTime + m_delay;
    if (!m_remote[i].IsNull())
    {
        ++m_remoteSent;
        m_remoteSentBytes += p->frameBytes;
        m_remoteSentPfc += (p->type == FrameType::Pfc);
        m_remote[i](*p, m_epoch, FabricClock::Now() + delay);
        delete p;
        return;
    }
    ++m_inFlight;
    m_inFlightBytes += p->frameBytes;
    m_inFlightPfc += (p->type == FrameType::Pfc);
    const bool idle = m_wire[i].Empty();
    m_wire[i].Push({(FabricClock::Now() + delay).GetTimeStep(), p, m_epoch});
    if (idle)
    {
        ScheduleArrival(i, delay);
    }
}

void
FabricChannel::SetRemoteEnd(int end, RemoteSend send)
{
    NS_ABORT_MSG_IF(end < 0 || end > 1, "FabricChannel::SetRemoteEnd: end " << end);
    m_remote[end] = send;
}

int
FabricChannel::EndOf(const FabricNetDevice* dev) const
{
    NS_ABORT_MSG_IF(dev != PeekPointer(m_dev[0]) && dev != PeekPointer(m_dev[1]),
                    "FabricChannel::EndOf: the device is not attached here");
    return dev == PeekPointer(m_dev[0]) ? 0 : 1;
}

void
FabricChannel::ReceiveRemote(int i, FabricPacket* p, uint64_t epoch)
{
    ++m_remoteReceived;
    m_remoteReceivedBytes += p->frameBytes;
    m_remoteReceivedPfc += (p->type == FrameType::Pfc);
    ++m_inFlight;
    m_inFlightBytes += p->frameBytes;
    m_inFlightPfc += (p->type == FrameType::Pfc);
    // Through the wire and the keyed arrival event as a local frame: this runs as an unkeyed
    // event at the arrival time, before every keyed one of that time (FabricScheduler), so the
    // arrival takes the place it has in a run on one rank.
    const bool idle = m_wire[i].Empty();
    m_wire[i].Push({FabricClock::Now().GetTimeStep(), p, epoch});
    if (idle)
    {
        ScheduleArrival(i, Time(0));
    }
}

void
FabricChannel::ScheduleArrival(int i, Time delay)
{
    if (!m_arrival[i])
    {
        // The key needs the device's ifIndex, known only once its node holds it: first use.
        m_arrivalKey[i] = KeyedEventImpl::ArrivalKey(m_context[i], m_dev[i]->GetIfIndex());
        m_arrival[i] = new DeliveryEvent(this, i, m_arrivalKey[i]);
    }
    m_arrival[i]->Ref(); // the simulator's reference, dropped after the event runs
    Simulator::ScheduleWithContext(m_context[i], delay, m_arrival[i]);
}

void
FabricChannel::PrefetchDelivery(int i, unsigned ahead) const
{
    if (ahead == 5)
    {
        // The channel itself: its hot fields span two lines.
        __builtin_prefetch(&m_dev[0]);
        __builtin_prefetch(&m_inFlightPfc);
        return;
    }
    if (m_wire[i].Empty())
    {
        return;
    }
    const FabricNetDevice* to = PeekPointer(m_dev[i]);
    if (ahead == 4)
    {
        __builtin_prefetch(&m_wire[i].Front());
        to->PrefetchHot();
        to->PrefetchReceivePath(4, nullptr);
        return;
    }
    const FabricPacket* p = m_wire[i].Front().p;
    if (ahead == 3)
    {
        __builtin_prefetch(p);
        __builtin_prefetch(reinterpret_cast<const char*>(p) + 64);
        to->PrefetchReceivePath(3, nullptr);
        return;
    }
    to->PrefetchReceivePath(ahead, p);
}

void
FabricChannel::Deliver(int i)
{
    const WireFifo::Frame w = m_wire[i].Front();
    m_wire[i].Pop();
    if (!m_wire[i].Empty())
    {
        ScheduleArrival(i, TimeStep(m_wire[i].Front().arrivalTs) - FabricClock::Now());
    }
    FabricPacket* p = w.p;
    --m_inFlight;
    m_inFlightBytes -= p->frameBytes;
    m_inFlightPfc -= (p->type == FrameType::Pfc);
    FabricNetDevice* to = PeekPointer(m_dev[i]);
    if (!m_up || w.epoch != m_epoch)
    {
        to->DropPacket(p, DropReason::LinkDown);
        return;
    }
    if (m_lossRate > 0.0 && m_rng[i]->GetValue() < m_lossRate)
    {
        to->DropPacket(p, DropReason::Corruption);
        return;
    }
    to->Receive(p);
}

void
FabricChannel::DoDispose()
{
    for (int i = 0; i < 2; ++i)
    {
        m_wire[i].DeleteFrames();
        if (m_arrival[i])
        {
            m_arrival[i]->Detach();
            m_arrival[i]->Unref();
            m_arrival[i] = nullptr;
        }
    }
    m_dev[0] = nullptr;
    m_dev[1] = nullptr;
    Channel::DoDispose();
}

void
FabricChannel::SetUp(bool up)
{
    if (up == m_up)
    {
        return;
    }
    m_up = up;
    if (!up)
    {
        ++m_epoch;
    }
    for (auto& d : m_dev)
    {
        if (d)
        {
            d->NotifyLinkChange();
        }
    }
}

bool
FabricChannel::IsUp() const
{
    return m_up;
}

Time
FabricChannel::GetDelay() const
{
    return m_delay;
}

double
FabricChannel::GetLossRate() const
{
    return m_lossRate;
}

Ptr<FabricNetDevice>
FabricChannel::GetPeer(const FabricNetDevice* dev) const
{
    return dev == PeekPointer(m_dev[0]) ? m_dev[1] : m_dev[0];
}

std::size_t
FabricChannel::GetNDevices() const
{
    return m_dev[1] ? 2 : (m_dev[0] ? 1 : 0);
}

Ptr<NetDevice>
FabricChannel::GetDevice(std::size_t i) const
{
    return m_dev[i];
}

int64_t
FabricChannel::AssignStreams(int64_t stream)
{
    // One stream per direction, so that a copy of the channel on another MPI rank, which
    // delivers only one direction, draws what a run on one rank draws. The reverse direction's
    // stream is the assigned one moved far past any that AssignStreams hands out (ns-3's own
    // automatic streams start at 2^63): taking a second index would move the streams of every
    // switch and NIC assigned after the links, and with them every ECN-marked run.
    m_rng[0]->SetStream(stream);
    m_rng[1]->SetStream(stream + kReverseStreamOffset);
    return 1;
}

void
FabricChannel::ProbeRest(MemoProbe& probe) const
{
    const std::string who = "link " + std::to_string(GetId());
    if (m_inFlight != 0)
    {
        probe.Block(who + ": " + std::to_string(m_inFlight) + " frame(s) on the wire");
    }
    if (!m_up)
    {
        probe.Block(who + ": down");
    }
    if (m_lossRate > 0.0)
    {
        probe.Block(who + ": loses frames at random");
    }
    probe.Mix(uint64_t(m_delay.GetPicoSeconds()));
}

} // namespace ns3
