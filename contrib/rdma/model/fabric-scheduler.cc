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

FabricScheduler::FabricScheduler()
    : m_buckets(kRing)
{
}

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
FabricScheduler::PutInRing(const Entry& e, uint64_t bucket)
{
    const uint64_t slot = bucket & (kRing - 1);
    if (bucket == m_current)
    {
        m_late.push_back(e);
        std::push_heap(m_late.begin(), m_late.end(), std::greater<Entry>());
    }
    else
    {
        m_buckets[slot].push_back(e);
    }
    MarkBusy(slot);
    ++m_inRing;
}

void
FabricScheduler::Insert(const Scheduler::Event& ev)
{
    const uint64_t bucket = BucketOf(ev);
    NS_ASSERT_MSG(bucket >= m_current, "FabricScheduler: an event before the current time");
    const Entry e{OrderOf(ev), ev};
    if (bucket - m_current < kRing)
    {
        PutInRing(e, bucket);
    }
    else
    {
        m_far.push_back(e);
        std::push_heap(m_far.begin(), m_far.end(), std::greater<Entry>());
    }
}

bool
FabricScheduler::IsEmpty() const
{
    return m_inRing == 0 && m_far.empty();
}

uint64_t
FabricScheduler::NextBusyBucket() const
{
    const uint64_t start = m_current & (kRing - 1);
    uint64_t word = start / 64;
    uint64_t bits = m_busy[word] & (~uint64_t(0) << (start % 64));
    if (bits == 0)
    {
        // The next non-zero word after it, circularly, from the summary (it may be this word
        // again: its bits below the start are the ring's last buckets).
        const uint64_t from = (word + 1) % kWords;
        uint64_t sw = from / 64;
        uint64_t sbits = m_summary[sw] & (~uint64_t(0) << (from % 64));
        for (uint64_t n = 0; sbits == 0; ++n)
        {
            NS_ASSERT(n <= kSummaryWords);
            sw = (sw + 1) % kSummaryWords;
            sbits = m_summary[sw];
        }
        word = sw * 64 + __builtin_ctzll(sbits);
        bits = m_busy[word];
    }
    const uint64_t slot = word * 64 + __builtin_ctzll(bits);
    return m_current + ((slot - start) & (kRing - 1));
}

void
FabricScheduler::Advance(uint64_t bucket)
{
    NS_ASSERT(CurrentEmpty());
    std::vector<Entry>& done = m_buckets[m_current & (kRing - 1)];
    if (done.capacity() > kKeepEntries)
    {
        // Every slot would otherwise keep the largest bucket it ever held: at 10k hosts, the
        // ring's 2,048 slots hundreds of MB. Large buckets regrow instead (a few doublings).
        std::vector<Entry>().swap(done);
    }
    else
    {
        done.clear();
    }
    m_head = 0;
    m_current = bucket;
    std::vector<Entry>& b = m_buckets[m_current & (kRing - 1)];
    while (!m_far.empty() && BucketOf(m_far.front().ev) - m_current < kRing)
    {
        const uint64_t to = BucketOf(m_far.front().ev);
        const uint64_t slot = to & (kRing - 1);
        m_buckets[slot].push_back(m_far.front());
        MarkBusy(slot);
        ++m_inRing;
        std::pop_heap(m_far.begin(), m_far.end(), std::greater<Entry>());
        m_far.pop_back();
    }
    std::sort(b.begin(), b.end());
}

Scheduler::Event
FabricScheduler::PeekNext() const
{
    NS_ASSERT(!IsEmpty());
    if (!CurrentEmpty())
    {
        const std::vector<Entry>& b = m_buckets[m_current & (kRing - 1)];
        if (m_head == b.size() || (!m_late.empty() && m_late.front() < b[m_head]))
        {
            return m_late.front().ev;
        }
        return b[m_head].ev;
    }
    if (m_inRing == 0)
    {
        return m_far.front().ev;
    }
    const std::vector<Entry>& b = m_buckets[NextBusyBucket() & (kRing - 1)];
    return std::min_element(b.begin(), b.end())->ev;
}

Scheduler::Event
FabricScheduler::RemoveNext()
{
    NS_ASSERT(!IsEmpty());
    if (CurrentEmpty())
    {
        Advance(m_inRing == 0 ? BucketOf(m_far.front().ev) : NextBusyBucket());
    }
    const uint64_t slot = m_current & (kRing - 1);
    std::vector<Entry>& b = m_buckets[slot];
    Scheduler::Event ev;
    if (m_head == b.size() || (!m_late.empty() && m_late.front() < b[m_head]))
    {
        ev = m_late.front().ev;
        std::pop_heap(m_late.begin(), m_late.end(), std::greater<Entry>());
        m_late.pop_back();
    }
    else
    {
        ev = b[m_head++].ev;
        PrefetchAhead(b);
    }
    --m_inRing;
    if (CurrentEmpty())
    {
        MarkIdle(slot);
    }
    return ev;
}

void
FabricScheduler::PrefetchAhead(const std::vector<Entry>& b) const
{
    // A fabric at scale waits on memory more than it computes: each hop first touches a
    // channel, a frame, a device, a switch, far apart. The sorted bucket knows the next events,
    // so each keyed one (an arrival) starts loading what it will read a few events early,
    // one pointer deeper at each step (KeyedEventImpl::Prefetch).
    const Entry* next = b.data() + m_head;
    const size_t left = b.size() - m_head;
    if (left > 5)
    {
        __builtin_prefetch(next[5].ev.impl);
    }
    for (size_t j = 0; j < 5 && j < left; ++j)
    {
        if (next[j].order >> 63)
        {
            static_cast<const KeyedEventImpl*>(next[j].ev.impl)->Prefetch(unsigned(j) + 1);
        }
    }
}

void
FabricScheduler::Remove(const Scheduler::Event& ev)
{
    // Rare (a cancelled event is usually left to expire): a linear search of its bucket or of
    // the far heap.
    const auto same = [&](const Entry& e)
    {
        return e.ev.impl == ev.impl && e.ev.key.m_uid == ev.key.m_uid;
    };
    const uint64_t bucket = BucketOf(ev);
    if (bucket - m_current >= kRing)
    {
        auto it = std::find_if(m_far.begin(), m_far.end(), same);
        NS_ASSERT_MSG(it != m_far.end(), "FabricScheduler: removing an event it does not hold");
        m_far.erase(it);
        std::make_heap(m_far.begin(), m_far.end(), std::greater<Entry>());
        return;
    }
    const uint64_t slot = bucket & (kRing - 1);
    std::vector<Entry>& b = m_buckets[slot];
    const auto from = b.begin() + (bucket == m_current ? m_head : 0);
    auto it = std::find_if(from, b.end(), same);
    if (it != b.end())
    {
        b.erase(it); // keeps the current bucket's sorted part sorted
    }
    else
    {
        NS_ASSERT_MSG(bucket == m_current, "FabricScheduler: removing an event it does not hold");
        auto late = std::find_if(m_late.begin(), m_late.end(), same);
        NS_ASSERT_MSG(late != m_late.end(), "FabricScheduler: removing an event it does not hold");
        m_late.erase(late);
        std::make_heap(m_late.begin(), m_late.end(), std::greater<Entry>());
    }
    --m_inRing;
    if (bucket == m_current ? CurrentEmpty() : b.empty())
    {
        MarkIdle(slot);
    }
}

} // namespace ns3
