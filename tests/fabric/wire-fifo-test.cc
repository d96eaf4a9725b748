// WireFifo, the frames on one link direction: first in, first out across wrap-around and
// growth (a 400G link with 1 us of delay holds hundreds of small frames at once).
#include "ns3/wire-fifo.h"

#include <gtest/gtest.h>

#include <deque>

TEST(WireFifo, KeepsArrivalOrderThroughWrapAroundAndGrowth)
{
    ns3::WireFifo fifo;
    std::deque<int64_t> model;
    int64_t next = 0;
    // Waves of pushes larger than the last, each followed by popping most of it: the ring's
    // head moves through every slot and the ring grows while it is wrapped.
    for (int wave = 1; wave <= 40; ++wave)
    {
        for (int k = 0; k < 3 * wave; ++k)
        {
            fifo.Push({next, nullptr, uint64_t(wave)});
            model.push_back(next++);
        }
        for (int k = 0; k < 2 * wave; ++k)
        {
            ASSERT_FALSE(fifo.Empty());
            ASSERT_EQ(fifo.Front().arrivalTs, model.front());
            fifo.Pop();
            model.pop_front();
        }
        ASSERT_EQ(fifo.Size(), model.size());
    }
    while (!model.empty())
    {
        ASSERT_EQ(fifo.Front().arrivalTs, model.front());
        fifo.Pop();
        model.pop_front();
    }
    EXPECT_TRUE(fifo.Empty());
}
