/*
 * One switch port: 8 egress queues, strict priority for control classes and DWRR among data
 * classes (skipping classes the peer has paused), ECN RED marking at dequeue, and PFC XOFF
 * generation state for its ingress side.
 */
#ifndef FABRICSIM_SWITCH_PORT_H
#define FABRICSIM_SWITCH_PORT_H

#include "ns3/event-id.h"
#include "ns3/fabric-net-device.h"
#include "ns3/pending-event.h"
#include "ns3/traced-callback.h"

#include <array>
#include <deque>

namespace ns3
{

class FabricSwitch;

class SwitchPort : public FabricNetDevice
{
  public:
    static TypeId GetTypeId();
    SwitchPort();
    ~SwitchPort() override;

    /**
     * Signature of the "QueueBytes" trace source: an egress queue changed.
     * \param priority the traffic class whose queue changed
     * \param classBytes bytes now queued in that class
     * \param totalBytes bytes now queued in all classes of the port
     */
    typedef void (*QueueBytesTracedCallback)(uint8_t priority,
                                             uint64_t classBytes,
                                             uint64_t totalBytes);

    void SetSwitch(FabricSwitch* sw, uint32_t index);
    uint32_t GetPortIndex() const
    {
        return m_index;
    }
    FabricSwitch* GetSwitch() const
    {
        return m_switch;
    }

    /// Queue a frame for transmission on this port.
    void Enqueue(FabricPacket* p);

    uint64_t QueueBytes(uint8_t prio) const
    {
        return m_qBytes[prio];
    }
    /// Starts loading what enqueueing a frame of class \p prio here reads (a hint).
    void PrefetchAsEgress(uint8_t prio) const;

    uint64_t TotalQueueBytes() const
    {
        return m_totalBytes;
    }

    /// Frames waiting in the egress queues (PFC frames excluded).
    uint64_t EgressFrames() const
    {
        uint64_t n = 0;
        for (auto& q : m_q)
        {
            n += q.size();
        }
        return n;
    }
    uint64_t MaxQueueBytes() const
    {
        return m_maxBytes;
    }
    uint64_t EcnMarked() const
    {
        return m_ecnMarked;
    }

    uint64_t QueuedFrames() const override;
    uint64_t QueuedBytes() const override;

    /// At rest: nothing queued, no pause asked of the peer; the digest holds the scheduler's
    /// round state.
    void ProbeRest(MemoProbe& probe) const override;
    void VisitMemo(MemoRecord& record) override;

    /// Ingress-side PFC state: are we pausing the peer on `prio`?
    bool IsPausingPeer(uint8_t prio) const
    {
        return m_xoff[prio];
    }
    /// Start or refresh XOFF toward the peer on `prio`.
    void PausePeer(uint8_t prio);
    /// Send XON toward the peer on `prio` if we were pausing it.
    void ResumePeer(uint8_t prio);

    /// Frames waiting in the egress queue of class `prio`, oldest first (read-only view).
    const std::deque<FabricPacket*>& Queue(uint8_t prio) const
    {
        return m_q[prio];
    }

    /**
     * Drop every frame waiting in the egress queue of `prio` with `reason`, releasing their
     * buffer (which may resume the ports they came from). Returns the number of frames dropped.
     */
    uint64_t FlushQueue(uint8_t prio, DropReason reason);

    /// PFC watchdog "drop" action: frames switched to class `prio` of this port are dropped.
    void SetWatchdogDrop(uint8_t prio, bool drop)
    {
        m_wdDrop = drop ? uint8_t(m_wdDrop | (1u << prio)) : uint8_t(m_wdDrop & ~(1u << prio));
    }
    bool IsWatchdogDropping(uint8_t prio) const
    {
        return m_wdDrop & (1u << prio);
    }

    /// ECN RED parameters (bytes, probability) of this port.
    void SetEcn(uint64_t kmin, uint64_t kmax, double pmax);

    /// INT bytes this port pushed onto frames (they enter the fabric here, not at a NIC).
    uint64_t IntBytesAdded() const
    {
        return m_intBytesAdded;
    }

  protected:
    void DoDispose() override;
    FabricPacket* DequeueNext(Time now, Time& wakeAt) override;
    bool HasPendingWork() const override;
    void HandleReceive(FabricPacket* p) override;
    void PrefetchReceivePath(unsigned ahead, const FabricPacket* p) const override;
    /// Counts the link's bytes and stamps INT on data frames that carry the INT shim.
    void OnTransmitStart(FabricPacket* p) override;

  private:
    FabricPacket* Pop(uint8_t prio);
    void RefreshXoff(uint8_t prio);
    /// Report the new occupancy of class `prio` (a no-op while nothing is connected).
    void NotifyQueue(uint8_t prio)
    {
        if (!m_queueTrace.IsEmpty())
        {
            m_queueTrace(prio, m_qBytes[prio], m_totalBytes);
        }
    }

    // What a frame's enqueue and dequeue read come first, in three cache lines (a cluster-scale
    // run misses the cache on most ports it touches); the eight queues, 640 bytes, come last.
    FabricSwitch* m_switch;
    uint64_t m_totalBytes = 0;
    /// priority, class bytes, port bytes after each enqueue, dequeue or flush
    TracedCallback<uint8_t, uint64_t, uint64_t> m_queueTrace;
    uint32_t m_index;
    uint32_t m_dwrrCur = 0;
    uint8_t m_nonEmpty = 0; ///< classes with frames queued (bit mask)
    uint8_t m_strictMask;
    uint8_t m_wdDrop = 0; ///< classes the PFC watchdog drops (bit mask)
    bool m_dwrrFresh = false;
    bool m_ecnEnabled;
    uint32_t m_quantum;
    uint32_t m_intHopBytes;
    uint64_t m_maxBytes = 0;
    uint64_t m_txWireBytes
        = 0; ///< bytes put on the link, preamble and IFG included (INT tx counter)
    uint64_t m_kmin;
    uint64_t m_kmax;
    double m_pmax;
    uint64_t m_ecnMarked = 0;
    std::array<uint64_t, 8> m_qBytes{};
    std::array<int64_t, 8> m_deficit{};
    std::array<bool, 8> m_xoff{};

    uint16_t m_pauseQuanta;
    uint64_t m_intBytesAdded = 0;
    std::array<PendingEvent, 8> m_xoffRefresh;
    std::array<std::deque<FabricPacket*>, 8> m_q;
};

} // namespace ns3

#endif
