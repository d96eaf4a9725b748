// PendingEvent knows whether its event is pending where EventId::IsRunning does not: under
// FabricScheduler a keyed event (an arrival) scheduled early runs after an unkeyed one of the same
// time scheduled later, and ns-3 then calls the unkeyed one, already run, still pending (it
// compares uids). In a run split over MPI ranks the uids differ, and so would the answer.
#include "ns3/config.h"
#include "ns3/keyed-event.h"
#include "ns3/object-factory.h"
#include "ns3/pending-event.h"
#include "ns3/simulator.h"

#include <gtest/gtest.h>

using namespace ns3;

namespace
{

struct Seen
{
    PendingEvent pending;
    EventId plain;
    bool ran = false;
    bool pendingSaysPending = true;
    bool eventIdSaysRunning = false;
};

void
Fire(Seen* s)
{
    s->pending.Ran();
    s->ran = true;
}

void
FirePlain(Seen* s)
{
    s->ran = true;
}

/// An arrival (keyed) that looks at both records when it runs.
class Look : public KeyedEventImpl
{
  public:
    Look(Seen* a, Seen* b)
        : KeyedEventImpl(ArrivalKey(1, 0))
        , m_a(a)
        , m_b(b)
    {
    }

  private:
    void Notify() override
    {
        m_a->pendingSaysPending = m_a->pending.IsPending();
        m_b->eventIdSaysRunning = m_b->plain.IsRunning();
    }

    Seen* m_a;
    Seen* m_b;
};

} // namespace

TEST(PendingEvent, AnEventThatRanEarlierInTheTimeStepIsNotPending)
{
    Config::Reset();
    Simulator::SetScheduler(ObjectFactory("ns3::FabricScheduler"));
    Seen a, b;
    // The arrival first (lower uid), then the two timers of the same time step.
    Simulator::Schedule(NanoSeconds(10), new Look(&a, &b));
    a.pending.Schedule(NanoSeconds(10), &Fire, &a);
    b.plain = Simulator::Schedule(NanoSeconds(10), &FirePlain, &b);
    Simulator::Run();
    ASSERT_TRUE(a.ran);
    ASSERT_TRUE(b.ran);
    EXPECT_FALSE(a.pendingSaysPending);
    // What PendingEvent is for: ns-3's answer for the same situation is wrong.
    EXPECT_TRUE(b.eventIdSaysRunning);
    Simulator::Destroy();
}

TEST(PendingEvent, CancelStopsAPendingEventOfTheCurrentTimeStep)
{
    Config::Reset();
    Simulator::SetScheduler(ObjectFactory("ns3::FabricScheduler"));
    Seen a;
    a.pending.Schedule(NanoSeconds(10), &Fire, &a);
    EXPECT_TRUE(a.pending.IsPending());
    Simulator::Schedule(NanoSeconds(10) - PicoSeconds(1), [&a]() { a.pending.Cancel(); });
    Simulator::Run();
    EXPECT_FALSE(a.ran);
    EXPECT_FALSE(a.pending.IsPending());
    Simulator::Destroy();
}
