/*
 * Full-duplex point-to-point link between two FabricNetDevices: propagation delay, optional
 * random loss, and an up/down state. Frames are handed over by pointer (no Packet::Copy).
 */
#ifndef FABRICSIM_FABRIC_CHANNEL_H
#define FABRICSIM_FABRIC_CHANNEL_H

#include "fabric-packet.h"
#include "link-memo.h"
#include "wire-fifo.h"

#include "ns3/callback.h"
#include "ns3/channel.h"
#include "ns3/nstime.h"
#include "ns3/packet.h"
#include "ns3/random-variable-stream.h"
#include "ns3/traced-callback.h"

namespace ns3
{

class FabricNetDevice;

/**
 * \brief Full-duplex link with delay, loss rate and up/down state.
 */
class FabricChannel : public Channel
{
  public:
    static TypeId GetTypeId();
    FabricChannel();

    /// Attach the two ends (exactly two).
    void Attach(Ptr<FabricNetDevice> dev);

    /**
     * Start carrying frame `p` from `from`; it arrives at the other end after
     * `txTime` (serialisation) + propagation delay.
     */
    void Transmit(FabricNetDevice* from, FabricPacket* p, Time txTime);

    /// Takes a frame toward another rank, the link's epoch when it left and the time it
    /// arrives at the far end (the sender encodes it: frame-codec.h).
    using RemoteSend = Callback<void, const FabricPacket&, uint64_t, Time>;

    /**
     * End \p end (0 or 1, in Attach order) is simulated by another MPI rank, whose copy of this
     * channel delivers there: Transmit hands each frame toward it to \p send, with its epoch and
     * arrival time, instead of putting it on this copy's wire.
     */
    void SetRemoteEnd(int end, RemoteSend send);

    /**
     * A frame \p p (owned from here on) from the far end's rank, sent in link epoch \p epoch,
     * arrives now at end \p end: from here on it is a local arrival (link state, epoch, loss,
     * then the device), in the same event order as one.
     */
    void ReceiveRemote(int end, FabricPacket* p, uint64_t epoch);

    /// Which end \p dev is (0 or 1).
    int EndOf(const FabricNetDevice* dev) const;

    /// Frames this copy sent toward a remote end, and frames it received from one: summed over
    /// the ranks, their difference is what is between ranks.
    uint64_t RemoteFramesSent() const
    {
        return m_remoteSent;
    }

    uint64_t RemoteFramesReceived() const
    {
        return m_remoteReceived;
    }

    /// The bytes and the PFC frames among them, for the conservation check of a run across
    /// ranks: what one rank sent and no rank received yet was still on the wire at the end.
    uint64_t RemoteBytesSent() const
    {
        return m_remoteSentBytes;
    }

    uint64_t RemoteBytesReceived() const
    {
        return m_remoteReceivedBytes;
    }

    uint64_t RemotePfcFramesSent() const
    {
        return m_remoteSentPfc;
    }

    uint64_t RemotePfcFramesReceived() const
    {
        return m_remoteReceivedPfc;
    }

    /// Bring the link up or down now. Frames on the wire when it goes down are lost.
    void SetUp(bool up);
    bool IsUp() const;

    Time GetDelay() const;
    /// Frames currently on the wire (conservation check).
    uint64_t InFlightFrames() const
    {
        return m_inFlight;
    }

    /// Bytes of the frames on the wire.
    uint64_t InFlightBytes() const
    {
        return m_inFlightBytes;
    }

    /// PFC frames among them (hop-local, excluded from end-to-end conservation).
    uint64_t InFlightPfcFrames() const
    {
        return m_inFlightPfc;
    }

    double GetLossRate() const;
    Ptr<FabricNetDevice> GetPeer(const FabricNetDevice* dev) const;

    std::size_t GetNDevices() const override;
    Ptr<NetDevice> GetDevice(std::size_t i) const override;

    /// Assign the random streams used for loss (one per direction: \p stream and
    /// \p stream + kReverseStreamOffset); returns the number of streams taken from the caller's
    /// sequence (1).
    int64_t AssignStreams(int64_t stream);
    static constexpr int64_t kReverseStreamOffset = int64_t(1) << 40;

    /// The collective memo's view (link-memo.h): at rest means up, nothing on the wire and no
    /// random loss (its draws cannot be replayed).
    void ProbeRest(MemoProbe& probe) const;

  private:
    class DeliveryEvent;
    void DoDispose() override;

    /// The earliest frame toward end \p dir has arrived: hand it over, and schedule the next.
    void Deliver(int dir);
    /// What the arrival toward \p dir will read, \p ahead events before it runs.
    void PrefetchDelivery(int dir, unsigned ahead) const;
    /// Schedule the arrival event of end \p dir after \p delay.
    void ScheduleArrival(int dir, Time delay);

    // What a hop reads, together.
    Ptr<FabricNetDevice> m_dev[2];
    /// One arrival event per direction, scheduled again for each frame (the channel holds a
    /// reference; the simulator one more while it is pending).
    DeliveryEvent* m_arrival[2] = {nullptr, nullptr};
    WireFifo m_wire[2];
    /// Arrival keys of the two ends (KeyedEventImpl::ArrivalKey), taken on first use: a
    /// device's ifIndex is known only once its node holds it.
    uint64_t m_arrivalKey[2] = {UINT64_MAX, UINT64_MAX};
    uint32_t m_context[2] = {0, 0};
    Time m_delay;
    uint64_t m_epoch; ///< bumped on every down transition: frames sent before are lost
    uint64_t m_inFlight = 0;
    uint64_t m_inFlightBytes = 0;
    uint64_t m_inFlightPfc = 0;
    double m_lossRate;
    bool m_up;
    /// Loss draws of each direction (toward end 0, toward end 1).
    Ptr<UniformRandomVariable> m_rng[2];
    // Ends simulated by another rank (cold: read only when a frame goes there).
    RemoteSend m_remote[2];
    uint64_t m_remoteSent = 0;
    uint64_t m_remoteReceived = 0;
    uint64_t m_remoteSentBytes = 0;
    uint64_t m_remoteReceivedBytes = 0;
    uint64_t m_remoteSentPfc = 0;
    uint64_t m_remoteReceivedPfc = 0;
};

} // namespace ns3

#endif
