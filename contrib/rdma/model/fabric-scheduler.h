/*
 * The fabric's event order: events by time, and within one picosecond the unkeyed events first
 * (in the order they were scheduled, as every ns-3 scheduler orders them), then the keyed ones
 * (KeyedEventImpl: frame arrivals) by key, the order they were scheduled in breaking ties. Where
 * the keyed events of a time were inserted from (another partition's messages, a different
 * interleaving of nodes) does not change the order they run in. fabricsim's runs use it
 * (fabric-setup.h); like any ns-3 scheduler it is chosen by the SchedulerType global value or
 * Simulator::SetScheduler, and ns-3's distributed simulator takes it the same way.
 *
 * Kept as a calendar: a fabric at cluster scale has several events a nanosecond, nearly all
 * within a few microseconds of now (a frame's serialisation and a link's delay). Those go to a
 * ring of buckets four nanoseconds wide, unsorted until their bucket comes up (then sorted
 * once), a bit set per non-empty bucket. An event scheduled into the current bucket after that
 * waits in a small heap beside it. Events past the ring's horizon (timers, compute delays) wait
 * in a binary heap and move to the ring as it reaches them. The order is the same total order
 * as a single heap's, so outputs do not depend on the layout.
 */
#ifndef FABRICSIM_FABRIC_SCHEDULER_H
#define FABRICSIM_FABRIC_SCHEDULER_H

#include "ns3/scheduler.h"

#include <array>
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

    /// A bucket spans 2^kBucketShift picoseconds (4.1 ns: wide enough that most events are
    /// sorted with a few others, so the look-ahead sees them); the ring 2^kRingBits buckets
    /// (8.4 us: a jumbo frame's serialisation plus several microseconds of wire). Measured at
    /// 1,024 hosts against 4 ns: 1 ns buckets 2-7 % slower, 256 ps a further 9 % slower than
    /// 1 ns, 8 ns 2-3 % slower.
    static constexpr unsigned kBucketShift = 12;
    static constexpr unsigned kRingBits = 11;

  private:
    struct Entry
    {
        uint64_t order; ///< OrderOf
        Scheduler::Event ev;

        /// Later than \p o (the heaps keep the earliest on top); ties between equal keys go by
        /// uid, the order of scheduling.
        bool operator>(const Entry& o) const
        {
            return ev.key.m_ts != o.ev.key.m_ts ? ev.key.m_ts > o.ev.key.m_ts
                   : order != o.order           ? order > o.order
                                                : ev.key.m_uid > o.ev.key.m_uid;
        }

        bool operator<(const Entry& o) const
        {
            return o > *this;
        }
    };

    static constexpr uint64_t kRing = uint64_t(1) << kRingBits;
    /// A bucket keeps its storage for the next time round up to this many entries.
    static constexpr size_t kKeepEntries = 512;
    static constexpr uint64_t kWords = kRing / 64;
    static constexpr uint64_t kSummaryWords = (kWords + 63) / 64;
    static_assert(kRing >= 64, "the ring spans whole words");

    static uint64_t BucketOf(const Scheduler::Event& ev)
    {
        return ev.key.m_ts >> kBucketShift;
    }

    /// The ring's first non-empty bucket at or after m_current (absolute number); the ring
    /// must hold an event.
    uint64_t NextBusyBucket() const;
    /// Moves m_current to \p bucket (the current one empty), the far events the ring now
    /// reaches into it, and sorts that bucket.
    void Advance(uint64_t bucket);
    void PutInRing(const Entry& e, uint64_t bucket);
    /// Hints the current bucket's next events to load their memory (KeyedEventImpl::Prefetch).
    void PrefetchAhead(const std::vector<Entry>& b) const;
    void MarkBusy(uint64_t slot)
    {
        m_busy[slot / 64] |= uint64_t(1) << (slot % 64);
        m_summary[slot / 4096] |= uint64_t(1) << (slot / 64 % 64);
    }
    void MarkIdle(uint64_t slot)
    {
        if ((m_busy[slot / 64] &= ~(uint64_t(1) << (slot % 64))) == 0)
        {
            m_summary[slot / 4096] &= ~(uint64_t(1) << (slot / 64 % 64));
        }
    }
    bool CurrentEmpty() const
    {
        return m_head == m_buckets[m_current & (kRing - 1)].size() && m_late.empty();
    }

    /// Absolute number of the current bucket (the last removed event's); the ring holds
    /// buckets [m_current, m_current + kRing), the far heap everything later.
    uint64_t m_current{0};
    size_t m_inRing{0};
    std::array<uint64_t, kWords> m_busy{};           ///< a bit per non-empty ring slot
    std::array<uint64_t, kSummaryWords> m_summary{}; ///< a bit per non-zero m_busy word
    std::vector<std::vector<Entry>> m_buckets;       ///< kRing slots
    size_t m_head{0};          ///< the current bucket's next entry: [m_head, end) is sorted
    std::vector<Entry> m_late; ///< a heap: events put in the current bucket after its sort
    std::vector<Entry> m_far;  ///< a binary heap
};

} // namespace ns3

#endif
