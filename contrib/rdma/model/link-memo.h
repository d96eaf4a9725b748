/*
 * What the collective memo reads from and writes to the fabric's objects (NICs, queue pairs,
 * congestion control, switch ports, switches, links). A collective replayed from the memo must
 * start from a state that, shifted to time 0, equals the one it was recorded from, and must
 * leave behind what simulating it would have: MemoProbe gathers the first (is each object at
 * rest, and what can differ at rest), MemoRecord the second (every counter, id and
 * end-state field, in one fixed order per object, so a span's delta can be added to another
 * fabric's objects).
 */
#ifndef FABRICSIM_LINK_MEMO_H
#define FABRICSIM_LINK_MEMO_H

#include "ns3/nstime.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ns3
{

/**
 * \brief Whether a set of fabric objects is at rest, and their state relative to now. Objects
 * add to one of two states: the base one, always compared, and the signal one, which only
 * matters to a span that saw a congestion signal (an ECN mark or a CNP): DCQCN's alpha and its
 * phase, a receiver's last CNP. The states are kept whole and compared whole (a digest alone
 * could collide, and a replay on a collision would be a wrong result).
 */
class MemoProbe
{
  public:
    explicit MemoProbe(Time now);

    /// Marks the set not at rest (the first reason is kept): "host 3 port 0: 2 frames queued".
    void Block(const std::string& why);

    void Mix(uint64_t v)
    {
        m_state.push_back(v);
    }

    void MixDouble(double v);

    /// A time relative to now; every time at or before now mixes alike, as "past".
    void MixTime(Time t)
    {
        Mix(t <= m_now ? 0 : uint64_t((t - m_now).GetPicoSeconds()));
    }

    /// A time that matters only relative to now (an alpha period's phase): mixed exactly.
    void MixSince(Time t)
    {
        Mix(uint64_t((m_now - t).GetPicoSeconds()));
    }

    void MixSignal(uint64_t v)
    {
        m_signal.push_back(v);
    }

    void MixSignalDouble(double v);

    void MixSignalSince(Time t)
    {
        MixSignal(uint64_t((m_now - t).GetPicoSeconds()));
    }

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

    /// The base state, in visiting order.
    const std::vector<uint64_t>& State() const
    {
        return m_state;
    }

    const std::vector<uint64_t>& SignalState() const
    {
        return m_signal;
    }

    /// Room for \p n base values (a probe of the same objects as before needs as many).
    void Reserve(size_t n)
    {
        m_state.reserve(n);
    }

    /// Moves the base and signal states out.
    std::vector<uint64_t> TakeState()
    {
        return std::move(m_state);
    }

    std::vector<uint64_t> TakeSignalState()
    {
        return std::move(m_signal);
    }

  private:
    Time m_now;
    std::string m_blocker;
    std::vector<uint64_t> m_state;
    std::vector<uint64_t> m_signal;
};

/**
 * \brief The fields of a set of fabric objects in one fixed order, visited three times: at the
 * start of a span (Begin: values kept, maxima set aside), at its end (End: the span's delta),
 * and on another fabric, to write that delta there (Apply). Each field says how a span changes
 * it: Sum (a counter or a sequence number: advanced by the span's difference), Max (a high
 * water mark: the span's own maximum, merged), Last (an end state: the span's end value),
 * LastTime (a time: its offset from the span's start, when the span set it). Signal and Fault
 * are Sums that also classify the span: a congestion signal (the signal state becomes part of
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
    /// Writes \p delta (from a span's End; it must outlive the record) to a span starting at
    /// \p start.
    MemoRecord(Time start, const std::vector<uint64_t>& delta);

    /// Switches a Begin record to End: the next visit takes the delta.
    void Finish();

    Mode GetMode() const
    {
        return m_mode;
    }

    // Apply, the path every replay takes, is inline; Begin and End (recordings) are not.
    void Sum(uint64_t& f)
    {
        if (m_mode == Mode::Apply)
        {
            f += Take();
            return;
        }
        Visit(f, 0);
    }

    /// \p n counters in a row (a histogram's bins).
    void SumBlock(uint64_t* f, size_t n);
    void Sum(uint32_t& f);
    void Max(uint64_t& f);
    void Last(uint64_t& f)
    {
        if (m_mode == Mode::Apply)
        {
            f = Take();
            return;
        }
        Visit(f, 2);
    }

    void Last(uint32_t& f);
    void Last(int64_t& f);
    void Last(double& f);
    void Last(bool& f);
    void LastTime(Time& t)
    {
        if (m_mode == Mode::Apply)
        {
            const bool set = Take() != 0;
            const int64_t offset = int64_t(Take());
            if (set)
            {
                t = m_start + PicoSeconds(offset);
            }
            return;
        }
        RecordTime(t);
    }

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
        return m_cursor == Source().size();
    }

  private:
    /// What Next and Take read: the delta when applying, Begin's values when ending.
    const std::vector<uint64_t>& Source() const
    {
        return m_mode == Mode::Apply ? *m_apply : m_before;
    }

    uint64_t Take()
    {
        const std::vector<uint64_t>& src = Source();
        if (m_cursor >= src.size())
        {
            Overrun();
        }
        return src[m_cursor++];
    }

    [[noreturn]] static void Overrun();
    void RecordTime(Time& t);
    uint64_t Next();
    void Visit(uint64_t& f, int kind);

    Mode m_mode;
    Time m_start;
    std::vector<uint64_t> m_before; ///< Begin's values (maxima: the value set aside)
    std::vector<uint64_t> m_delta;
    const std::vector<uint64_t>* m_apply = nullptr; ///< the delta Apply writes
    size_t m_cursor = 0;
    bool m_signalled = false;
    std::string m_unusable;
};

} // namespace ns3

#endif
