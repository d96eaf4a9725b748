// The one model of what an EP exchange puts on the wire, per backend, against closed forms
// (issue 26): copies per destination under uniform and skewed routing, bytes per copy, and the
// step communication the serving loop builds from them.
#include "draws.h"
#include "ep-exchange.h"
#include "model-spec.h"
#include "roofline.h"
#include "routing-model.h"
#include "step-comm.h"
#include "unit-conversions.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace fabricsim
{
namespace
{

/// 1 - C(E - E/n, k) / C(E, k): a token reaches a given rank in DeepEP's normal mode.
double
ReachesRank(uint32_t experts, uint32_t ranks, uint32_t topk)
{
    return 1 - AllMiss(experts, double(experts) / ranks, topk);
}

/// DP \p ep x EP \p ep with DP attention on \p backend.
ParallelismSpec
EpLayout(uint32_t ep, EpBackend backend)
{
    ParallelismSpec par;
    par.dp = ep;
    par.ep = ep;
    par.dpAttention = true;
    par.epBackend = backend;
    return par;
}

/// The server of each of 16 EP ranks: two servers of 8.
std::vector<uint32_t>
TwoServersOfEight()
{
    std::vector<uint32_t> nodes(16);
    for (uint32_t i = 0; i < 16; ++i)
    {
        nodes[i] = i / 8;
    }
    return nodes;
}

/// The call labelled \p label (default-constructed if none) of rank 0's step of \p batch.
CollectiveCall
CallLabelled(const StepComm& comm, const Roofline& r, const StepBatch& batch, const char* label)
{
    for (const CollectiveCall& c : comm.Collectives(batch, r.StepOps(batch), RankPosition{}))
    {
        if (c.label == label)
        {
            return c;
        }
    }
    return CollectiveCall{};
}

/// The call labelled \p label (default-constructed if none) of a step of \p batch per rank of
/// \p model at EP 8 with DP attention on H100, with \p backend and \p epSms; the GPU's SMs as
/// \p gpuSms tells StepComm (0: unknown).
CollectiveCall
EpCallOf(const char* model,
         const StepBatch& batch,
         EpBackend backend,
         const char* label,
         uint32_t epSms = 20,
         uint32_t gpuSms = 0)
{
    const ModelSpec m = ModelSpec::Preset(model);
    ParallelismSpec par = EpLayout(8, backend);
    par.epSms = epSms;
    const Roofline r(m, HardwareSpec::Preset("H100"), par);
    StepComm comm(m, par);
    comm.SetGpuSms(gpuSms);
    return CallLabelled(comm, r, batch, label);
}

/// A call's work (ep-exchange.h EpKernelWork) in one line.
EpKernelWork
Work(double copies,
     double bytesPerCopy,
     uint32_t smBudget,
     double tokens = 0,
     uint32_t experts = 0,
     uint32_t gpuSms = 0,
     double copiesPerToken = 0)
{
    EpKernelWork w;
    w.copies = copies;
    w.bytesPerCopy = bytesPerCopy;
    w.smBudget = smBudget;
    w.tokens = tokens;
    w.experts = experts;
    w.gpuSms = gpuSms;
    w.copiesPerToken = copiesPerToken;
    return w;
}

TEST(EpExchange, CopiesPerDestinationClosedForms)
{
    // DeepSeek-V3's routing: 256 experts, top-8, over EP 64.
    const auto pi = RoutingModel::Uniform().SelectionProbabilities(256, 8);
    const auto perExpert = EpCopiesPerDestination(pi, 64, 8, false);
    const auto perRank = EpCopiesPerDestination(pi, 64, 8, true);
    ASSERT_EQ(perExpert.size(), 64u);
    for (uint32_t r = 0; r < 64; ++r)
    {
        EXPECT_NEAR(perExpert[r], 8.0 / 64, 1e-12);
        EXPECT_NEAR(perRank[r], ReachesRank(256, 64, 8), 1e-12);
    }
    // EP 8 over 256 experts (32 per rank): de-duplication saves about a quarter of the copies.
    const double dedup = ReachesRank(256, 8, 8) * 8;
    const auto ep8 = EpCopiesPerDestination(pi, 8, 8, true);
    EXPECT_NEAR(std::accumulate(ep8.begin(), ep8.end(), 0.0), dedup, 1e-9);
    EXPECT_NEAR(dedup, 5.30, 0.01); // of 8 copies
    // One rank holding every expert receives each token once.
    EXPECT_NEAR(EpCopiesPerDestination(pi, 1, 8, true)[0], 1.0, 1e-12);
    // Skewed routing: per-expert copies still sum to k; per-rank ones never exceed 1 and are
    // fewer where a rank's experts are hot (its copies coincide).
    const auto zipf = RoutingModel::Zipf(1.0, 3).SelectionProbabilities(256, 8);
    const auto skewExpert = EpCopiesPerDestination(zipf, 64, 8, false);
    const auto skewRank = EpCopiesPerDestination(zipf, 64, 8, true);
    EXPECT_NEAR(std::accumulate(skewExpert.begin(), skewExpert.end(), 0.0), 8.0, 1e-9);
    for (uint32_t r = 0; r < 64; ++r)
    {
        EXPECT_LE(skewRank[r], 1.0);
        EXPECT_LE(skewRank[r], skewExpert[r] + 1e-12);
    }
}

TEST(EpExchange, BytesPerCopyPerBackend)
{
    // Hidden 7168: bf16 14336 B; DeepEP fp8 7168 B plus 56 float32 scales = 7392 B.
    EXPECT_DOUBLE_EQ(Fp8ScaledTokenBytes(7168), 7392);
    const EpTokenWire a2a = EpWireOf(EpBackend::AllToAll, 7168, 2);
    EXPECT_DOUBLE_EQ(a2a.dispatchBytes, 14336);
    EXPECT_DOUBLE_EQ(a2a.combineBytes, 14336);
    EXPECT_FALSE(a2a.perRank);
    const EpTokenWire normal = EpWireOf(EpBackend::DeepEpNormal, 7168, 2);
    EXPECT_DOUBLE_EQ(normal.dispatchBytes, 7392);
    EXPECT_DOUBLE_EQ(normal.combineBytes, 14336);
    EXPECT_TRUE(normal.perRank);
    const EpTokenWire ll = EpWireOf(EpBackend::DeepEpLowLatency, 7168, 2);
    EXPECT_DOUBLE_EQ(ll.dispatchBytes, 7392);
    EXPECT_FALSE(ll.perRank);
    // The all-to-all follows the activations' dtype (fp8 activations: 1 B per element).
    EXPECT_DOUBLE_EQ(EpWireOf(EpBackend::AllToAll, 7168, 1).dispatchBytes, 7168);
}

TEST(EpExchange, StepCommunicationPerBackendMatchesTheClosedForm)
{
    // Qwen3-30B-A3B (hidden 2048, 128 experts, top-8), EP 8 with DP attention, a decode batch
    // of 64 per rank: the dispatch all-to-all's bytes to the 7 other ranks.
    const StepBatch batch = StepBatch::Decode(64, 1024);
    auto bytesOf = [&](EpBackend b, const char* label)
    {
        return EpCallOf("Qwen3-30B-A3B", batch, b, label).bytes;
    };
    const double h = 2048;
    EXPECT_NEAR(bytesOf(EpBackend::AllToAll, "moe_dispatch"), 64 * 8.0 / 8 * 7 * h * 2, 1e-6);
    EXPECT_NEAR(bytesOf(EpBackend::DeepEpLowLatency, "moe_dispatch"),
                64 * 8.0 / 8 * 7 * Fp8ScaledTokenBytes(2048),
                1e-6);
    EXPECT_NEAR(bytesOf(EpBackend::DeepEpNormal, "moe_dispatch"),
                64 * ReachesRank(128, 8, 8) * 7 * Fp8ScaledTokenBytes(2048),
                1e-6);
    EXPECT_NEAR(bytesOf(EpBackend::DeepEpNormal, "moe_combine"),
                64 * ReachesRank(128, 8, 8) * 7 * h * 2,
                1e-6);
    EXPECT_NEAR(bytesOf(EpBackend::AllToAll, "moe_combine"), 64 * 8.0 / 8 * 7 * h * 2, 1e-6);
}

TEST(EpExchange, KernelCostsAreDeepEpsAloneAndScaleWithTheSmBudget)
{
    // NCCL's backends run no kernels of their own.
    EXPECT_FALSE(EpKernelCostOf(EpBackend::AllToAll, true));
    EXPECT_FALSE(EpKernelCostOf(EpBackend::AllGatherReduceScatter, false));
    const EpKernelCost d = *EpKernelCostOf(EpBackend::DeepEpNormal, true);
    EXPECT_TRUE(d.smBudget);
    // No copies: the fixed cost alone.
    EXPECT_EQ(EpKernelMinPs(d, Work(0, 0, 20)), int64_t(std::llround(d.fixedUs * 1e6)));
    // 4096 tokens of hidden 7168 to each of 7 peers, fp8: the copying over 20 SMs, closed form;
    // twice the SMs halve it.
    const double copies = 7 * 4096.0;
    const double b = Fp8ScaledTokenBytes(7168);
    const double own = copies * (d.perCopyNs * 1e-9 + b / d.bytesPerSecond);
    EXPECT_NEAR(
        double(EpKernelMinPs(d, Work(copies, b, 20))) * 1e-12, d.fixedUs * 1e-6 + own / 20, 1e-12);
    EXPECT_NEAR(
        double(EpKernelMinPs(d, Work(copies, b, 40))) * 1e-12, d.fixedUs * 1e-6 + own / 40, 1e-12);
    // Every one of the rank's tokens is read and routed too, on the same SMs.
    EXPECT_GT(d.tokenUs, 0);
    EXPECT_NEAR(double(EpKernelMinPs(d, Work(copies, b, 20, 4096))) * 1e-12,
                d.fixedUs * 1e-6 + (own + 4096 * d.tokenUs * 1e-6) / 20,
                1e-12);
    // The combine reduces each token's expert outputs: its bf16 bytes at the token rate. Its
    // start-up grows with one token: the copies it gathers (5.3: top-8 of 256 over 8 ranks,
    // its own included) and its result, whatever the SMs.
    const EpKernelCost c = *EpKernelCostOf(EpBackend::DeepEpNormal, false);
    ASSERT_GT(c.tokenBytesPerSecond, 0);
    ASSERT_GT(c.startCopyBytesPerSecond, 0);
    ASSERT_GT(c.startBytesPerSecond, 0);
    const double cb = 2 * 7168.0;
    const double startUp
        = c.fixedUs * 1e-6 + cb * 5.3 / c.startCopyBytesPerSecond + cb / c.startBytesPerSecond;
    EXPECT_NEAR(double(EpKernelMinPs(c, Work(0, cb, 20, 0, 0, 0, 5.3))) * 1e-12, startUp, 1e-12);
    EXPECT_NEAR(double(EpKernelMinPs(c, Work(copies, cb, 20, 4096, 0, 0, 5.3))) * 1e-12,
                startUp
                    + (copies * (c.perCopyNs * 1e-9 + cb / c.bytesPerSecond)
                       + 4096 * cb / c.tokenBytesPerSecond)
                          / 20,
                1e-12);
    // The dispatch has none.
    EXPECT_EQ(EpKernelMinPs(d, Work(0, b, 20, 0, 0, 0, 5.3)), EpKernelMinPs(d, Work(0, 0, 20)));
    // Low latency runs on every SM: the budget does not apply.
    const EpKernelCost ll = *EpKernelCostOf(EpBackend::DeepEpLowLatency, false);
    EXPECT_FALSE(ll.smBudget);
    EXPECT_EQ(EpKernelMinPs(ll, Work(1000, 14336, 4)), EpKernelMinPs(ll, Work(1000, 14336, 132)));
    // Past the ps clock: an error, not a wrapped time.
    EXPECT_THROW(EpKernelMinPs(d, Work(1e30, b, 1)), UnitOverflow);
    EXPECT_THROW(EpKernelFillPs(c, Work(0, 1e30, 1, 0, 0, 0, 5.3)), UnitOverflow);
    // A gigabyte token: its fill is a quarter second at 4.16 GB/s, a time, not a wrap.
    EXPECT_NEAR(double(EpKernelFillPs(c, Work(0, 1e9, 1, 0, 0, 0, 1))) * 1e-12,
                1e9 / c.fillBytesPerSecond,
                1e-9);
}

// The start-up and fill are empirical, fitted on tokens reaching at most 5.34 copies (top-8 of
// 128 over 8 ranks): a wider fan-out (top-22 of 512, 7.6 copies; or relays across servers)
// counts as 5.34 (rounded up) in them, and the wire and the copying still carry every copy.
TEST(EpExchange, NormalKernelsCountATokensCopiesUpToTheFitRowsWidestFanOut)
{
    for (bool dispatch : {true, false})
    {
        const EpKernelCost k = *EpKernelCostOf(EpBackend::DeepEpNormal, dispatch);
        ASSERT_NEAR(k.copiesPerTokenCap,
                    8
                        * (1
                           - std::exp(std::lgamma(113.0) - std::lgamma(105.0) - std::lgamma(129.0)
                                      + std::lgamma(121.0))),
                    1e-4);
        const double b = dispatch ? Fp8ScaledTokenBytes(4096) : 2 * 4096.0;
        for (double g : {1.0, 2.0, 5.3})
        {
            // Below the cap the fill is the closed form (a token's copies at the fill rate).
            EXPECT_NEAR(double(EpKernelFillPs(k, Work(0, b, 20, 0, 0, 0, g))) * 1e-12,
                        g * b / k.fillBytesPerSecond,
                        1e-12)
                << g;
        }
        const EpKernelWork atCap = Work(100, b, 20, 32, 0, 0, k.copiesPerTokenCap);
        for (double g : {7.6, 16.0, 1e6})
        {
            const EpKernelWork wide = Work(100, b, 20, 32, 0, 0, g);
            EXPECT_EQ(EpKernelFillPs(k, wide), EpKernelFillPs(k, atCap)) << g;
            EXPECT_EQ(EpKernelMinPs(k, wide), EpKernelMinPs(k, atCap)) << g;
        }
        // The combine's start-up grows up to the cap and no further.
        if (!dispatch)
        {
            EXPECT_LT(EpKernelMinPs(k, Work(0, b, 20, 0, 0, 0, 2)),
                      EpKernelMinPs(k, Work(0, b, 20, 0, 0, 0, 5)));
            EXPECT_NEAR(double(EpKernelMinPs(k, Work(0, b, 20, 0, 0, 0, 7.6))) * 1e-12,
                        k.fixedUs * 1e-6 + b * k.copiesPerTokenCap / k.startCopyBytesPerSecond
                            + b / k.startBytesPerSecond,
                        1e-12);
        }
        // Without a cap every copy counts.
        EpKernelCost uncapped = k;
        uncapped.copiesPerTokenCap = 0;
        EXPECT_NEAR(double(EpKernelFillPs(uncapped, Work(0, b, 20, 0, 0, 0, 7.6))) * 1e-12,
                    7.6 * b / k.fillBytesPerSecond,
                    1e-12);
    }
}

// The low-latency combine's one warp group that reduces a token first reads its top-k copies:
// its start-up grows with them (up to 8, the fit rows' widest top-k); the dispatch has none.
TEST(EpExchange, LowLatencyCombineStartUpGrowsWithATokensTopK)
{
    const EpKernelCost c = *EpKernelCostOf(EpBackend::DeepEpLowLatency, false);
    const EpKernelCost d = *EpKernelCostOf(EpBackend::DeepEpLowLatency, true);
    ASSERT_GT(c.startCopyBytesPerSecond, 0);
    EXPECT_EQ(c.copiesPerTokenCap, 8);
    const double b = 2 * 7168.0;
    auto at = [&](const EpKernelCost& k, double topk)
    {
        return double(EpKernelMinPs(k, Work(0, b, 1, 0, 256, 132, topk))) * 1e-12;
    };
    // 256 experts on 132 SMs: two warp groups an SM.
    EXPECT_NEAR(at(c, 8),
                c.fixedUs * 1e-6 + 2 * c.fixedPerGroupUs * 1e-6 + 8 * b / c.startCopyBytesPerSecond,
                1e-12);
    EXPECT_NEAR(at(c, 8) - at(c, 1), 7 * b / c.startCopyBytesPerSecond, 1e-12);
    EXPECT_EQ(at(c, 10), at(c, 8));
    EXPECT_EQ(at(d, 8), at(d, 1));
}

// DeepEP's low-latency kernels launch one warp group per expert on as few SMs as hold them, and
// the dispatch casts and sends one token after another on each: with few experts, few SMs.
TEST(EpExchange, LowLatencyDispatchSendsATokenAtATimeOnItsSms)
{
    EXPECT_EQ(DeepEpLowLatencySms(8, 132), 8u);
    EXPECT_EQ(DeepEpLowLatencySms(128, 132), 128u);
    EXPECT_EQ(DeepEpLowLatencySms(132, 132), 132u);
    EXPECT_EQ(DeepEpLowLatencySms(160, 132), 80u);  // two groups an SM
    EXPECT_EQ(DeepEpLowLatencySms(256, 132), 128u); // two groups an SM
    EXPECT_EQ(DeepEpLowLatencySms(384, 132), 128u); // three
    EXPECT_EQ(DeepEpLowLatencySms(256, 0), 0u);     // GPU unknown
    const EpKernelCost d = *EpKernelCostOf(EpBackend::DeepEpLowLatency, true);
    EXPECT_GT(d.tokenUs, 0);
    EXPECT_GT(d.tokenBytesPerSecond, 0);
    // 1024 tokens of hidden 4096 to 8 experts at top-2 (8 SMs: 128 tokens each, each its fixed
    // part and its fp8 bytes): the per-SM sending, not the GPU's copy rate, sets the time.
    const double copies = 1024 * 2 * 7.0 / 8;
    const double b = Fp8ScaledTokenBytes(4096);
    const double gpuCopy = copies * (d.perCopyNs * 1e-9 + b / d.bytesPerSecond);
    const double perSm = 128 * (d.tokenUs * 1e-6 + b / d.tokenBytesPerSecond);
    ASSERT_GT(perSm, 5 * gpuCopy);
    // One warp group an SM: the fixed part and one group's.
    const double fixed = (d.fixedUs + d.fixedPerGroupUs) * 1e-6;
    EXPECT_NEAR(
        double(EpKernelMinPs(d, Work(copies, b, 1, 1024, 8, 132))) * 1e-12, fixed + perSm, 1e-12);
    // The GPU's SMs unknown: the copying alone.
    EXPECT_NEAR(
        double(EpKernelMinPs(d, Work(copies, b, 1, 1024, 8))) * 1e-12, fixed + gpuCopy, 1e-12);
    // Top-1 over 128 experts (128 SMs, 8 tokens each): one warp sends each token's one copy,
    // bound by its latency, and that adds to the GPU's copying (the larger of it and the casts).
    ASSERT_TRUE(d.warpCopiesSerial);
    const double copies1 = 1024 * 7.0 / 8;
    const double b1 = Fp8ScaledTokenBytes(5120);
    const double copy1 = copies1 * (d.perCopyNs * 1e-9 + b1 / d.bytesPerSecond);
    const double warp1 = 8 * b1 / d.tokenBytesPerSecond;
    ASSERT_GT(copy1, 8 * d.tokenUs * 1e-6);
    EXPECT_NEAR(double(EpKernelMinPs(d, Work(copies1, b1, 1, 1024, 128, 132))) * 1e-12,
                fixed + warp1 + copy1,
                1e-12);
    // The combine reduces a token at a time on each SM too: its bf16 bytes, no fixed part.
    const EpKernelCost c = *EpKernelCostOf(EpBackend::DeepEpLowLatency, false);
    EXPECT_EQ(c.tokenUs, 0);
    ASSERT_GT(c.tokenBytesPerSecond, 0);
    const double cb = 2 * 4096.0;
    const double cGpu = copies * (c.perCopyNs * 1e-9 + cb / c.bytesPerSecond);
    const double cSm = 128 * cb / c.tokenBytesPerSecond;
    ASSERT_GT(cSm, cGpu);
    EXPECT_NEAR(double(EpKernelMinPs(c, Work(copies, cb, 1, 1024, 8, 132))) * 1e-12,
                (c.fixedUs + c.fixedPerGroupUs) * 1e-6 + cSm,
                1e-12);
}

// The low-latency dispatch's copying is the NVLink's (fitted at 302.8 GB/s on H200's 450):
// it scales with a GPU's scale-up bandwidth and counts only the copies inside the server (the
// NIC reads the others); the combine's rate is the GPU's own, whatever the links.
TEST(EpExchange, LowLatencyDispatchCopiesAtAShareOfTheGpusLinks)
{
    const EpKernelCost d = *EpKernelCostOf(EpBackend::DeepEpLowLatency, true);
    ASSERT_GT(d.scaleUpShare, 0);
    EXPECT_NEAR(d.scaleUpShare * 450e9, d.bytesPerSecond, 1e-4 * d.bytesPerSecond);
    // 128 tokens of hidden 7168 at top-8 over 128 experts (one a rank, 128 SMs: one token
    // each), 7/8 of the copies leaving the rank: the copying sets the time.
    const double b = Fp8ScaledTokenBytes(7168);
    const double copies = 128 * 8 * 7.0 / 8;
    auto us = [&](const EpKernelCost& k, double scaleUp, double inServer)
    {
        EpKernelWork w = Work(copies, b, 1, 128, 128, 132);
        w.scaleUpBytesPerSecond = scaleUp;
        w.scaleUpCopies = inServer;
        return double(EpKernelMinPs(k, w)) * 1e-6;
    };
    const double fixedUs = d.fixedUs + d.fixedPerGroupUs + b / d.tokenBytesPerSecond * 1e6;
    auto copyingUs = [&](double rate, double linkCopies)
    {
        return (copies * d.perCopyNs * 1e-9 + linkCopies * b / rate) * 1e6;
    };
    ASSERT_GT(copyingUs(d.bytesPerSecond, copies), d.tokenUs);
    // H200's links: the fitted rate; H800's 200 GB/s: 0.6729 of it, 2.25 times the time.
    EXPECT_NEAR(us(d, 450e9, -1), fixedUs + copyingUs(d.scaleUpShare * 450e9, copies), 1e-6);
    EXPECT_NEAR(us(d, 200e9, -1), fixedUs + copyingUs(d.scaleUpShare * 200e9, copies), 1e-6);
    EXPECT_NEAR(copyingUs(d.scaleUpShare * 200e9, copies),
                (copies * d.perCopyNs * 1e-9 + 7 * 128 * b / 134.58e9) * 1e6,
                0.01);
    // Half the copies inside the server: half the bytes on the links, every copy's bookkeeping.
    EXPECT_NEAR(
        us(d, 200e9, copies / 2), fixedUs + copyingUs(d.scaleUpShare * 200e9, copies / 2), 1e-6);
    EXPECT_LT(us(d, 200e9, copies / 2), us(d, 200e9, copies));
    // The GPU unknown: the fitted rate on every copy.
    EXPECT_NEAR(us(d, 0, copies / 2), fixedUs + copyingUs(d.bytesPerSecond, copies), 1e-6);
    // The combine: its own rate on every copy, links or not.
    const EpKernelCost c = *EpKernelCostOf(EpBackend::DeepEpLowLatency, false);
    EXPECT_EQ(c.scaleUpShare, 0);
    EXPECT_EQ(us(c, 200e9, copies / 2), us(c, 0, -1));
    // The normal kernels' copying is their SMs': no share either.
    EXPECT_EQ(EpKernelCostOf(EpBackend::DeepEpNormal, true)->scaleUpShare, 0);
}

// In a step: the GPU's scale-up bandwidth (hardware scale_up_bw) and the EP ranks' servers
// reach the low-latency dispatch's copying. EP 16 over two servers of H800 (200 GB/s of
// NVLink), DeepSeek-V3 (256 experts, top-8), 32 decode tokens a rank: a rank sends each other
// rank 32 x 8 / 16 copies, 7 of those ranks in its server.
TEST(EpExchange, StepCommunicationCopiesInsideTheServerAtTheGpusLinks)
{
    const ModelSpec m = ModelSpec::Preset("DeepSeek-V3");
    const ParallelismSpec par = EpLayout(16, EpBackend::DeepEpLowLatency);
    const HardwareSpec h800 = HardwareSpec::Preset("H800");
    ASSERT_EQ(h800.scaleUpBwBytesPerSec, 200e9);
    const Roofline r(m, h800, par);
    const StepBatch batch = StepBatch::Decode(32, 1024);
    auto dispatchPs = [&](double scaleUp, bool twoServers)
    {
        StepComm comm(m, par);
        comm.SetGpuSms(h800.sms);
        comm.SetGpuScaleUp(scaleUp);
        if (twoServers)
        {
            comm.SetEpNodes(TwoServersOfEight());
        }
        return CallLabelled(comm, r, batch, "moe_dispatch").kernelMinPs;
    };
    const EpKernelCost k = *EpKernelCostOf(EpBackend::DeepEpLowLatency, true);
    EpKernelWork w = Work(15 * 32 * 8 / 16.0, Fp8ScaledTokenBytes(7168), par.epSms, 32, 256, 132);
    const int64_t fitted = EpKernelMinPs(k, w);
    w.scaleUpBytesPerSecond = 200e9;
    const int64_t allOnLinks = EpKernelMinPs(k, w);
    w.scaleUpCopies = 7 * 32 * 8 / 16.0;
    const int64_t insideOnly = EpKernelMinPs(k, w);
    EXPECT_EQ(dispatchPs(0, true), fitted);
    EXPECT_EQ(dispatchPs(200e9, false), allOnLinks);
    EXPECT_EQ(dispatchPs(200e9, true), insideOnly);
    EXPECT_LT(insideOnly, allOnLinks);
    EXPECT_GT(allOnLinks, fitted);
}

// The more experts an SM holds, the fewer warps each gets: the low-latency kernels' fixed part
// grows by a warp group's cost for each (128 experts on 132 SMs: one; 256: two; 384: three).
TEST(EpExchange, LowLatencyFixedPartGrowsWithTheWarpGroupsAnSmHolds)
{
    for (bool dispatch : {true, false})
    {
        const EpKernelCost k = *EpKernelCostOf(EpBackend::DeepEpLowLatency, dispatch);
        EXPECT_GT(k.fixedPerGroupUs, 0);
        auto launchUs = [&](uint32_t experts)
        {
            return double(EpKernelMinPs(k, Work(0, 0, 1, 0, experts, 132))) * 1e-6;
        };
        EXPECT_NEAR(launchUs(128), k.fixedUs + k.fixedPerGroupUs, 1e-6);
        EXPECT_NEAR(launchUs(256), k.fixedUs + 2 * k.fixedPerGroupUs, 1e-6);
        EXPECT_NEAR(launchUs(384), k.fixedUs + 3 * k.fixedPerGroupUs, 1e-6);
    }
    // The normal kernels' fixed part does not depend on the experts.
    const EpKernelCost n = *EpKernelCostOf(EpBackend::DeepEpNormal, true);
    EXPECT_EQ(EpKernelMinPs(n, Work(0, 0, 20, 0, 384, 132)), EpKernelMinPs(n, Work(0, 0, 20)));
}

TEST(EpExchange, StepCommunicationCarriesDeepEpsKernelCosts)
{
    const StepBatch batch = StepBatch::Decode(64, 1024);
    auto callOf = [&](EpBackend b, const char* label)
    {
        return EpCallOf("Qwen3-30B-A3B", batch, b, label, 24);
    };
    const CollectiveCall a2a = callOf(EpBackend::AllToAll, "moe_dispatch");
    EXPECT_EQ(a2a.kernelLaunchPs, -1);
    EXPECT_EQ(a2a.kernelMinPs, 0);
    // Normal mode: the rank's 64 tokens reach each of the 7 other ranks with probability
    // ReachesRank, each copy fp8 with scales, on 24 SMs; the combine sends the same copies back
    // in bf16.
    const double copies = 64 * ReachesRank(128, 8, 8) * 7;
    const EpKernelCost kd = *EpKernelCostOf(EpBackend::DeepEpNormal, true);
    const CollectiveCall d = callOf(EpBackend::DeepEpNormal, "moe_dispatch");
    EXPECT_EQ(d.kernelLaunchPs, EpKernelMinPs(kd, Work(0, 0, 1)));
    EXPECT_EQ(d.kernelMinPs, EpKernelMinPs(kd, Work(copies, Fp8ScaledTokenBytes(2048), 24, 64)));
    const EpKernelCost kc = *EpKernelCostOf(EpBackend::DeepEpNormal, false);
    const CollectiveCall c = callOf(EpBackend::DeepEpNormal, "moe_combine");
    // A token gathers a copy from each of the 8 ranks (its own included) holding its experts:
    // the combine's start-up, known at launch.
    const double gathered = 8 * ReachesRank(128, 8, 8);
    EXPECT_NEAR(double(c.kernelLaunchPs),
                double(EpKernelMinPs(kc, Work(0, 2 * 2048.0, 1, 0, 0, 0, gathered))),
                1);
    EXPECT_NEAR(double(c.kernelMinPs),
                double(EpKernelMinPs(kc, Work(copies, 2 * 2048.0, 24, 64, 0, 0, gathered))),
                1);
    // Both pipeline their copying with the wire past a depth of one token's copies.
    ASSERT_GT(kd.fillBytesPerSecond, 0);
    EXPECT_NEAR(double(d.kernelFillPs),
                gathered * Fp8ScaledTokenBytes(2048) / kd.fillBytesPerSecond * 1e12,
                1);
    EXPECT_NEAR(double(c.kernelFillPs), gathered * 2 * 2048.0 / kc.fillBytesPerSecond * 1e12, 1);
    // NCCL's all-to-all and the low-latency kernels have none.
    EXPECT_EQ(a2a.kernelFillPs, 0);
    EXPECT_EQ(callOf(EpBackend::DeepEpLowLatency, "moe_dispatch").kernelFillPs, 0);
    EXPECT_GT(c.kernelMinPs, c.kernelLaunchPs);
}

// The normal kernels' start-up and fill go with one token's copies (its own and the relays, as
// the fit counts them), not with how the other ranks' batches compare with this one's: across
// two servers, a rank of 2 tokens among ranks of 40 starts its combine as in a balanced step.
TEST(EpExchange, NormalKernelsStartUpIsOneTokensWhateverTheBalance)
{
    const ModelSpec m = ModelSpec::Preset("DeepSeek-V3");
    const ParallelismSpec par = EpLayout(16, EpBackend::DeepEpNormal);
    const Roofline r(m, HardwareSpec::Preset("H100"), par);
    auto combineOf = [&](double others)
    {
        StepComm comm(m, par);
        comm.SetGpuSms(132);
        comm.SetEpNodes(TwoServersOfEight());
        std::vector<double> tokens(16, others);
        tokens[0] = 2;
        comm.SetEpTokens(tokens);
        return CallLabelled(comm, r, StepBatch::Decode(2, 1024), "moe_combine");
    };
    const CollectiveCall balanced = combineOf(2);
    const CollectiveCall skewed = combineOf(40);
    ASSERT_GT(balanced.kernelLaunchPs, 0);
    EXPECT_EQ(skewed.kernelLaunchPs, balanced.kernelLaunchPs);
    EXPECT_EQ(skewed.kernelFillPs, balanced.kernelFillPs);
    // It still sends back the outputs of the others' 40 tokens its experts hold.
    EXPECT_GT(skewed.bytes, 10 * balanced.bytes);
}

TEST(EpExchange, StepCommunicationSpreadsLowLatencyTokensOverTheKernelsSms)
{
    // Mixtral-8x7B (8 experts, top-2, hidden 4096) at EP 8 on H100 (132 SMs): the low-latency
    // dispatch runs on 8 SMs, so 512 decode tokens a rank are 64 per SM, which outlast the
    // copying; with the GPU's SMs unknown the term is left out.
    const StepBatch batch = StepBatch::Decode(512, 64);
    auto dispatchOf = [&](uint32_t sms)
    {
        return EpCallOf(
            "Mixtral-8x7B", batch, EpBackend::DeepEpLowLatency, "moe_dispatch", 20, sms);
    };
    const EpKernelCost k = *EpKernelCostOf(EpBackend::DeepEpLowLatency, true);
    const double copies = 512 * 2 * 7.0 / 8;
    const double b = Fp8ScaledTokenBytes(4096);
    EXPECT_EQ(dispatchOf(132).kernelMinPs, EpKernelMinPs(k, Work(copies, b, 20, 512, 8, 132)));
    EXPECT_EQ(dispatchOf(132).kernelMinPs,
              int64_t(std::llround((k.fixedUs + k.fixedPerGroupUs
                                    + 64 * (k.tokenUs + b / k.tokenBytesPerSecond * 1e6))
                                   * 1e6)));
    EXPECT_EQ(dispatchOf(0).kernelMinPs, EpKernelMinPs(k, Work(copies, b, 20, 512, 8)));
    EXPECT_GT(dispatchOf(132).kernelMinPs, 2 * dispatchOf(0).kernelMinPs);
}

TEST(EpExchange, DeepEpNormalCrossesEachNodeOnceAndForwardsInside)
{
    // EP 16 over 2 nodes of 8 (DeepSeek-V3: 256 experts, top-8), 100 tokens per rank: rank 3
    // sends a token once to node 1, to its rank of local index 3 (EP rank 11), and over NVLink
    // to the ranks of its own node holding its experts, each copy twice: its own and the one it
    // relays for rank 11.
    const auto pi = RoutingModel::Uniform().SelectionProbabilities(256, 8);
    const std::vector<uint32_t> nodes = TwoServersOfEight();
    const std::vector<double> tokens(16, 100.0);
    const double rank = ReachesRank(256, 16, 8); // 16 experts per rank
    const double node = ReachesRank(256, 2, 8);  // 128 experts per node
    const auto d = EpRowCopies(pi, 16, 8, true, nodes, tokens, 3, true);
    const auto c = EpRowCopies(pi, 16, 8, true, nodes, tokens, 3, false);
    ASSERT_EQ(d.size(), 16u);
    for (uint32_t r = 0; r < 16; ++r)
    {
        const double want = r < 8 ? 2 * 100 * rank : (r == 11 ? 100 * node : 0.0);
        EXPECT_NEAR(d[r], want, 1e-9) << r;
        EXPECT_NEAR(c[r], want, 1e-9) << r; // the combine returns the same way
    }
    // Across the nodes: one copy per node (0.9965 of a token) instead of 8 x 0.408 per rank,
    // 3.27 times fewer RDMA bytes.
    EXPECT_NEAR(node, 0.9965, 1e-4);
    EXPECT_NEAR(rank, 0.4077, 1e-4);
    // Skewed routing, the combine on a node of hot experts: one reduced copy per node still.
    const auto zipf = RoutingModel::Zipf(1.0, 3).SelectionProbabilities(256, 8);
    const auto cz = EpRowCopies(zipf, 16, 8, true, nodes, tokens, 3, false);
    EXPECT_GT(cz[11], 0);
    EXPECT_LE(cz[11], 100.0);
    // One node, an uneven split, or no nodes: straight to each rank.
    const auto direct = EpCopiesPerDestination(pi, 16, 8, true);
    std::vector<double> straight(16);
    for (uint32_t r = 0; r < 16; ++r)
    {
        straight[r] = 100 * direct[r];
    }
    EXPECT_EQ(EpRowCopies(pi, 16, 8, true, {}, tokens, 3, true), straight);
    EXPECT_EQ(EpRowCopies(pi, 16, 8, true, std::vector<uint32_t>(16, 0), tokens, 3, true),
              straight);
    std::vector<uint32_t> uneven = nodes;
    uneven[8] = 0;
    EXPECT_EQ(EpRowCopies(pi, 16, 8, true, uneven, tokens, 3, true), straight);
}

TEST(EpExchange, RowsFollowEverySourcesTokens)
{
    // Unequal batches over EP 4 (one node; 128 experts, top-8, one copy per expert): rank 0
    // runs 10 tokens, the others 1000. Rank 0's dispatch sends its 10 tokens' copies; its
    // combine returns each source the outputs of that source's tokens on rank 0's experts.
    const auto pi = RoutingModel::Uniform().SelectionProbabilities(128, 8);
    const std::vector<double> tokens = {10, 1000, 1000, 1000};
    const auto d = EpRowCopies(pi, 4, 8, false, {}, tokens, 0, true);
    const auto c = EpRowCopies(pi, 4, 8, false, {}, tokens, 0, false);
    for (uint32_t r = 1; r < 4; ++r)
    {
        EXPECT_NEAR(d[r], 10 * 8.0 / 4, 1e-9) << r;   // k / ep copies per token
        EXPECT_NEAR(c[r], 1000 * 8.0 / 4, 1e-9) << r; // not 10 x: the source's tokens
    }
    // Across nodes, what a rank relays carries its senders' tokens: EP 4 over 2 nodes of 2,
    // rank 0 forwards rank 2's tokens (remote, same local index) to rank 1, with its own.
    const std::vector<uint32_t> nodes = {0, 0, 1, 1};
    const std::vector<double> t2 = {10, 20, 300, 4000};
    const double rank = ReachesRank(128, 4, 8);
    const double node = ReachesRank(128, 2, 8);
    const auto dn = EpRowCopies(pi, 4, 8, true, nodes, t2, 0, true);
    EXPECT_NEAR(dn[1], (10 + 300) * rank, 1e-9);
    EXPECT_NEAR(dn[2], 10 * node, 1e-9);
    EXPECT_NEAR(dn[3], 0, 1e-12);
    // Its combine: to rank 1 the outputs of rank 1's and rank 3's tokens (rank 1 relays them),
    // to rank 2 one reduced copy per token of rank 2's that reached node 0.
    const auto cn = EpRowCopies(pi, 4, 8, true, nodes, t2, 0, false);
    EXPECT_NEAR(cn[1], (20 + 4000) * rank, 1e-9);
    EXPECT_NEAR(cn[2], 300 * node, 1e-9);
    EXPECT_NEAR(cn[3], 0, 1e-12);
}

} // namespace
} // namespace fabricsim
