/*
 * Where one rank of a distributed run sends another rank messages that are not a link's frames
 * (frame batches, end notices, deadlock snapshots): a device on the first node of every rank,
 * added on every rank alike, since ns-3's MpiInterface::SendPacket addresses a message by node
 * and interface index; this rank's own device takes messages in through an MpiReceiver.
 */
#ifndef FABRICSIM_RANK_DEVICES_H
#define FABRICSIM_RANK_DEVICES_H

#include "ns3/callback.h"
#include "ns3/packet.h"
#include "ns3/ptr.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace ns3
{
class FabricTopologyHelper;
}

namespace fabricsim
{

/// The most bytes of one message: ns-3's 2,000-byte MPI receive buffer less its own 16 bytes
/// and the ns3::Packet's serialisation (under 40 bytes for a packet with no headers or tags).
constexpr uint32_t kMpiMessageBytes = 1940;

/**
 * Adds a device to the first node of every rank of \p fabric (installed, with system ids), on
 * this rank \p self with \p receive taking what arrives there. Returns per rank the node id and
 * interface index to send to.
 */
std::vector<std::pair<uint32_t, uint32_t>> AddRankDevices(
    ns3::FabricTopologyHelper& fabric,
    uint32_t self,
    ns3::Callback<void, ns3::Ptr<ns3::Packet>> receive);

} // namespace fabricsim

#endif
