#include "control-channel.h"

#include "rank-devices.h"

#include "ns3/abort.h"
#include "ns3/fabric-topology-helper.h"
#include "ns3/mpi-interface.h"
#include "ns3/simulator.h"

#include <cstring>

namespace fabricsim
{

using namespace ns3;

namespace
{

/// A piece: kind (1), source rank (4), arrival in picoseconds (8), piece index (4), pieces (4).
constexpr uint32_t kHeader = 21;

} // namespace

ControlChannel::ControlChannel(FabricTopologyHelper& fabric, uint32_t self)
    : m_self(self)
{
    m_device = AddRankDevices(fabric, self, MakeCallback(&ControlChannel::Receive, this));
}

void
ControlChannel::OnMessage(uint8_t kind, std::function<void(const std::string&)> handler)
{
    m_handlers[kind] = std::move(handler);
}

void
ControlChannel::Broadcast(uint8_t kind, const std::string& bytes, Time at)
{
    const uint32_t room = kMpiMessageBytes - kHeader;
    const uint32_t pieces = std::max<uint32_t>(1, uint32_t((bytes.size() + room - 1) / room));
    const int64_t ps = at.GetTimeStep();
    for (uint32_t r = 0; r < m_device.size(); ++r)
    {
        if (r == m_self)
        {
            continue;
        }
        for (uint32_t i = 0; i < pieces; ++i)
        {
            const size_t from = size_t(i) * room;
            const size_t n = std::min<size_t>(room, bytes.size() - std::min(bytes.size(), from));
            std::vector<uint8_t> buf(kHeader + n);
            buf[0] = kind;
            std::memcpy(&buf[1], &m_self, 4);
            std::memcpy(&buf[5], &ps, 8);
            std::memcpy(&buf[13], &i, 4);
            std::memcpy(&buf[17], &pieces, 4);
            std::memcpy(buf.data() + kHeader, bytes.data() + from, n);
            MpiInterface::SendPacket(Create<Packet>(buf.data(), uint32_t(buf.size())),
                                     at,
                                     m_device[r].first,
                                     m_device[r].second);
        }
    }
}

void
ControlChannel::Receive(Ptr<Packet> piece)
{
    const uint32_t size = piece->GetSize();
    NS_ABORT_MSG_IF(size < kHeader, "ControlChannel: a piece of " << size << " bytes");
    std::vector<uint8_t> buf(size);
    piece->CopyData(buf.data(), size);
    const uint8_t kind = buf[0];
    uint32_t source = 0;
    int64_t ps = 0;
    uint32_t index = 0;
    uint32_t pieces = 0;
    std::memcpy(&source, &buf[1], 4);
    std::memcpy(&ps, &buf[5], 8);
    std::memcpy(&index, &buf[13], 4);
    std::memcpy(&pieces, &buf[17], 4);
    auto& [got, bytes] = m_partial[{source, kind, ps}];
    NS_ABORT_MSG_IF(index != got, "ControlChannel: piece " << index << " after " << got);
    bytes.append(reinterpret_cast<const char*>(buf.data()) + kHeader, size - kHeader);
    if (++got < pieces)
    {
        return;
    }
    const std::string message = std::move(bytes);
    m_partial.erase({source, kind, ps});
    auto h = m_handlers.find(kind);
    NS_ABORT_MSG_IF(h == m_handlers.end(), "ControlChannel: no handler for kind " << int(kind));
    h->second(message);
}

} // namespace fabricsim
