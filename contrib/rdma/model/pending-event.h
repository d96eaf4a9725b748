/*
 * An event a model object keeps one of, with whether it is still pending known exactly.
 * EventId::IsRunning asks the simulator, which compares the event's uid with the running one's:
 * ns-3's own order within a time step, not ns3::FabricScheduler's (arrivals run in key order,
 * whatever their uid) nor the same in a run split over MPI ranks (uids are per rank). At the
 * current time step it can then call a pending event run, or one that ran pending, and a result
 * would depend on the uids (and on the partition).
 */
#ifndef FABRICSIM_PENDING_EVENT_H
#define FABRICSIM_PENDING_EVENT_H

#include "ns3/event-id.h"
#include "ns3/event-impl.h"
#include "ns3/simulator.h"

#include <utility>

namespace ns3
{

class PendingEvent
{
  public:
    /// Whether the event is scheduled and has neither run (Ran) nor been cancelled.
    bool IsPending() const
    {
        return m_pending;
    }

    /// Schedules the event (Simulator::Schedule's arguments), replacing the record of any
    /// earlier one: cancel that first if it must not run.
    template <typename... Ts>
    void Schedule(const Time& delay, Ts&&... args)
    {
        m_id = Simulator::Schedule(delay, std::forward<Ts>(args)...);
        m_pending = true;
    }

    /// The event's function calls this first.
    void Ran()
    {
        m_pending = false;
    }

    /// Cancels the event if it is pending (marking it directly: Simulator::Cancel would also
    /// ask IsExpired).
    void Cancel()
    {
        if (m_pending)
        {
            m_id.PeekEventImpl()->Cancel();
            m_pending = false;
        }
    }

  private:
    EventId m_id;
    bool m_pending = false;
};

} // namespace ns3

#endif
