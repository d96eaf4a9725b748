/*
 * Messages between the ranks of a distributed run that are not frames: a rank's end-of-run
 * notice (run-end.h) and its deadlock-check snapshots. A message goes to every other rank
 * through ns-3's MpiInterface, to arrive at a given time (at least a lookahead away), cut into
 * pieces that fit ns-3's 2,000-byte receive buffers; the receiving rank's control device (a
 * SimpleNetDevice with an MpiReceiver on the first node of each rank) puts the pieces together
 * and hands the message to the handler of its kind when the last piece arrives.
 */
#ifndef FABRICSIM_CONTROL_CHANNEL_H
#define FABRICSIM_CONTROL_CHANNEL_H

#include "ns3/nstime.h"
#include "ns3/packet.h"
#include "ns3/ptr.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace ns3
{
class FabricTopologyHelper;
}

namespace fabricsim
{

class ControlChannel
{
  public:
    /// Adds the control devices (rank-devices.h) of \p fabric, installed with system ids.
    ControlChannel(ns3::FabricTopologyHelper& fabric, uint32_t self);

    /// Sends \p bytes of \p kind to every other rank, arriving at \p at.
    void Broadcast(uint8_t kind, const std::string& bytes, ns3::Time at);

    /// Called with each whole message of \p kind from another rank, when it arrives.
    void OnMessage(uint8_t kind, std::function<void(const std::string&)> handler);

  private:
    void Receive(ns3::Ptr<ns3::Packet> piece);

    uint32_t m_self;
    std::vector<std::pair<uint32_t, uint32_t>> m_device; ///< per rank: node id, interface index
    std::map<uint8_t, std::function<void(const std::string&)>> m_handlers;
    /// Messages being put together, by (source rank, kind, arrival): pieces so far and bytes.
    std::map<std::tuple<uint32_t, uint8_t, int64_t>, std::pair<uint32_t, std::string>> m_partial;
};

} // namespace fabricsim

#endif
