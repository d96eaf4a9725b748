/*
 * What the collective memo reads from and writes to the fabric's objects (NICs, queue pairs,
 * congestion control, switch ports, switches, links). A collective replayed from the memo must
 * start from a state that, shifted to time 0, equals the one it was recorded from, and must
 * leave behind what simulating it would have: MemoProbe gathers the first (is each object at
 * rest, and a digest of what can differ at rest), MemoRecord the second (every counter, id and
 * end-state field, in one fixed order per object, so a span's delta can be added to another
 * fabric's objects).
 */
#ifndef FABRICSIM_LINK_MEMO_H
#define FABRICSIM_LINK_MEMO_H

#include "ns3/nstime.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{

/**
 * \brief Whether a set of fabric objects is at rest, and a digest of their state relative to
 * now. Objects mix into one of two digests: the base one, always compared, and the signal one,
 * which only matters to a span that saw a congestion signal (an ECN mark or a CNP): DCQCN's
 * alpha and its phase, a receiver's last CNP.
 */
class MemoProbe
{
  public:
    explicit MemoProbe(Time now);

    /// Marks the set not at rest (the first reason is kept): "host 3 port 0: 2 frames queued".
    void Block(const std::string& why);

    void Mix(uint64_t v);
    void MixDouble(double v);
    /// A time relative to now; every time at or before now mixes alike, as "past".
    void MixTime(Time t);
    /// A time that matters only relative to now (an alpha period's phase): mixed exactly.
    void MixSince(Time t);

    void MixSignal(uint64_t v);
    void MixSignalDouble(double v);
    void MixSignalSince(Time t);

    Time Now() const
    {
        return m_now;
    }

    bool AtRest() const
    {
        return m_blocker.empty();
    }

    const std::string& Blocker() const
    {
        return m_blocker;
    }

    uint64_t Digest() const
    {
        return m_digest;
    }

    uint64_t SignalDigest() const
    {
        return m_signal;
    }

  private:
    static uint64_t Combine(uint64_t h, uint64_t v);

    Time m_now;
    std::string m_blocker;
    uint64_t m_digest = 0x9e3779b97f4a7c15ULL;
    uint64_t m_signal = 0x9e3779b97f4a7c15ULL;
};

/**
 * \brief The fields of a set of fabric objects in one fixed order, visited three times: at the
 * start of a span (Begin: values kept, maxima set aside), at its end (End: the span's delta),
 * and on another fabric, to write that delta there (Apply). Each field says how a span changes
 * it: Sum (a counter or a sequence number: advanced by the span's difference), Max (a high
 * water mark: the span's own maximum, merged), Last (an end state: the span's end value),
 * LastTime (a time: its offset from the span's start, when the span set it). Signal and Fault
 * are Sums that also classify the span: a congestion signal (the signal digest becomes part of
 * the entry) or an event a replay cannot reproduce (a drop, a timeout, a random draw), which
 * makes the span unusable.
 */
class MemoRecord
{
  public:
    enum class Mode
    {
        Begin,
        End,
        Apply
    };

    /// Starts a span at \p start: the next visit reads the fields.
    explicit MemoRecord(Time start);
    /// Writes \p delta (from a span's End) to a span starting at \p start.
    MemoRecord(Time start, const std::vector<uint64_t>& delta);

    /// Switches a Begin record to End: the next visit takes the delta.
    void Finish();

    Mode GetMode() const
    {
        return m_mode;
    }

    void Sum(uint64_t& f);
    void Sum(uint32_t& f);
    void Max(uint64_t& f);
    void Last(uint64_t& f);
    void Last(uint32_t& f);
    void Last(int64_t& f);
    void Last(double& f);
    void Last(bool& f);
    void LastTime(Time& t);
    /**
     * A count of parts (queue pairs of a NIC): a span that adds some cannot be replayed (the
     * new parts have no before). Returns how many parts to visit: the count both sides have.
     */
    size_t Shape(size_t n, const char* what);
    /// At End: the span cannot be replayed when \p cond holds (state a record cannot hold).
    void Unusable(bool cond, const char* what);
    void Signal(uint64_t& f);
    /// \p what names the event for the reason ("drops", "timeouts", "random draws").
    void Fault(uint64_t& f, const char* what);

    /// After End: the delta to store (empty before).
    const std::vector<uint64_t>& Delta() const
    {
        return m_delta;
    }

    /// After End: the span saw a congestion signal.
    bool Signalled() const
    {
        return m_signalled;
    }

    /// After End: why the span cannot be replayed ("" when it can).
    const std::string& Unusable() const
    {
        return m_unusable;
    }

    /// After Apply: every value of the delta was used (the objects matched the record's).
    bool Consumed() const
    {
        return m_cursor == m_delta.size();
    }

  private:
    uint64_t Next();
    void Put(uint64_t v);
    void Visit(uint64_t& f, int kind);

    Mode m_mode;
    Time m_start;
    std::vector<uint64_t> m_before; ///< Begin's values (maxima: the value set aside)
    std::vector<uint64_t> m_delta;
    size_t m_cursor = 0;
    bool m_signalled = false;
    std::string m_unusable;
};

} // namespace ns3

#endif
