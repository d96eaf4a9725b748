/*
 * The links a partition cuts, wired through ns-3's MPI interface. A frame toward a node of
 * another rank is encoded (frame-codec) into that rank's outbox; the outbox goes as one
 * MpiInterface::SendPacket when it is full (ns-3's receive buffers hold 2,000 bytes: about 16
 * frames) or when its earliest frame's arrival is just over one lookahead away, whichever first:
 * that is the last moment at which ns-3's engines still accept a message arriving then (the
 * lookahead here is the smallest delay of a link cut between the two ranks, at least the
 * engine's own). The receiving rank's batch device (a SimpleNetDevice with an MpiReceiver on the
 * first node of each rank) takes an outbox in and hands each frame to its channel
 * (FabricChannel::ReceiveRemote) at the frame's own arrival time. One MPI message per frame,
 * as ns-3 sends them, cost a rank a fifth of its time (docs/performance.md).
 */
#ifndef FABRICSIM_REMOTE_LINKS_H
#define FABRICSIM_REMOTE_LINKS_H

#include "ns3/nstime.h"
#include "ns3/packet.h"
#include "ns3/pending-event.h"
#include "ns3/ptr.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace ns3
{
class FabricTopologyHelper;
struct FabricPacket;
} // namespace ns3

namespace fabricsim
{

class RemoteLinks
{
  public:
    /// Wires every link of \p fabric (installed, with system ids) whose ends are on different
    /// ranks and one of them on \p rank, and the batch devices (on every rank alike).
    RemoteLinks(ns3::FabricTopologyHelper& fabric, uint32_t rank);
    ~RemoteLinks();
    RemoteLinks(const RemoteLinks&) = delete;
    RemoteLinks& operator=(const RemoteLinks&) = delete;

    /// Links wired here (cut links with an end on this rank).
    uint32_t Wired() const
    {
        return m_wired;
    }

    /// MPI messages this rank sent, and the frames in them.
    uint64_t MessagesSent() const
    {
        return m_messages;
    }

    uint64_t FramesSent() const
    {
        return m_frames;
    }

  private:
    struct Outbox
    {
        std::vector<uint8_t> bytes;
        ns3::Time earliest;  ///< earliest arrival among the frames held
        ns3::Time lookahead; ///< smallest delay of a link cut between the two ranks
        uint32_t node = 0;   ///< the batch device there: its node and interface
        uint32_t ifIndex = 0;
        ns3::PendingEvent flush;
        ns3::Time flushAt; ///< when the pending flush runs
    };

    void Send(uint32_t link, int end, const ns3::FabricPacket& p, uint64_t epoch, ns3::Time at);
    void FlushEvent(uint32_t rank);
    void Flush(uint32_t rank);
    void Receive(ns3::Ptr<ns3::Packet> batch);
    void Deliver(std::shared_ptr<const std::vector<uint8_t>> batch, uint32_t offset);

    ns3::FabricTopologyHelper& m_fabric;
    uint32_t m_rank;
    uint32_t m_wired = 0;
    uint64_t m_messages = 0;
    uint64_t m_frames = 0;
    std::vector<Outbox> m_outbox;    ///< per rank (this rank's unused)
    std::vector<uint32_t> m_farRank; ///< per link: the rank of its far end (cut links)
};

} // namespace fabricsim

#endif
