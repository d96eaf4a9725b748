// GoogleTest main for ns-3 based tests: the resource caps, then picosecond time before any Time
// exists.
#include "test-guard.h"

#include "ns3/nstime.h"

#include <gtest/gtest.h>

int
main(int argc, char** argv)
{
    fabricsim::test::CapTestResources();
    ns3::Time::SetResolution(ns3::Time::PS);
    testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
