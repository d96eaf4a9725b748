// Continuous-batching scheduler: token budget, chunked prefill, FCFS, max sequences,
// preemption by recompute when the KV cache is full.

#include "serving-scheduler.h"

#include <gtest/gtest.h>

namespace fabricsim
{
namespace
{

SequenceState
Seq(uint64_t id, uint64_t prompt, uint64_t output)
{
    SequenceState s;
    s.id = id;
    s.promptTokens = prompt;
    s.targetTokens = output;
    return s;
}

BatchingSpec
Batching(uint32_t tokens, uint32_t seqs, bool chunked)
{
    BatchingSpec b;
    b.maxNumBatchedTokens = tokens;
    b.maxNumSeqs = seqs;
    b.chunkedPrefill = chunked;
    return b;
}

TEST(ServingScheduler, ChunkedPrefillRespectsTheTokenBudget)
{
    ServingScheduler s(Batching(512, 256, true), 1000, 16);
    s.Enqueue(Seq(0, 1300, 4));
    s.Enqueue(Seq(1, 100, 4));
    // 1300-token prompt in chunks of at most 512; decodes of running sequences come first.
    std::vector<uint32_t> chunks;
    for (int step = 0; step < 20 && s.HasWork(); ++step)
    {
        ScheduledBatch b = s.Schedule();
        ASSERT_LE(b.Tokens(), 512u);
        for (const auto& q : b.sequences)
        {
            if (q.id == 0 && q.prefill)
            {
                chunks.push_back(q.newTokens);
                EXPECT_EQ(q.samples, q.cached + q.newTokens == 1300);
            }
        }
        s.Complete(b);
    }
    EXPECT_EQ(chunks, (std::vector<uint32_t>{512, 512, 276}));
    EXPECT_FALSE(s.HasWork());
}

TEST(ServingScheduler, DecodesGoFirstAndWaitingPromptsFillTheBudget)
{
    ServingScheduler s(Batching(64, 256, true), 1000, 16);
    s.Enqueue(Seq(0, 10, 5));
    ScheduledBatch b0 = s.Schedule();
    ASSERT_EQ(b0.sequences.size(), 1u);
    EXPECT_EQ(b0.sequences[0].newTokens, 10u);
    s.Complete(b0); // first token sampled
    s.Enqueue(Seq(1, 100, 5));
    ScheduledBatch b1 = s.Schedule();
    ASSERT_EQ(b1.sequences.size(), 2u);
    EXPECT_EQ(b1.sequences[0].id, 0u);
    EXPECT_EQ(b1.sequences[0].newTokens, 1u);
    EXPECT_FALSE(b1.sequences[0].prefill);
    EXPECT_EQ(b1.sequences[0].cached, 10u);
    EXPECT_EQ(b1.sequences[1].newTokens, 63u); // the rest of the budget
    EXPECT_EQ(b1.PrefillTokens(), 63u);
}

TEST(ServingScheduler, WithoutChunkingWholePromptsOnlyAndTheHeadBlocks)
{
    ServingScheduler s(Batching(256, 256, false), 1000, 16);
    s.Enqueue(Seq(0, 200, 2));
    s.Enqueue(Seq(1, 100, 2)); // does not fit next to 200: FCFS keeps it waiting
    s.Enqueue(Seq(2, 10, 2));
    ScheduledBatch b = s.Schedule();
    ASSERT_EQ(b.sequences.size(), 1u);
    EXPECT_EQ(b.sequences[0].newTokens, 200u);
    EXPECT_EQ(s.Waiting().size(), 2u);
    EXPECT_EQ(s.Waiting().front(), 1u);
}

TEST(ServingScheduler, MaxNumSeqsLimitsTheRunningSet)
{
    ServingScheduler s(Batching(10000, 3, true), 1000, 16);
    for (uint64_t i = 0; i < 5; ++i)
    {
        s.Enqueue(Seq(i, 10, 100));
    }
    ScheduledBatch b = s.Schedule();
    EXPECT_EQ(b.sequences.size(), 3u);
    EXPECT_EQ(s.Running().size(), 3u);
    EXPECT_EQ(s.Waiting().size(), 2u);
}

// 4 blocks of 16 tokens: two sequences of 24 prompt tokens take 2 blocks each; when they grow
// past 32 tokens the later one is preempted, its blocks freed and its progress dropped; it comes
// back at the head of the queue and recomputes prompt + generated tokens.
TEST(ServingScheduler, PreemptsTheLatestSequenceWhenTheCacheIsFull)
{
    ServingScheduler s(Batching(1000, 256, true), 4, 16);
    s.Enqueue(Seq(0, 24, 20));
    s.Enqueue(Seq(1, 24, 20));
    ScheduledBatch b = s.Schedule();
    ASSERT_EQ(b.sequences.size(), 2u);
    EXPECT_EQ(s.Blocks().FreeBlocks(), 0u);
    s.Complete(b); // 25 known tokens each, 24 cached
    // Decode up to 32 cached tokens (fits 2 blocks each).
    for (int i = 0; i < 8; ++i)
    {
        ScheduledBatch d = s.Schedule();
        ASSERT_EQ(d.sequences.size(), 2u) << "step " << i;
        EXPECT_EQ(d.preempted, 0u);
        s.Complete(d);
    }
    EXPECT_EQ(s.Get(0).computed, 32u);
    // Token 33 needs a third block for each: sequence 1 is preempted for sequence 0.
    ScheduledBatch p = s.Schedule();
    EXPECT_EQ(p.preempted, 1u);
    EXPECT_EQ(p.preemptedIds, (std::vector<uint64_t>{1}));
    ASSERT_EQ(p.sequences.size(), 1u);
    EXPECT_EQ(p.sequences[0].id, 0u);
    EXPECT_EQ(s.Get(1).computed, 0u);
    EXPECT_EQ(s.Get(1).preemptions, 1u);
    EXPECT_EQ(s.Waiting().front(), 1u);
    EXPECT_EQ(s.Blocks().Held(1), 0u);
    s.Complete(p);
    // Nothing else is admitted in the step that preempted; sequence 0 runs to completion and
    // sequence 1 recomputes its 24 + 9 tokens in one prefill.
    while (s.Get(0).generated < 20)
    {
        ScheduledBatch d = s.Schedule();
        ASSERT_FALSE(d.Empty());
        EXPECT_EQ(d.sequences[0].id, 0u);
        StepOutcome o = s.Complete(d);
        if (!o.finished.empty())
        {
            break;
        }
    }
    ScheduledBatch r = s.Schedule();
    ASSERT_EQ(r.sequences.size(), 1u);
    EXPECT_EQ(r.sequences[0].id, 1u);
    EXPECT_EQ(r.sequences[0].newTokens, 24u + 9u);
    EXPECT_TRUE(r.sequences[0].prefill);
    EXPECT_TRUE(r.sequences[0].samples);
    EXPECT_EQ(s.Preemptions(), 1u);
}

TEST(ServingScheduler, HeldBlocksAndReservationsForDisaggregation)
{
    ServingScheduler prefill(Batching(1000, 256, true), 10, 16);
    prefill.SetHoldFinished(true);
    prefill.Enqueue(Seq(7, 40, 1));
    StepOutcome o = prefill.Complete(prefill.Schedule());
    EXPECT_EQ(o.finished, (std::vector<uint64_t>{7}));
    EXPECT_EQ(prefill.Blocks().Held(7), 3u); // kept for the KV transfer
    EXPECT_FALSE(prefill.HasWork());
    prefill.Release(7);
    EXPECT_EQ(prefill.Blocks().FreeBlocks(), 10u);

    ServingScheduler decode(Batching(1000, 256, true), 10, 16);
    EXPECT_TRUE(decode.Reserve(7, 40));
    EXPECT_FALSE(decode.Reserve(8, 130)); // 9 blocks: 7 left
    SequenceState s = Seq(7, 40, 5);
    s.generated = 1;
    s.computed = 40;
    decode.AddRunning(s);
    ScheduledBatch d = decode.Schedule();
    ASSERT_EQ(d.sequences.size(), 1u);
    EXPECT_EQ(d.sequences[0].newTokens, 1u);
    EXPECT_EQ(d.sequences[0].cached, 40u);
    EXPECT_FALSE(d.sequences[0].prefill);
}

TEST(ServingScheduler, AdmitHookHoldsTheQueue)
{
    ServingScheduler s(Batching(1000, 256, true), 100, 16);
    bool open = false;
    s.SetAdmitHook([&](const SequenceState&) { return open; });
    s.Enqueue(Seq(0, 10, 2));
    EXPECT_TRUE(s.Schedule().Empty());
    open = true;
    EXPECT_EQ(s.Schedule().sequences.size(), 1u);
}

} // namespace
} // namespace fabricsim
