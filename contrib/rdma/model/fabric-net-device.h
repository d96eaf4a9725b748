/*
 * Common port machinery for NIC and switch ports: line-rate serialisation onto a FabricChannel,
 * PFC pause state received from the peer (with pause quanta honoured), PFC frames sent ahead of
 * everything, pcap capture, counters and trace sources. Subclasses decide what to send next
 * (DequeueNext) and what to do with arrivals (HandleReceive).
 */
#ifndef FABRICSIM_FABRIC_NET_DEVICE_H
#define FABRICSIM_FABRIC_NET_DEVICE_H

#include "fabric-packet.h"
#include "link-memo.h"
#include "unit-conversions.h"

#include "ns3/data-rate.h"
#include "ns3/event-id.h"
#include "ns3/mac48-address.h"
#include "ns3/net-device.h"
#include "ns3/nstime.h"
#include "ns3/traced-callback.h"

#include <array>
#include <deque>
#include <memory>
#include <string>

namespace ns3
{

class FabricChannel;
class PcapFileWrapper;

/// Per-device counters (kept per device, merged by the stats helper at the end).
struct FabricDeviceStats
{
    uint64_t txFrames = 0;
    uint64_t txBytes = 0; ///< frame bytes sent
    uint64_t rxFrames = 0;
    uint64_t rxBytes = 0;
    uint64_t rxDataFrames = 0; ///< RDMA data frames among rxFrames
    uint64_t txDataPayload = 0;
    std::array<uint64_t, 8> pfcSent{};       ///< XOFF frames (quanta > 0) sent
    std::array<uint64_t, 8> pfcResumeSent{}; ///< XON frames (quanta 0) sent
    std::array<uint64_t, 8> pfcReceived{};   ///< XOFF frames received
    std::array<uint64_t, 8> pfcResumeReceived{};
    uint64_t txPfcFrames = 0;
    uint64_t rxPfcFrames = 0;
    uint64_t dropPfcFrames = 0;
    std::array<uint64_t, static_cast<size_t>(DropReason::Count)> drops{};
    std::array<uint64_t, static_cast<size_t>(DropReason::Count)> dropBytes{};
};

/**
 * \brief Base class for fabric ports (RoCE NIC ports and switch ports).
 */
class alignas(64) FabricNetDevice : public NetDevice
{
  public:
    static TypeId GetTypeId();
    FabricNetDevice();

    /// Signature of the Tx and Rx trace sources.
    typedef void (*FrameTracedCallback)(const FabricPacket& frame);
    /// Signature of the Drop trace source.
    typedef void (*DropTracedCallback)(const FabricPacket& frame, DropReason reason);
    /// Signature of the PfcRx / PfcTx trace sources (quanta 0 = resume).
    typedef void (*PfcTracedCallback)(uint8_t priority, uint16_t quanta);
    ~FabricNetDevice() override;

    void Attach(Ptr<FabricChannel> ch);
    Ptr<FabricChannel> GetFabricChannel() const;

    /// Starts loading the lines a frame's arrival reads first (the object's first three: the
    /// class is line-aligned and keeps its hot fields there). A hint for the scheduler's
    /// look-ahead.
    void PrefetchHot() const
    {
        const char* self = reinterpret_cast<const char*>(this);
        __builtin_prefetch(self);
        __builtin_prefetch(self + 64);
        __builtin_prefetch(self + 128);
    }

    /// What receiving \p p reads past the device's first lines, \p ahead (4 to 1) events
    /// before it arrives: \p p is null at 4 and 3 (it is being loaded at 3), loaded at 2 and
    /// 1. A hint.
    virtual void PrefetchReceivePath(unsigned ahead, const FabricPacket* p) const
    {
    }

    DataRate GetDataRate() const;
    uint64_t GetRateBps() const
    {
        return m_rateBps;
    }

    /// How long `quanta` PFC pause quanta (512 bit times each) last at `bps`.
    static int64_t PauseQuantaPs(uint16_t quanta, uint64_t bps)
    {
        return fabricsim::units::TransmitPs(uint64_t(quanta) * 64, bps);
    }

    /// Serialisation time of `bytes` on the wire at this port's rate.
    Time TxTime(uint32_t wireBytes) const
    {
        return PicoSeconds(fabricsim::units::TransmitPs(wireBytes, m_rateBps));
    }

    /// Called by the channel when frame `p` has fully arrived.
    void Receive(FabricPacket* p);

    /// Ask the transmitter to look for work now (new data, pause lifted, ...).
    void Wake();

    /// True while the peer has paused priority `prio` at this port (and it is not ignored).
    bool IsPaused(uint8_t prio) const;
    /// The same at time \p now (the hot path reads the clock once per event).
    bool IsPaused(uint8_t prio, Time now) const
    {
        return now < m_pauseHorizon && now < m_pausedUntil[prio];
    }

    /// True while the peer asks for a pause of `prio`, whether or not this port obeys it.
    bool PeerPausing(uint8_t prio) const;
    /// Start of the peer's current (or last) uninterrupted pause of `prio`.
    Time PausedSince(uint8_t prio) const
    {
        return m_pauseStart[prio];
    }
    /// End of the peer's current (future) or last (past) pause of `prio`.
    Time PeerPauseEnd(uint8_t prio) const
    {
        return m_peerPausedUntil[prio];
    }
    /**
     * Ignore (or obey again) the peer's pauses of `prio`: the PFC watchdog's "ignore-pause"
     * action. The peer's pause state keeps being tracked for PeerPausing().
     */
    void SetPauseIgnored(uint8_t prio, bool ignore);

    /// Send a PFC frame pausing (quanta > 0) or resuming (quanta 0) class `prio` at the peer.
    void SendPfc(uint8_t prio, uint16_t quanta);

    /// Count a drop (and fire the Drop trace); deletes the frame.
    void DropPacket(FabricPacket* p, DropReason reason);

    /// Write every frame sent or received on this port to a pcap file (Ethernet link type).
    void EnablePcap(const std::string& filename);

    const FabricDeviceStats& GetStats() const
    {
        return m_stats;
    }

    /// Frames queued or being serialised here (for the conservation check).
    /**
     * \brief The collective memo's view (link-memo.h): at rest means nothing queued, sent or
     * paused and no event of the device pending; a pcap capture or a connected frame trace
     * keeps a device from rest too, since a replay writes neither.
     */
    virtual void ProbeRest(MemoProbe& probe) const;
    /// Every counter and end-state field, in a fixed order (link-memo.h).
    virtual void VisitMemo(MemoRecord& record);
    /// "node 3 device 1", for the memo's reasons.
    std::string MemoName() const;

    virtual uint64_t QueuedFrames() const;
    virtual uint64_t QueuedBytes() const;

    /// True while a frame is being serialised.
    bool IsBusy() const;

    // NetDevice API
    void SetIfIndex(const uint32_t index) override;
    uint32_t GetIfIndex() const override;
    Ptr<Channel> GetChannel() const override;
    void SetAddress(Address address) override;
    Address GetAddress() const override;
    bool SetMtu(const uint16_t mtu) override;
    uint16_t GetMtu() const override;
    bool IsLinkUp() const override;
    void AddLinkChangeCallback(Callback<void> callback) override;
    bool IsBroadcast() const override;
    Address GetBroadcast() const override;
    bool IsMulticast() const override;
    Address GetMulticast(Ipv4Address multicastGroup) const override;
    Address GetMulticast(Ipv6Address addr) const override;
    bool IsBridge() const override;
    bool IsPointToPoint() const override;
    bool Send(Ptr<Packet> packet, const Address& dest, uint16_t protocolNumber) override;
    bool SendFrom(Ptr<Packet> packet,
                  const Address& source,
                  const Address& dest,
                  uint16_t protocolNumber) override;
    Ptr<Node> GetNode() const override;
    void SetNode(Ptr<Node> node) override;
    bool NeedsArp() const override;
    void SetReceiveCallback(NetDevice::ReceiveCallback cb) override;
    void SetPromiscReceiveCallback(PromiscReceiveCallback cb) override;
    bool SupportsSendFrom() const override;

    /// Link state changed (called by the channel).
    void NotifyLinkChange();

  protected:
    void DoDispose() override;

    /**
     * Pick the next frame to send, or nullptr. When nothing is eligible now but something will
     * be (pacing, pause expiry), set `wakeAt` to that time. \p now is the current time.
     */
    virtual FabricPacket* DequeueNext(Time now, Time& wakeAt) = 0;

    /// A non-PFC frame arrived.
    virtual void HandleReceive(FabricPacket* p) = 0;

    /// A frame is about to go on the wire (after dequeue); subclasses may stamp it.
    virtual void OnTransmitStart(FabricPacket* p)
    {
    }

    /**
     * True if frames may be waiting to be sent. When false at the start of a transmission, no
     * completion event is scheduled: the next Wake() finds the port free or defers to the end
     * of the frame. This halves the events per hop on uncongested ports.
     */
    virtual bool HasPendingWork() const;

    /// Pause expiry of class `prio` (past if not paused).
    Time PauseExpiry(uint8_t prio) const
    {
        return m_pausedUntil[prio];
    }

    /// No class is paused from this time on.
    Time PauseHorizon() const
    {
        return m_pauseHorizon;
    }

  private:
    class CompletionEvent;
    void TransmitComplete();
    void StartTransmit(FabricPacket* p, Time now);
    void ScheduleWake(Time at, Time now);
    void WakeEvent();
    void WritePcap(const FabricPacket* p);
    void SetPausedUntil(uint8_t prio, Time until);

    // The fields every frame's hop reads, in the device's first three cache lines (the class
    // is line-aligned; ns-3's Object header takes the first 32 bytes): at 1,024 hosts most
    // devices a frame meets are out of the cache, and each line read is a miss.
    Ptr<FabricChannel> m_channel;
    Time m_busyUntil; ///< end of the current frame's serialisation
    uint64_t m_rateBps;
    uint32_t m_pfcQueued = 0;   ///< m_pfcQueue.size(), read without the deque
    bool m_completionPending;   ///< a TransmitComplete event is scheduled for m_busyUntil
    bool m_linkUp = false;      ///< the channel's state, kept on every change
    uint8_t m_pauseIgnored = 0; ///< classes whose pauses are ignored (watchdog)
    Time m_pauseHorizon;        ///< no class is paused from this time on (the latest end)
    Ptr<PcapFileWrapper> m_pcap;
    TracedCallback<const FabricPacket&> m_txTrace;
    TracedCallback<const FabricPacket&> m_rxTrace;
    /// The end of a frame's serialisation, one event scheduled again for every frame (the
    /// device holds a reference, the simulator one more while it is pending).
    CompletionEvent* m_completion = nullptr;
    uint32_t m_nodeId = 0; ///< the context of the device's events

  protected:
    FabricDeviceStats m_stats; ///< its first 48 bytes, the frame counters, end the third line
    uint32_t m_mtu;

  private:
    Ptr<Node> m_node;
    uint32_t m_ifIndex;
    Mac48Address m_address;
    DataRate m_rate;
    std::array<Time, 8> m_pausedUntil;     ///< pause the transmitter obeys
    std::array<Time, 8> m_peerPausedUntil; ///< pause the peer asked for (obeyed or not)
    std::array<Time, 8> m_pauseStart;      ///< start of the peer's uninterrupted pause
    std::deque<FabricPacket*> m_pfcQueue;
    EventId m_wakeEvent;
    Time m_wakeAt;
    std::unique_ptr<std::string> m_pcapName;
    std::vector<Callback<void>> m_linkChangeCallbacks;

    TracedCallback<const FabricPacket&, DropReason> m_dropTrace;
    TracedCallback<uint8_t, uint16_t> m_pfcRxTrace; ///< priority, quanta
    TracedCallback<uint8_t, uint16_t> m_pfcTxTrace;
};

} // namespace ns3

#endif
