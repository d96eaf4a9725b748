// The end of a `run` (scenario/helper/run-end): one notice delay after the last rank's flows are
// done, after every other event of that picosecond and before any later one, whether the notices
// come from this rank or from others; the stop_ns cap ends a run the same way.
#include "ns3/config.h"
#include "ns3/keyed-event.h"
#include "ns3/object-factory.h"
#include "ns3/run-end.h"
#include "ns3/simulator.h"

#include <gtest/gtest.h>

#include <vector>

using namespace ns3;
using fabricsim::RunEnd;

namespace
{

/// Records the times its events ran at.
struct Log
{
    std::vector<Time> ran;

    void Mark()
    {
        ran.push_back(Simulator::Now());
    }
};

/// A frame arrival with the largest arrival key there is: when it runs it schedules one more
/// plain event for the same picosecond, which must run too.
class LastArrival : public KeyedEventImpl
{
  public:
    explicit LastArrival(Log* log)
        : KeyedEventImpl(ArrivalKey(0xffffffffu, 0x7ffffffeu))
        , m_log(log)
    {
    }

  private:
    void Notify() override
    {
        m_log->Mark();
        Simulator::ScheduleNow(&Log::Mark, m_log);
    }

    Log* m_log;
};

void
Fresh()
{
    Config::Reset();
    Simulator::SetScheduler(ObjectFactory("ns3::FabricScheduler"));
}

} // namespace

TEST(RunEnd, OneRankEndsOneNoticeAfterItsFlowsAreDone)
{
    Fresh();
    Log log;
    RunEnd end(1, MicroSeconds(1));
    end.CapAt(MicroSeconds(100));
    Simulator::Schedule(MicroSeconds(5), &RunEnd::LocalDone, &end);
    Simulator::Schedule(MicroSeconds(6), new LastArrival(&log));
    Simulator::Schedule(MicroSeconds(6), &Log::Mark, &log);
    Simulator::Schedule(MicroSeconds(6) + PicoSeconds(1), &Log::Mark, &log);
    Simulator::Run();
    EXPECT_EQ(Simulator::Now(), MicroSeconds(6));
    ASSERT_TRUE(end.AllDone());
    EXPECT_EQ(end.LastDone(), MicroSeconds(5));
    // The plain event, the last arrival and the event it scheduled: all at 6 us, none after.
    ASSERT_EQ(log.ran.size(), 3u);
    for (Time t : log.ran)
    {
        EXPECT_EQ(t, MicroSeconds(6));
    }
    Simulator::Destroy();
}

TEST(RunEnd, TwoRanksEndOneNoticeAfterTheLaterOne)
{
    Fresh();
    Log log;
    RunEnd end(2, MicroSeconds(1));
    end.CapAt(MicroSeconds(100));
    Time broadcastAt(-1);
    end.SetBroadcast([&broadcastAt](Time at) { broadcastAt = at; });
    Simulator::Schedule(MicroSeconds(5), &RunEnd::LocalDone, &end);
    // The other rank was done at 7 us; its notice arrives 1 us later.
    Simulator::Schedule(MicroSeconds(8), &RunEnd::Heard, &end, MicroSeconds(7));
    Simulator::Schedule(MicroSeconds(7), &Log::Mark, &log);
    Simulator::Schedule(MicroSeconds(8) + PicoSeconds(1), &Log::Mark, &log);
    Simulator::Run();
    EXPECT_EQ(broadcastAt, MicroSeconds(5));
    EXPECT_EQ(Simulator::Now(), MicroSeconds(8));
    ASSERT_TRUE(end.AllDone());
    EXPECT_EQ(end.LastDone(), MicroSeconds(7));
    ASSERT_EQ(log.ran.size(), 1u); // this rank's own notice at 6 us did not end the run
    EXPECT_EQ(log.ran[0], MicroSeconds(7));
    Simulator::Destroy();
}

TEST(RunEnd, TheCapEndsARunWhoseFlowsNeverFinishAfterItsLastPicosecond)
{
    Fresh();
    Log log;
    RunEnd end(1, MicroSeconds(1));
    end.CapAt(MicroSeconds(50));
    Simulator::Schedule(MicroSeconds(50), new LastArrival(&log));
    Simulator::Schedule(MicroSeconds(50) + PicoSeconds(1), &Log::Mark, &log);
    Simulator::Run();
    EXPECT_FALSE(end.AllDone());
    EXPECT_EQ(Simulator::Now(), MicroSeconds(50));
    EXPECT_EQ(log.ran.size(), 2u);
    Simulator::Destroy();
}
