// GoogleTest main of the calibration and replay tests: picosecond time before any Time exists.
#include "ns3/nstime.h"

#include <gtest/gtest.h>

int
main(int argc, char** argv)
{
    ns3::Time::SetResolution(ns3::Time::PS);
    testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
