// The SMs DeepEP's normal kernels hold are taken from the rank's compute while they are in
// flight (issue 26): a compute that overlaps them runs at the rate they leave it.

#include "fake-collectives.h"
#include "input-error.h"
#include "serving-test-util.h"
#include "step-executor.h"
#include "step-program-builder.h"

#include <gtest/gtest.h>

#include <memory>

namespace fabricsim
{
namespace
{

using nlohmann::json;

/// Two ranks, each: stream 0 an all-to-all holding \p share of the SMs, sending \p bytes to the
/// other; stream 1 a compute of \p computePs.
StepProgram
OverlapProgram(double share, uint64_t bytes, int64_t computePs)
{
    StepProgram prog;
    for (uint32_t r = 0; r < 2; ++r)
    {
        RankStepProgram rp;
        rp.rank = r;
        rp.streams = 2;
        ProgramItem a2a;
        a2a.type = ProgramItem::Type::Comm;
        a2a.stream = 0;
        a2a.op = CommOp::AllToAll;
        a2a.category = "ep_dispatch";
        a2a.key = "a2a";
        a2a.group = {0, 1};
        a2a.groupIndex = r;
        a2a.bytes = bytes;
        a2a.row = r == 0 ? std::vector<uint64_t>{0, bytes} : std::vector<uint64_t>{bytes, 0};
        a2a.smShare = share;
        ProgramItem compute;
        compute.type = ProgramItem::Type::Compute;
        compute.stream = 1;
        compute.name = "moe";
        compute.durationPs = computePs;
        rp.items = {a2a, compute};
        prog.ranks.push_back(rp);
    }
    return prog;
}

TEST(SmContention, ComputeRunsOnWhatTheCollectivesLeave)
{
    // The all-to-all takes 2 us + 17.1 MB / 450 GB/s = 40 us; a 100 us compute beside it holding
    // a quarter of the SMs does 30 us of work by then, the other 70 at full rate: 110 us.
    FakeCollectives::Params fp;
    const uint64_t bytes = 17100000;
    FakeCollectives probe(fp);
    StepStats held = RunStep(probe, OverlapProgram(0.25, bytes, 100000000));
    ASSERT_EQ(held.ranks.size(), 2u);
    for (const RankStepStats& r : held.ranks)
    {
        EXPECT_EQ(r.endPs - r.startPs, 110000000) << "rank busy until the slowed compute ends";
        EXPECT_EQ(r.computePs, 110000000);
    }
    // Without a share the compute ends at 100 us; a compute shorter than the collective is
    // stretched by 1 / 0.75 and done before it: 40 us (the collective) bounds the rank.
    FakeCollectives free(fp);
    EXPECT_EQ(RunStep(free, OverlapProgram(0, bytes, 100000000)).ranks[0].computePs, 100000000);
    FakeCollectives shortOne(fp);
    const StepStats s = RunStep(shortOne, OverlapProgram(0.25, bytes, 15000000));
    EXPECT_EQ(s.ranks[0].computePs, 20000000);
    EXPECT_EQ(s.ranks[0].endPs - s.ranks[0].startPs, 40000000);
}

InferenceScenario
TwoBatch(const std::string& backend, uint32_t sms)
{
    return MakeScenario({{"model", "Qwen3-30B-A3B"},
                         {"hardware", {{"preset", "H100"}, {"sms", sms}}},
                         {"parallelism",
                          {{"tp", 4},
                           {"ep", 8},
                           {"dp", 2},
                           {"dp_attention", true},
                           {"ep_backend", backend},
                           {"ep_sms", 20}}},
                         {"serving", {{"execution", {{"ep_overlap", "two_batch"}}}}}});
}

TEST(SmContention, DeepEpNormalHoldsItsSmBudgetAndSlowsTheOtherMicroBatch)
{
    // Qwen3-30B-A3B, EP 8 over two DP groups, two micro-batches on DeepEP's normal kernels
    // with 20 of the H100's 132 SMs: every EP item carries 20 / 132 (and keeps it through a
    // program's JSON); the low-latency kernels and NCCL's all-to-all carry none.
    auto build = [](const std::string& backend, uint32_t sms)
    {
        InferenceScenario sc = TwoBatch(backend, sms);
        StepProgramBuilder builder(sc, Layout(sc.pool.par, 2));
        const StepBatch b = StepBatch::Prefill(4, 1024);
        return builder.Build(0, {b, b});
    };
    auto shares = [](const StepProgram& prog)
    {
        std::vector<double> out;
        for (const RankStepProgram& r : prog.ranks)
        {
            for (const ProgramItem& it : r.items)
            {
                if (it.type == ProgramItem::Type::Comm && it.category.rfind("ep_", 0) == 0)
                {
                    out.push_back(it.smShare);
                    EXPECT_EQ(ProgramItem::FromJson(JsonObject(it.ToJson(), "t", "")).smShare,
                              it.smShare);
                }
            }
        }
        return out;
    };
    const StepProgram normal = build("deepep-normal", 132);
    const std::vector<double> held = shares(normal);
    ASSERT_FALSE(held.empty());
    for (double s : held)
    {
        EXPECT_DOUBLE_EQ(s, 20.0 / 132);
    }
    for (double s : shares(build("deepep-low-latency", 132)))
    {
        EXPECT_EQ(s, 0.0);
    }
    for (double s : shares(build("all-to-all", 132)))
    {
        EXPECT_EQ(s, 0.0);
    }
    // With the SMs unknown nothing is held; with them the step is slower, by less than the
    // whole compute slowed by 132 / 112.
    const StepProgram unknown = build("deepep-normal", 0);
    for (double s : shares(unknown))
    {
        EXPECT_EQ(s, 0.0);
    }
    FakeCollectives a(FakeCollectives::Params{});
    FakeCollectives b(FakeCollectives::Params{});
    const StepStats slow = RunStep(a, normal);
    const StepStats fast = RunStep(b, unknown);
    const double slowPs = double(slow.endPs - slow.launchPs);
    const double fastPs = double(fast.endPs - fast.launchPs);
    EXPECT_GT(slowPs, fastPs);
    double compute = 0;
    for (const RankStepStats& r : fast.ranks)
    {
        compute = std::max(compute, double(r.computePs));
    }
    EXPECT_LT(slowPs - fastPs, compute * (132.0 / 112 - 1));
}

TEST(SmContention, AnSmBudgetAsLargeAsTheGpuIsRejected)
{
    try
    {
        MakeScenario({{"model", "Qwen3-30B-A3B"},
                      {"hardware", {{"preset", "H100"}}},
                      {"parallelism",
                       {{"tp", 4},
                        {"ep", 8},
                        {"dp", 2},
                        {"dp_attention", true},
                        {"ep_backend", "deepep-normal"},
                        {"ep_sms", 132}}}});
        FAIL() << "accepted ep_sms 132 on a 132-SM GPU";
    }
    catch (const InputError& e)
    {
        EXPECT_NE(std::string(e.what()).find("parallelism.ep_sms"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("fewer than the 132 SMs"), std::string::npos)
            << e.what();
    }
}

} // namespace
} // namespace fabricsim
