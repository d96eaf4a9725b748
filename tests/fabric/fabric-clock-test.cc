// ns3::FabricClock: the hot path's clock reads what Simulator::Now() reads, inside events at
// any time, and again after Simulator::Destroy, when the next run has a new simulator.
#include "ns3/fabric-clock.h"
#include "ns3/simulator.h"

#include <gtest/gtest.h>

#include <vector>

namespace
{

std::vector<std::pair<int64_t, int64_t>> g_seen; // (Simulator::Now, FabricClock::Now) in ps

void
Record()
{
    g_seen.emplace_back(ns3::Simulator::Now().GetPicoSeconds(),
                        ns3::FabricClock::Now().GetPicoSeconds());
}

/// Schedules events at \p times (ps) and runs them, then destroys the simulator.
std::vector<std::pair<int64_t, int64_t>>
RunAt(const std::vector<int64_t>& times)
{
    g_seen.clear();
    for (int64_t t : times)
    {
        ns3::Simulator::Schedule(ns3::PicoSeconds(t), &Record);
    }
    ns3::Simulator::Run();
    Record(); // after Run: the last event's time
    ns3::Simulator::Destroy();
    return g_seen;
}

} // namespace

TEST(FabricClock, ReadsTheSimulatorsTimeInEveryEventAndAcrossRuns)
{
    const auto first = RunAt({0, 7, 1'000'000, 1'000'001, 3'000'000'000});
    ASSERT_EQ(first.size(), 6u);
    for (const auto& [sim, fast] : first)
    {
        EXPECT_EQ(sim, fast);
    }
    EXPECT_EQ(first.back().second, 3'000'000'000);
    // A new simulator after Destroy: the clock starts again at 0, not at the old run's end.
    const auto second = RunAt({5, 20});
    ASSERT_EQ(second.size(), 3u);
    EXPECT_EQ(second.front(), std::make_pair(int64_t(5), int64_t(5)));
    EXPECT_EQ(second.back(), std::make_pair(int64_t(20), int64_t(20)));
    EXPECT_EQ(ns3::FabricClock::Now().GetPicoSeconds(), 0);
    ns3::Simulator::Destroy();
}
