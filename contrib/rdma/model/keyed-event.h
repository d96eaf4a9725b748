/*
 * An event that carries its place among the events of its time. ns3::FabricScheduler runs the
 * events of one picosecond in an order that does not depend on the order they were scheduled
 * in: first the unkeyed ones (every ns-3 event, in the order they were scheduled), then the
 * keyed ones by key. A frame's arrival is keyed by where it arrives (the receiving node and
 * device), so arrivals at one time keep one order however the simulation is split into
 * partitions (docs/performance.md, "One order for simultaneous events").
 */
#ifndef FABRICSIM_KEYED_EVENT_H
#define FABRICSIM_KEYED_EVENT_H

#include "ns3/event-impl.h"

#include <cstddef>
#include <cstdint>

namespace ns3
{

class KeyedEventImpl : public EventImpl
{
  public:
    /// \p key must be below 2^63 (the top bit tells keyed from unkeyed events).
    explicit KeyedEventImpl(uint64_t key)
        : m_key(key)
    {
    }

    uint64_t GetOrderKey() const
    {
        return m_key;
    }

    /// The key of a frame arriving at device \p ifIndex of node \p node.
    static uint64_t ArrivalKey(uint32_t node, uint32_t ifIndex)
    {
        return (uint64_t(node) << 31) | (ifIndex & 0x7fffffffu);
    }

    /// Called by the scheduler while the event is \p ahead events (1 to 5) from running, once
    /// at each distance, so that the memory it will read is on its way into the cache by then:
    /// at 5 what it points to, at 4 what that points to, and so on. Only a hint: the default
    /// does nothing, and it must not change state.
    virtual void Prefetch(unsigned ahead) const
    {
    }

    /// Whether \p impl is a keyed event. Keyed events live in their own pool (below), so this
    /// is a few address comparisons, not a dynamic_cast: it runs on every event inserted.
    static bool IsKeyed(const EventImpl* impl);

    /// Keyed events (at most kSlotBytes each) come from a pool of chunks that double in size,
    /// recycled through a free list (the pool is what makes IsKeyed an address check).
    static void* operator new(std::size_t bytes);
    static void operator delete(void* p);
    static constexpr std::size_t kSlotBytes = 64;

  private:
    uint64_t m_key;
};

} // namespace ns3

#endif
