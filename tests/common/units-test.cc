#include "units.h"

#include <gtest/gtest.h>

using namespace fabricsim;

TEST(Units, BytesDecimalAndBinary)
{
    EXPECT_DOUBLE_EQ(*ParseQuantity("80GB", UnitKind::Bytes), 80e9);
    EXPECT_DOUBLE_EQ(*ParseQuantity("64 GiB", UnitKind::Bytes), 64.0 * (1ULL << 30));
    EXPECT_DOUBLE_EQ(*ParseQuantity("1024", UnitKind::Bytes), 1024.0);
    EXPECT_FALSE(ParseQuantity("80Gb", UnitKind::Bytes));
    EXPECT_FALSE(ParseQuantity("GB", UnitKind::Bytes));
    // Space only between the number and the unit.
    EXPECT_FALSE(ParseQuantity("16MB ", UnitKind::Bytes));
    EXPECT_FALSE(ParseQuantity(" 16MB", UnitKind::Bytes));
    EXPECT_FALSE(ParseQuantity("16 ", UnitKind::Bytes));
    EXPECT_FALSE(ParseQuantity("16MB\n", UnitKind::Bytes));
    EXPECT_DOUBLE_EQ(*ParseQuantity("16 MB", UnitKind::Bytes), 16e6);
}

TEST(Units, BandwidthBytesAndBits)
{
    EXPECT_DOUBLE_EQ(*ParseQuantity("3.35TB/s", UnitKind::BytesPerSec), 3.35e12);
    EXPECT_DOUBLE_EQ(*ParseQuantity("400Gb/s", UnitKind::BytesPerSec), 50e9);
    EXPECT_DOUBLE_EQ(*ParseQuantity("800Gbps", UnitKind::BytesPerSec), 100e9);
    EXPECT_FALSE(ParseQuantity("3TB", UnitKind::BytesPerSec));
}

TEST(Units, FlopsAndTime)
{
    EXPECT_DOUBLE_EQ(*ParseQuantity("989TFLOPS", UnitKind::FlopsPerSec), 989e12);
    EXPECT_DOUBLE_EQ(*ParseQuantity("2.5 PFLOP/s", UnitKind::FlopsPerSec), 2.5e15);
    EXPECT_DOUBLE_EQ(*ParseQuantity("3us", UnitKind::Seconds), 3e-6);
    EXPECT_DOUBLE_EQ(*ParseQuantity("250ns", UnitKind::Seconds), 250e-9);
    EXPECT_FALSE(ParseQuantity("3 weeks", UnitKind::Seconds));
}
