/*
 * nccl-tests conventions: sizes with suffixes, sweeps, alignment, counts, bus-bandwidth factors,
 * the table layout and the JSON / CSV rows.
 */
#include "input-error.h"
#include "nccl-report.h"

#include <gtest/gtest.h>

namespace fabricsim
{
namespace
{

TEST(NcclReport, SizesTakeBinarySuffixes)
{
    EXPECT_EQ(ParseNcclSize("8", "-b"), 8u);
    EXPECT_EQ(ParseNcclSize("64K", "-b"), 65536u);
    EXPECT_EQ(ParseNcclSize("1m", "-b"), 1048576u);
    EXPECT_EQ(ParseNcclSize("2G", "-e"), 2147483648u);
    EXPECT_EQ(ParseNcclSize("4MB", "-e"), 4194304u);
    EXPECT_THROW(ParseNcclSize("", "-b"), fabricsim::InputError);
    EXPECT_THROW(ParseNcclSize("12X", "-b"), fabricsim::InputError);
    EXPECT_THROW(ParseNcclSize("-1", "-b"), fabricsim::InputError);
    EXPECT_THROW(ParseNcclSize("0", "-b"), fabricsim::InputError);
}

TEST(NcclReport, SweepMultipliesUpToTheMaximum)
{
    EXPECT_EQ(SizeSweep(8, 128, 2), (std::vector<uint64_t>{8, 16, 32, 64, 128}));
    EXPECT_EQ(SizeSweep(1024, 5000, 4), (std::vector<uint64_t>{1024, 4096}));
    EXPECT_EQ(SizeSweep(1 << 20, 1 << 20, 2), (std::vector<uint64_t>{1 << 20}));
}

TEST(NcclReport, AlignmentAndCountFollowNcclTests)
{
    EXPECT_EQ(AlignedSize(CollectiveKind::kAllReduce, 1001, 8), 1000u);
    EXPECT_EQ(AlignedSize(CollectiveKind::kAllGather, 1000, 8), 992u);
    EXPECT_EQ(AlignedSize(CollectiveKind::kAllToAll, 16, 8), 0u);
    EXPECT_EQ(ElementCount(CollectiveKind::kAllReduce, 1024, 8), 256u);
    EXPECT_EQ(ElementCount(CollectiveKind::kAllGather, 1024, 8), 32u);
    EXPECT_EQ(ElementCount(CollectiveKind::kBroadcast, 1024, 8), 256u);
}

TEST(NcclReport, BusBandwidthFactors)
{
    EXPECT_DOUBLE_EQ(BusBandwidthFactor(CollectiveKind::kAllReduce, 8), 1.75);
    EXPECT_DOUBLE_EQ(BusBandwidthFactor(CollectiveKind::kAllGather, 8), 0.875);
    EXPECT_DOUBLE_EQ(BusBandwidthFactor(CollectiveKind::kReduceScatter, 4), 0.75);
    EXPECT_DOUBLE_EQ(BusBandwidthFactor(CollectiveKind::kAllToAll, 2), 0.5);
    EXPECT_DOUBLE_EQ(BusBandwidthFactor(CollectiveKind::kBroadcast, 8), 1.0);
    EXPECT_DOUBLE_EQ(BusBandwidthFactor(CollectiveKind::kReduce, 8), 1.0);
}

TEST(NcclReport, RowBandwidthsUseDecimalGigabytes)
{
    // 1e9 B in 1 ms = 1e12 B/s = 1000 GB/s.
    NcclRow r = MakeNcclRow(CollectiveKind::kAllReduce, 8, 1000000000, 1000.0, 0);
    EXPECT_DOUBLE_EQ(r.m_algbwGbps, 1000.0);
    EXPECT_DOUBLE_EQ(r.m_busbwGbps, 1750.0);
    EXPECT_EQ(r.m_redop, "sum");
    EXPECT_EQ(r.m_root, -1);
    NcclRow b = MakeNcclRow(CollectiveKind::kBroadcast, 8, 1024, 10.0, -1, 3);
    EXPECT_EQ(b.m_redop, "none");
    EXPECT_EQ(b.m_root, 3);
}

TEST(NcclReport, TableLineHasNcclTestsColumns)
{
    NcclRow r = MakeNcclRow(CollectiveKind::kAllReduce, 8, 268435456, 40931.2, 0);
    const std::string line = NcclTableLine(r);
    EXPECT_EQ(line,
              "   268435456      67108864     float     sum      -1    40931    6.56   11.48       "
              "0    40931    6.56   11.48       0\n");
    NcclRow n = MakeNcclRow(CollectiveKind::kAllGather, 8, 1024, 12.345, -1);
    EXPECT_NE(NcclTableLine(n).find("  12.35"), std::string::npos);
    EXPECT_NE(NcclTableLine(n).find("N/A"), std::string::npos);
    EXPECT_NE(NcclTableHeader().find("#wrong"), std::string::npos);
    EXPECT_EQ(NcclAverageLine({r}), "# Avg bus bandwidth    : 11.4769 \n");
}

TEST(NcclReport, JsonAndCsvCarryTheSameRows)
{
    NcclRow a = MakeNcclRow(CollectiveKind::kAllReduce, 4, 4096, 20.0, 0);
    NcclRow b = MakeNcclRow(CollectiveKind::kAllReduce, 4, 8192, 0, 0);
    b.m_complete = false;
    auto j = NcclRowsJson({a, b});
    ASSERT_EQ(j.size(), 2u);
    EXPECT_EQ(j[0]["size_bytes"], 4096);
    EXPECT_DOUBLE_EQ(j[0]["algbw_gbps"].get<double>(), 4096 / 20e3);
    EXPECT_DOUBLE_EQ(j[0]["busbw_gbps"].get<double>(), 4096 / 20e3 * 1.5);
    EXPECT_TRUE(j[1]["time_us"].is_null());
    const std::string csv = NcclRowsCsv({a, b});
    EXPECT_EQ(csv.substr(0, csv.find('\n')),
              "size_bytes,count,type,redop,root,time_us,algbw_gbps,busbw_gbps,wrong,complete");
    EXPECT_NE(csv.find("4096,1024,float,sum,-1,20,0.2048,0.3072,0,true"), std::string::npos) << csv;
    EXPECT_NE(csv.find("8192,2048,float,sum,-1,,,,0,false"), std::string::npos) << csv;
    EXPECT_DOUBLE_EQ(AverageBusBandwidth({a, b}), a.m_busbwGbps);
}

} // namespace
} // namespace fabricsim
