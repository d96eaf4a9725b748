#include "run-end.h"

#include "ns3/keyed-event.h"
#include "ns3/simulator.h"

#include <algorithm>

namespace fabricsim
{

using namespace ns3;

namespace
{

/// Stops the simulator after every other event of its picosecond: keyed events run after the
/// unkeyed ones and by key, and this one has the largest key there is.
class EndOfRunEvent final : public KeyedEventImpl
{
  public:
    EndOfRunEvent()
        : KeyedEventImpl((uint64_t(1) << 63) - 1)
    {
    }

  private:
    void Notify() override
    {
        Simulator::Stop();
    }
};

void
ScheduleEnd(Time delay)
{
    Simulator::Schedule(delay, Ptr<EventImpl>(new EndOfRunEvent(), false));
}

} // namespace

RunEnd::RunEnd(uint32_t ranks, Time notice)
    : m_ranks(ranks)
    , m_notice(notice)
{
}

void
RunEnd::SetBroadcast(std::function<void(Time)> broadcast)
{
    m_broadcast = std::move(broadcast);
}

void
RunEnd::CapAt(Time at)
{
    ScheduleEnd(at - Simulator::Now());
}

void
RunEnd::LocalDone()
{
    if (m_localDone)
    {
        return;
    }
    m_localDone = true;
    const Time now = Simulator::Now();
    if (m_broadcast)
    {
        m_broadcast(now);
    }
    Simulator::Schedule(m_notice, &RunEnd::Heard, this, now);
}

void
RunEnd::Heard(Time doneAt)
{
    m_lastDone = std::max(m_lastDone, doneAt);
    if (++m_heard == m_ranks)
    {
        ScheduleEnd(Time(0));
    }
}

bool
RunEnd::AllDone() const
{
    return m_heard == m_ranks;
}

Time
RunEnd::LastDone() const
{
    return m_lastDone;
}

Time
RunEnd::NoticeDelay(Time maxLinkDelay)
{
    // A picosecond past the lookahead: ns-3's granted-time window runs the events of its last
    // picosecond too, so a message arriving exactly one lookahead after the window's start
    // could come after them.
    return std::max(maxLinkDelay, NanoSeconds(1)) + PicoSeconds(1);
}

} // namespace fabricsim
