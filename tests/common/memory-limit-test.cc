// The memory limit every command runs under, and how its sizes read in errors.
#include "memory-limit.h"

#include <gtest/gtest.h>

TEST(MemoryLimit, DefaultIsBelowThePhysicalMemory)
{
    const uint64_t phys = fabricsim::PhysicalMemoryBytes();
    ASSERT_GT(phys, 0u);
    EXPECT_EQ(fabricsim::DefaultMemoryLimitBytes(), phys / 5 * 4);
}

TEST(MemoryLimit, SizesReadAsPeopleWriteThem)
{
    EXPECT_EQ(fabricsim::DescribeBytes(1e9), "1.00 GB");
    EXPECT_EQ(fabricsim::DescribeBytes(19.2e9), "19.2 GB");
    EXPECT_EQ(fabricsim::DescribeBytes(1.64e15), "1.64 PB");
    EXPECT_EQ(fabricsim::DescribeBytes(500e6), "500.0 MB");
}
