#include "fabric-scheduler.h"

#include "keyed-event.h"

#include "ns3/assert.h"

#include <algorithm>
#include <functional>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(FabricScheduler);

TypeId
FabricScheduler::GetTypeId()
{
    static TypeId tid = TypeId("ns3::FabricScheduler")
                            .SetParent<Scheduler>()
                            .SetGroupName("Rdma")
                            .AddConstructor<FabricScheduler>();
    return tid;
}

FabricScheduler::FabricScheduler() = default;

FabricScheduler::~FabricScheduler() = default;

uint64_t
FabricScheduler::OrderOf(const Scheduler::Event& ev)
{
    if (KeyedEventImpl::IsKeyed(ev.impl))
    {
        return (uint64_t(1) << 63) | static_cast<const KeyedEventImpl*>(ev.impl)->GetOrderKey();
    }
    return ev.key.m_uid;
}

void
FabricScheduler::Insert(const Scheduler::Event& ev)
{
    m_heap.push_back({OrderOf(ev), ev});
    std::push_heap(m_heap.begin(), m_heap.end(), std::greater<Entry>());
}

bool
FabricScheduler::IsEmpty() const
{
    return m_heap.empty();
}

Scheduler::Event
FabricScheduler::PeekNext() const
{
    NS_ASSERT(!m_heap.empty());
    return m_heap.front().ev;
}

Scheduler::Event
FabricScheduler::RemoveNext()
{
    NS_ASSERT(!m_heap.empty());
    std::pop_heap(m_heap.begin(), m_heap.end(), std::greater<Entry>());
    const Scheduler::Event ev = m_heap.back().ev;
    m_heap.pop_back();
    return ev;
}

void
FabricScheduler::Remove(const Scheduler::Event& ev)
{
    // Rare (a cancelled event is usually left to expire): a linear search, as ns-3's
    // PriorityQueueScheduler does.
    auto it = std::find_if(m_heap.begin(),
                           m_heap.end(),
                           [&](const Entry& e)
                           { return e.ev.impl == ev.impl && e.ev.key.m_uid == ev.key.m_uid; });
    NS_ASSERT_MSG(it != m_heap.end(), "FabricScheduler: removing an event it does not hold");
    m_heap.erase(it);
    std::make_heap(m_heap.begin(), m_heap.end(), std::greater<Entry>());
}

} // namespace ns3
