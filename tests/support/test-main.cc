// GoogleTest main for the suites without ns-3: the resource caps, then the tests.
#include "test-guard.h"

#include <gtest/gtest.h>

int
main(int argc, char** argv)
{
    fabricsim::test::CapTestResources();
    testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
