// The one model of what an EP exchange puts on the wire, per backend, against closed forms
// (issue 26): copies per destination under uniform and skewed routing, bytes per copy, and the
// step communication the serving loop builds from them.
#include "ep-exchange.h"
#include "model-spec.h"
#include "roofline.h"
#include "routing-model.h"
#include "step-comm.h"

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
    double miss = 1;
    for (uint32_t i = 0; i < topk; ++i)
    {
        miss *= (double(experts) - double(experts) / ranks - i) / (double(experts) - i);
    }
    return 1 - miss;
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
    const ModelSpec m = ModelSpec::Preset("Qwen3-30B-A3B");
    ParallelismSpec par;
    par.dp = 8;
    par.ep = 8;
    par.dpAttention = true;
    const StepBatch batch = StepBatch::Decode(64, 1024);
    auto bytesOf = [&](EpBackend b, const char* label)
    {
        par.epBackend = b;
        const HardwareSpec hw = HardwareSpec::Preset("H100");
        const Roofline r(m, hw, par);
        const auto ops = r.StepOps(batch);
        const StepComm comm(m, par);
        for (const CollectiveCall& c : comm.Collectives(batch, ops, RankPosition{}))
        {
            if (c.label == label)
            {
                return c.bytes;
            }
        }
        return -1.0;
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

} // namespace
} // namespace fabricsim
