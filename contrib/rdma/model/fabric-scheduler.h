/*
 * The fabric's event order: events by time, and within one picosecond the unkeyed events first
 * (in the order they were scheduled, as every ns-3 scheduler orders them), then the keyed ones
 * (KeyedEventImpl: frame arrivals) by key, the order they were scheduled in breaking ties. Where
 * the keyed events of a time were inserted from (another partition's messages, a different
 * interleaving of nodes) does not change the order they run in. fabricsim's runs use it
 * (fabric-setup.h); like any ns-3 scheduler it is chosen by the SchedulerType global value or
 * Simulator::SetScheduler, and ns-3's distributed simulator takes it the same way.
 */
#ifndef FABRICSIM_FABRIC_SCHEDULER_H
#define FABRICSIM_FABRIC_SCHEDULER_H

#include "ns3/scheduler.h"

#include <cstdint>
#include <vector>

namespace ns3
{

class FabricScheduler : public Scheduler
{
  public:
    static TypeId GetTypeId();

    FabricScheduler();
    ~FabricScheduler() override;

    void Insert(const Scheduler::Event& ev) override;
    bool IsEmpty() const override;
    Scheduler::Event PeekNext() const override;
    Scheduler::Event RemoveNext() override;
    void Remove(const Scheduler::Event& ev) override;

    /// Where \p ev runs among the events of its time: the uid for an unkeyed event, 2^63 plus
    /// the key for a keyed one (KeyedEventImpl::IsKeyed: an address check, no dynamic_cast).
    static uint64_t OrderOf(const Scheduler::Event& ev);

  private:
    struct Entry
    {
        uint64_t order; ///< OrderOf
        Scheduler::Event ev;

        /// Later than \p o (the heap keeps the earliest on top); ties between equal keys go by
        /// uid, the order of scheduling.
        bool operator>(const Entry& o) const
        {
            return ev.key.m_ts != o.ev.key.m_ts ? ev.key.m_ts > o.ev.key.m_ts
                   : order != o.order           ? order > o.order
                                                : ev.key.m_uid > o.ev.key.m_uid;
        }
    };

    /// A binary heap, as ns-3's PriorityQueueScheduler (the fastest at fabric event densities).
    std::vector<Entry> m_heap;
};

} // namespace ns3

#endif
