/*
 * The Collective API over a transport: rank groups, automatic algorithm choice, concurrent
 * collectives, user schedules, AlltoAllv, point-to-point transfers and bad requests.
 */
#include "analytical-transport.h"
#include "executor-test-util.h"
#include "input-error.h"
#include "schedule-collectives.h"
#include "test-util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

namespace fabricsim
{
namespace
{

using test::PipeTransport;
using test::SingleSwitch;

CollectiveRequest
AllReduce(uint64_t bytes, std::vector<uint32_t> ranks, const std::string& algo = "ring")
{
    CollectiveRequest r;
    r.kind = CollectiveKind::kAllReduce;
    r.bytes = bytes;
    r.ranks = std::move(ranks);
    r.algorithm = algo;
    return r;
}

TEST(CollectiveApi, RunsOnARankGroupAndReportsEveryRank)
{
    PipeTransport t(8, 0.01, 1000);
    ScheduleCollectives api(t);
    std::vector<uint32_t> done;
    int finished = 0;
    api.Start(
        AllReduce(1 << 20, {1, 3, 5, 7}),
        [&](uint32_t i) { done.push_back(i); },
        [&]() { finished++; });
    t.Run();
    std::sort(done.begin(), done.end());
    EXPECT_EQ(done, (std::vector<uint32_t>{0, 1, 2, 3}));
    EXPECT_EQ(finished, 1);
    EXPECT_EQ(api.Running(), 0u);
    ASSERT_FALSE(t.m_sent.empty());
    for (const auto& m : t.m_sent)
    {
        EXPECT_EQ(m.src % 2, 1u);
        EXPECT_EQ(m.dst % 2, 1u);
    }
}

TEST(CollectiveApi, AutoPicksLatencyAlgorithmsForSmallAndRingForLargeSizes)
{
    PipeTransport t(16, 1.0, 0);
    ScheduleCollectives api(t);
    EXPECT_EQ(api.ChooseAlgorithm(CollectiveKind::kAllReduce, 1024, 8), "tree");
    EXPECT_EQ(api.ChooseAlgorithm(CollectiveKind::kAllReduce, 1 << 30, 8), "ring");
    EXPECT_EQ(api.ChooseAlgorithm(CollectiveKind::kAllToAll, 1 << 30, 8), "direct");
    CollectiveOptions o;
    o.m_localSize = 4;
    ScheduleCollectives hier(t, {}, o);
    EXPECT_EQ(hier.ChooseAlgorithm(CollectiveKind::kAllReduce, 1 << 30, 16), "hierarchical");
    EXPECT_EQ(hier.ChooseAlgorithm(CollectiveKind::kAllReduce, 1 << 30, 4), "ring"); // one domain
}

/// Time of one all-reduce of \p bytes on an idle 8-rank switch at 177.6 Gb/s (a PCIe-class
/// link), by \p algo, with or without a probe for "auto".
int64_t
AllReducePs(uint64_t bytes, const std::string& algo, bool probe, std::string* chosen = nullptr)
{
    const Topology topo = SingleSwitch(8, "177.6Gbps");
    AnalyticalTransport t(topo);
    CollectiveOptions o;
    if (probe)
    {
        o.m_probe = [topo]()
        {
            return std::make_unique<AnalyticalTransport>(topo);
        };
    }
    ScheduleCollectives api(t, {}, o);
    int64_t end = -1;
    api.Start(AllReduce(bytes, {0, 1, 2, 3, 4, 5, 6, 7}, algo), {}, [&]() { end = t.NowPs(); });
    t.Run();
    if (chosen)
    {
        *chosen = FastestAlgorithm(
            CollectiveKind::kAllReduce, bytes, {0, 1, 2, 3, 4, 5, 6, 7}, {}, o, {});
    }
    return end;
}

TEST(CollectiveApi, AutoWithAProbeTakesTheFastestCandidateSoTimeNeverFallsWithSize)
{
    // The fixed rule takes the tree up to 256 KiB: on this link it is slower there than the
    // ring, and a 512 KiB call (ring) finishes sooner than a 256 KiB one.
    EXPECT_GT(AllReducePs(256 << 10, "auto", false), AllReducePs(512 << 10, "auto", false));
    int64_t previous = 0;
    for (uint64_t bytes = 1 << 10; bytes <= (uint64_t(16) << 20); bytes *= 2)
    {
        std::string chosen;
        const int64_t tuned = AllReducePs(bytes, "auto", true, &chosen);
        int64_t fastest = -1;
        for (const std::string& a : {"ring", "tree"})
        {
            const int64_t ps = AllReducePs(bytes, a, false);
            fastest = fastest < 0 ? ps : std::min(fastest, ps);
        }
        // The probe is the same model on the same idle fabric: exactly the fastest.
        EXPECT_EQ(tuned, fastest) << bytes << " bytes, took " << chosen;
        EXPECT_EQ(AllReducePs(bytes, chosen, false), tuned) << bytes;
        EXPECT_GE(tuned, previous) << bytes << " bytes finish before half of them";
        previous = tuned;
    }
    // NCCL's all-reduce algorithms only: recursive doubling would undercut its small-size
    // latency.
    EXPECT_EQ(AutoCandidates(CollectiveKind::kAllReduce, 1 << 30, 8, {}),
              (std::vector<std::string>{"ring", "tree"}));
    EXPECT_EQ(AutoCandidates(CollectiveKind::kAllReduce, 1024, 8, {}),
              (std::vector<std::string>{"tree", "ring"}));
    EXPECT_EQ(AutoCandidates(CollectiveKind::kAllGather, 1024, 8, {}),
              (std::vector<std::string>{"rd", "ring"}));
}

TEST(CollectiveApi, AUserScheduleStillServesAutoWhenAProbeIsSet)
{
    const Topology topo = SingleSwitch(4);
    AnalyticalTransport t(topo);
    CollectiveOptions o;
    int probes = 0;
    o.m_probe = [topo, &probes]()
    {
        probes++;
        return std::make_unique<AnalyticalTransport>(topo);
    };
    ScheduleCollectives api(t, {}, o);
    api.UseSchedule(test::RingAllReduce(4));
    int finished = 0;
    api.Start(AllReduce(1 << 20, {0, 1, 2, 3}, "auto"), {}, [&]() { finished++; });
    t.Run();
    EXPECT_EQ(finished, 1);
    EXPECT_EQ(probes, 0); // nothing to choose: the registered schedule runs
    // Without one, the first auto call makes the probe, later calls reuse it.
    ScheduleCollectives plain(t, {}, o);
    plain.Start(AllReduce(1 << 10, {0, 1, 2, 3}, "auto"), {}, {});
    plain.Start(AllReduce(1 << 20, {0, 1, 2, 3}, "auto"), {}, {});
    plain.Start(AllReduce(1 << 20, {0, 1, 2, 3}, "auto"), {}, {});
    t.Run();
    EXPECT_EQ(probes, 1);
    EXPECT_EQ(plain.Running(), 0u);
}

TEST(CollectiveApi, DisjointGroupsRunInParallelAndOneGroupSerialises)
{
    const uint64_t S = 64ull << 20;
    auto timeOf = [&](const std::vector<std::vector<uint32_t>>& groups)
    {
        AnalyticalTransport t(SingleSwitch(8));
        ScheduleCollectives api(t);
        int64_t end = 0;
        for (const auto& g : groups)
        {
            api.Start(AllReduce(S, g), {}, [&]() { end = std::max(end, t.NowPs()); });
        }
        t.Run();
        EXPECT_EQ(api.Running(), 0u);
        return double(end);
    };
    const double one = timeOf({{0, 1, 2, 3}});
    EXPECT_NEAR(timeOf({{0, 1, 2, 3}, {4, 5, 6, 7}}), one, one * 0.01);
    EXPECT_NEAR(timeOf({{0, 1, 2, 3}, {0, 1, 2, 3}}), 2 * one, one * 0.05);
}

TEST(CollectiveApi, UserScheduleReplacesTheGeneratedOne)
{
    PipeTransport t(4, 1.0, 0);
    ScheduleCollectives api(t);
    api.UseSchedule(test::RingAllReduce(4));
    int finished = 0;
    api.Start(AllReduce(1 << 20, {0, 1, 2, 3}, "test_ring_allreduce"), {}, [&]() { finished++; });
    t.Run();
    EXPECT_EQ(finished, 1);
    EXPECT_EQ(t.m_sent.size(), 4u * 6); // 6 sends per rank, one 256 KiB slice each
}

TEST(CollectiveApi, StuckCollectiveIsReportedNotHung)
{
    Schedule s = Schedule::Create(CollectiveKind::kAllReduce, 2, 2, true);
    s.m_name = "stuck";
    for (int r = 0; r < 2; ++r)
    {
        Threadblock& tb = s.Rank(r).AddThreadblock(1 - r, 1 - r, 0);
        tb.AddStep(StepOp::kRecv, BufferKind::kInput, 0, BufferKind::kInput, 0, 1);
    }
    PipeTransport t(2, 1.0, 0);
    ScheduleCollectives api(t);
    api.UseSchedule(s);
    bool done = false;
    api.Start(AllReduce(1000, {0, 1}, "auto"), {}, [&]() { done = true; });
    t.Run();
    EXPECT_FALSE(done);
    auto reports = api.StuckReports();
    ASSERT_EQ(reports.size(), 1u);
    EXPECT_NE(reports[0].find("2 of 2 ranks stuck"), std::string::npos) << reports[0];
}

TEST(CollectiveApi, AllToAllVMovesEachPairsBytes)
{
    AnalyticalTransport t(SingleSwitch(3));
    ScheduleCollectives api(t);
    CollectiveRequest r;
    r.kind = CollectiveKind::kAllToAll;
    r.ranks = {0, 1, 2};
    r.alltoallBytes = {{0, 4000000, 0}, {0, 0, 0}, {0, 4000000, 0}};
    std::vector<int64_t> doneAt(3, -1);
    api.Start(r, [&](uint32_t i) { doneAt[i] = t.NowPs(); }, {});
    t.Run();
    // Ranks 0 and 2 expect nothing; rank 1 receives 8 MB through one 100G downlink.
    EXPECT_EQ(doneAt[0], ExecutorConfig{}.m_launchLatencyPs);
    EXPECT_EQ(doneAt[2], doneAt[0]);
    // (The ACKs of that traffic leave on rank 1's uplink, which carries nothing else.)
    const double wire = 2.0 * double(t.WireBytes(4000000));
    EXPECT_NEAR(
        double(doneAt[1]) * 1e-12, double(doneAt[0]) * 1e-12 + wire / 12.5e9, 0.02 * wire / 12.5e9);
}

/// Ranks 0 and 2 each send rank 1 4 MB on own kernels of a 3 us launch and \p minPs bound.
CollectiveRequest
OwnKernelsIntoRankOne(int64_t minPs)
{
    CollectiveRequest r;
    r.kind = CollectiveKind::kAllToAll;
    r.ranks = {0, 1, 2};
    r.alltoallBytes = {{0, 4000000, 0}, {0, 0, 0}, {0, 4000000, 0}};
    r.kernelLaunchPs = 3000000;
    r.kernelMinPs = minPs;
    return r;
}

TEST(CollectiveApi, OwnKernelsReplaceTheLaunchAndBoundEveryRank)
{
    // DeepEP-style kernels: a 3 us fixed cost instead of the executor's launch latency, and
    // no rank done before 50 us (their SM-bound copying), whichever ends later.
    AnalyticalTransport t(SingleSwitch(3));
    ScheduleCollectives api(t);
    CollectiveRequest r = OwnKernelsIntoRankOne(50000000);
    std::vector<int64_t> doneAt(3, -1);
    int finished = 0;
    api.Start(
        r, [&](uint32_t i) { doneAt[i] = t.NowPs(); }, [&]() { finished++; });
    t.Run();
    EXPECT_EQ(finished, 1);
    // Ranks 0 and 2 receive nothing: the bound alone, not the launch, ends them.
    EXPECT_EQ(doneAt[0], 50000000);
    EXPECT_EQ(doneAt[2], 50000000);
    // Rank 1's 8 MB take 2 x 320 us through its 100G downlink after the 3 us launch: the fabric,
    // not the bound, ends it.
    const double wire = 2.0 * double(t.WireBytes(4000000));
    EXPECT_NEAR(double(doneAt[1]) * 1e-12, 3e-6 + wire / 12.5e9, 0.02 * wire / 12.5e9);
    EXPECT_EQ(api.Running(), 0u);

    // A bound past the transfers holds every rank to it.
    r.kernelMinPs = 2000000000; // 2 ms
    std::fill(doneAt.begin(), doneAt.end(), -1);
    const int64_t t0 = t.NowPs();
    api.Start(
        r, [&](uint32_t i) { doneAt[i] = t.NowPs() - t0; }, [&]() { finished++; });
    t.Run();
    EXPECT_EQ(finished, 2);
    EXPECT_EQ(doneAt, (std::vector<int64_t>{2000000000, 2000000000, 2000000000}));

    // Only an all-to-all(v) runs on own kernels.
    CollectiveRequest ar = AllReduce(1000, {0, 1});
    ar.kernelMinPs = 1;
    EXPECT_THROW(api.Start(ar, {}, {}), fabricsim::InputError);
    r.kernelMinPs = -5;
    EXPECT_THROW(api.Start(r, {}, {}), fabricsim::InputError);
    r.kernelMinPs = 0;
    r.kernelFillPs = -1;
    EXPECT_THROW(api.Start(r, {}, {}), fabricsim::InputError);
    ar.kernelMinPs = 0;
    ar.kernelFillPs = 1;
    EXPECT_THROW(api.Start(ar, {}, {}), fabricsim::InputError);
}

TEST(CollectiveApi, OwnKernelsPipelineTheirCopyingWithTheWireOnlyPastAFill)
{
    // Rank 1 receives 8 MB over its 100G downlink (about 640 us from the 3 us launch); the
    // kernels' own work is 203 us (min 206 us less the launch). Past the pipeline's depth the
    // shorter of the two adds itself, up to the fill.
    auto rank1DoneUs = [](int64_t minPs, int64_t fillPs, std::vector<int64_t>* all = nullptr)
    {
        AnalyticalTransport t(SingleSwitch(3));
        ScheduleCollectives api(t);
        CollectiveRequest r = OwnKernelsIntoRankOne(minPs);
        r.kernelFillPs = fillPs;
        std::vector<int64_t> doneAt(3, -1);
        int64_t finished = -1;
        api.Start(
            r, [&](uint32_t i) { doneAt[i] = t.NowPs(); }, [&]() { finished = t.NowPs(); });
        t.Run();
        EXPECT_EQ(finished, *std::max_element(doneAt.begin(), doneAt.end()));
        if (all)
        {
            *all = doneAt;
        }
        return double(doneAt[1]) * 1e-6;
    };
    const double overlapped = rank1DoneUs(206000000, 0);
    // A fill of 50 us: the copying (203 us) is longer, so the fill adds itself whole.
    EXPECT_NEAR(rank1DoneUs(206000000, 50000000), overlapped + 50, 1e-6);
    // A fill past the copying: the copying adds itself (203 us).
    EXPECT_NEAR(rank1DoneUs(206000000, 900000000), overlapped + 203, 1e-6);
    // Bound by the kernels (1 ms, past the wire): the wire's delivery adds itself, up to the fill.
    std::vector<int64_t> doneAt;
    const double wireUs = overlapped - 3;
    EXPECT_NEAR(rank1DoneUs(1000000000, 900000000, &doneAt), 1000 + wireUs, 1e-3);
    // Ranks that receive nothing have no delivery to add.
    EXPECT_EQ(doneAt[0], 1000000000);
    EXPECT_EQ(doneAt[2], 1000000000);
    // No fill: full overlap, as before.
    EXPECT_NEAR(rank1DoneUs(1000000000, 0), 1000, 1e-6);
}

TEST(CollectiveApi, SendRecvTakesLaunchPlusTransferTime)
{
    AnalyticalTransport t(SingleSwitch(2));
    ExecutorConfig c;
    ScheduleCollectives api(t, c);
    int64_t at = -1;
    api.SendRecv(0, 1, 100000, [&]() { at = t.NowPs(); });
    t.Run();
    EXPECT_EQ(at, c.m_launchLatencyPs + t.IdealPs(0, 1, 100000));
}

TEST(CollectiveApi, BadRequestsAreInputErrors)
{
    PipeTransport t(4, 1.0, 0);
    ScheduleCollectives api(t);
    EXPECT_THROW(api.Start(AllReduce(1000, {}), {}, {}), fabricsim::InputError);
    EXPECT_THROW(api.Start(AllReduce(1000, {0, 0}), {}, {}), fabricsim::InputError);
    EXPECT_THROW(api.Start(AllReduce(1000, {0, 9}), {}, {}), fabricsim::InputError);
    EXPECT_THROW(api.Start(AllReduce(1000, {0, 1}, "nosuch"), {}, {}), fabricsim::InputError);
    CollectiveRequest bad = AllReduce(1000, {0, 1, 2});
    bad.kind = CollectiveKind::kAllToAll;
    bad.alltoallBytes = {{0, 1}, {1, 0}};
    EXPECT_THROW(api.Start(bad, {}, {}), fabricsim::InputError);
}

} // namespace
} // namespace fabricsim
