/*
 * PFC watchdog of a switch, as in commodity datacenter switches: it polls the egress queues and,
 * when one holds frames while its peer has paused it without a break for longer than the
 * detection time (a PFC storm or deadlock), it reports it and, if configured, ignores the
 * peer's pauses or drops the queue's frames until the peer has stopped pausing for the
 * restoration time. Polling happens only when enabled (Interval > 0).
 */
#ifndef FABRICSIM_PFC_WATCHDOG_H
#define FABRICSIM_PFC_WATCHDOG_H

#include "ns3/event-id.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/traced-callback.h"

#include <array>
#include <vector>

namespace ns3
{

class FabricSwitch;

/**
 * \brief Detects egress queues stuck in PFC pause and acts on them.
 */
class PfcWatchdog : public Object
{
  public:
    /// What to do with a queue found paused for longer than the detection time.
    enum Action
    {
        REPORT,       ///< count and trace it only
        IGNORE_PAUSE, ///< transmit regardless of the peer's pauses
        DROP          ///< drop the queued frames and every frame switched to the queue
    };

    /// Trigger history of one (port, priority) queue.
    struct QueueRecord
    {
        uint32_t port = 0;
        uint8_t priority = 0;
        uint64_t triggers = 0;      ///< times the queue was found stuck
        uint64_t restorations = 0;  ///< times normal operation resumed
        uint64_t flushedFrames = 0; ///< frames dropped from the queue by the drop action
        Time firstTrigger;
        Time pausedAtFirstTrigger; ///< how long the queue had been paused then
        bool active = false;       ///< the action is in force now
    };

    static TypeId GetTypeId();
    PfcWatchdog();

    /// Watch the ports of `sw`; polls only when Interval > 0.
    void Start(FabricSwitch* sw);

    bool IsEnabled() const
    {
        return m_interval.IsStrictlyPositive();
    }

    Action GetAction() const
    {
        return m_action;
    }

    /// Queues that triggered at least once, by port then priority.
    std::vector<QueueRecord> GetRecords() const;

    /// Total triggers over all queues.
    uint64_t GetTriggers() const;

    /// Trace signature: port, priority, true when a storm is detected / false when restored.
    typedef void (*StormTracedCallback)(uint32_t port, uint8_t priority, bool detected);

  protected:
    void DoDispose() override;

  private:
    void Poll();
    void Trigger(uint32_t port, uint8_t prio);
    void Restore(uint32_t port, uint8_t prio);

    Time m_interval;
    Time m_detection;
    Time m_restoration;
    Action m_action;

    FabricSwitch* m_switch = nullptr;
    EventId m_poll;
    std::vector<std::array<QueueRecord, 8>> m_state; ///< per port, per priority
    TracedCallback<uint32_t, uint8_t, bool> m_stormTrace;
};

} // namespace ns3

#endif
