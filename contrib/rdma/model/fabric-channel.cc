#include "fabric-channel.h"

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

/// A frame's arrival at end `dir`, keyed by where it arrives (ns3::FabricScheduler's order).
/// It carries the frame, and deletes it if the simulation is destroyed before it runs.
class FabricChannel::DeliveryEvent final : public KeyedEventImpl
{
  public:
    DeliveryEvent(FabricChannel* channel, int dir, uint64_t key, FabricPacket* p, uint64_t epoch)
        : KeyedEventImpl(key)
        , m_channel(channel)
        , m_p(p)
        , m_epoch(epoch)
        , m_dir(dir)
    {
    }

    ~DeliveryEvent() override
    {
        delete m_p;
    }

  private:
    void Notify() override
    {
        FabricPacket* p = m_p;
        m_p = nullptr;
        m_channel->Deliver(p, m_epoch, m_dir);
    }

    FabricChannel* m_channel;
    FabricPacket* m_p;
    uint64_t m_epoch;
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
    m_rng = CreateObject<UniformRandomVariable>();
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
    ++m_inFlight;
    m_inFlightBytes += p->frameBytes;
    m_inFlightPfc += (p->type == FrameType::Pfc);
    int i = (from == PeekPointer(m_dev[0])) ? 1 : 0;
    if (m_arrivalKey[i] == UINT64_MAX)
    {
        m_arrivalKey[i] = KeyedEventImpl::ArrivalKey(m_context[i], m_dev[i]->GetIfIndex());
    }
    Simulator::ScheduleWithContext(
        m_context[i], txTime + m_delay, new DeliveryEvent(this, i, m_arrivalKey[i], p, m_epoch));
}

void
FabricChannel::Deliver(FabricPacket* p, uint64_t epoch, int i)
{
    --m_inFlight;
    m_inFlightBytes -= p->frameBytes;
    m_inFlightPfc -= (p->type == FrameType::Pfc);
    FabricNetDevice* to = PeekPointer(m_dev[i]);
    if (!m_up || epoch != m_epoch)
    {
        to->DropPacket(p, DropReason::LinkDown);
        return;
    }
    if (m_lossRate > 0.0 && m_rng->GetValue() < m_lossRate)
    {
        to->DropPacket(p, DropReason::Corruption);
        return;
    }
    to->Receive(p);
}

void
FabricChannel::DoDispose()
{
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
    m_rng->SetStream(stream);
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
