#include "remote-links.h"

#include "rank-devices.h"

#include "ns3/fabric-channel.h"
#include "ns3/fabric-net-device.h"
#include "ns3/fabric-topology-helper.h"
#include "ns3/frame-codec.h"
#include "ns3/mpi-interface.h"
#include "ns3/simulator.h"

#include <cstring>

namespace fabricsim
{

using namespace ns3;

namespace
{

/// Before each frame: link (4), end (1), arrival in picoseconds (8), encoding length (2).
constexpr uint32_t kRecordHeader = 15;

template <typename T>
void
Put(std::vector<uint8_t>& b, T v)
{
    const size_t at = b.size();
    b.resize(at + sizeof(T));
    std::memcpy(b.data() + at, &v, sizeof(T));
}

template <typename T>
T
Get(const std::vector<uint8_t>& b, uint32_t& at)
{
    NS_ABORT_MSG_IF(at + sizeof(T) > b.size(), "RemoteLinks: a truncated batch");
    T v;
    std::memcpy(&v, b.data() + at, sizeof(T));
    at += sizeof(T);
    return v;
}

} // namespace

RemoteLinks::RemoteLinks(FabricTopologyHelper& fabric, uint32_t rank)
    : m_fabric(fabric)
    , m_rank(rank)
{
    const auto device = AddRankDevices(fabric, rank, MakeCallback(&RemoteLinks::Receive, this));
    m_outbox.resize(device.size());
    for (size_t r = 0; r < device.size(); ++r)
    {
        m_outbox[r].node = device[r].first;
        m_outbox[r].ifIndex = device[r].second;
    }
    const uint32_t links = uint32_t(fabric.GetTopology().links.size());
    m_farRank.assign(links, rank);
    for (uint32_t l = 0; l < links; ++l)
    {
        Ptr<FabricChannel> ch = fabric.GetLink(l);
        Ptr<NetDevice> dev[2] = {ch->GetDevice(0), ch->GetDevice(1)};
        const uint32_t sys[2]
            = {dev[0]->GetNode()->GetSystemId(), dev[1]->GetNode()->GetSystemId()};
        if (sys[0] == sys[1] || (sys[0] != rank && sys[1] != rank))
        {
            continue;
        }
        const int far = sys[0] == rank ? 1 : 0;
        m_farRank[l] = sys[far];
        Outbox& box = m_outbox[sys[far]];
        box.lookahead
            = box.lookahead.IsZero() ? ch->GetDelay() : std::min(box.lookahead, ch->GetDelay());
        ch->SetRemoteEnd(far, MakeCallback(&RemoteLinks::Send, this).Bind(l, far));
        ++m_wired;
    }
}

// Pending flushes are the simulator's to drop (Simulator::Destroy), before or after this.
RemoteLinks::~RemoteLinks() = default;

void
RemoteLinks::Send(uint32_t link, int end, const FabricPacket& p, uint64_t epoch, Time at)
{
    const uint32_t rank = m_farRank[link];
    Outbox& box = m_outbox[rank];
    const uint32_t size = EncodedFrameBytes(p);
    if (!box.bytes.empty() && box.bytes.size() + kRecordHeader + size > kMpiMessageBytes)
    {
        Flush(rank);
    }
    const bool first = box.bytes.empty();
    Put(box.bytes, link);
    Put(box.bytes, uint8_t(end));
    Put(box.bytes, at.GetTimeStep());
    Put(box.bytes, uint16_t(size));
    const size_t from = box.bytes.size();
    box.bytes.resize(from + size);
    EncodeFrameTo(p, epoch, box.bytes.data() + from);
    ++m_frames;
    box.earliest = first ? at : std::min(box.earliest, at);
    // The outbox must leave before its earliest frame's arrival less the lookahead: ns-3's
    // granted-time window runs the events of its last picosecond too, so a message arriving
    // exactly a lookahead after its window's start could come after them. A frame's arrival is
    // its serialisation (at least a picosecond) plus a delay of at least the lookahead after it
    // was sent, so the deadline is never in the past.
    const Time deadline = box.earliest - box.lookahead - PicoSeconds(1);
    if (!box.flush.IsPending() || box.flushAt > deadline)
    {
        box.flush.Cancel();
        box.flush.Schedule(deadline - Simulator::Now(), &RemoteLinks::FlushEvent, this, rank);
        box.flushAt = deadline;
    }
}

void
RemoteLinks::FlushEvent(uint32_t rank)
{
    m_outbox[rank].flush.Ran();
    Flush(rank);
}

void
RemoteLinks::Flush(uint32_t rank)
{
    Outbox& box = m_outbox[rank];
    box.flush.Cancel(); // when the outbox filled up before its deadline
    if (box.bytes.empty())
    {
        return;
    }
    MpiInterface::SendPacket(Create<Packet>(box.bytes.data(), uint32_t(box.bytes.size())),
                             box.earliest,
                             box.node,
                             box.ifIndex);
    ++m_messages;
    box.bytes.clear();
}

void
RemoteLinks::Receive(Ptr<Packet> batch)
{
    auto bytes = std::make_shared<std::vector<uint8_t>>(batch->GetSize());
    batch->CopyData(bytes->data(), uint32_t(bytes->size()));
    const Time now = Simulator::Now();
    uint32_t at = 0;
    while (at < bytes->size())
    {
        const uint32_t record = at;
        Get<uint32_t>(*bytes, at);
        Get<uint8_t>(*bytes, at);
        const Time arrival = TimeStep(Get<int64_t>(*bytes, at));
        const uint16_t size = Get<uint16_t>(*bytes, at);
        at += size;
        NS_ABORT_MSG_IF(at > bytes->size() || arrival < now, "RemoteLinks: a malformed batch");
        Simulator::Schedule(arrival - now, &RemoteLinks::Deliver, this, bytes, record);
    }
}

void
RemoteLinks::Deliver(std::shared_ptr<const std::vector<uint8_t>> batch, uint32_t offset)
{
    const uint32_t link = Get<uint32_t>(*batch, offset);
    const int end = Get<uint8_t>(*batch, offset);
    Get<int64_t>(*batch, offset);
    const uint16_t size = Get<uint16_t>(*batch, offset);
    uint64_t epoch = 0;
    FabricPacket* p = DecodeFrameFrom(batch->data() + offset, size, &epoch);
    m_fabric.GetLink(link)->ReceiveRemote(end, p, epoch);
}

} // namespace fabricsim
