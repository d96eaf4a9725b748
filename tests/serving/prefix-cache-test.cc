// Blocks with identities: chained block hashes, hits up to the first miss and never the last
// token, sharing by reference count, and the free queue's eviction order (vLLM's BlockPool).

#include "kv-cache.h"
#include "prefix-cache.h"

#include <gtest/gtest.h>

namespace fabricsim
{
namespace
{

BlockHashList
Hashes(const std::vector<ContentSpan>& spans, uint32_t blockSize)
{
    return std::make_shared<const std::vector<uint64_t>>(BlockHashes(spans, blockSize));
}

} // namespace

TEST(PrefixCache, BlockHashesChainTheirPrefix)
{
    const uint64_t sys = ContentId(ContentKind::SystemPrompt, 0);
    const uint64_t a = ContentId(ContentKind::Unique, 1);
    const uint64_t b = ContentId(ContentKind::Unique, 2);
    // 40 shared tokens then 30 own ones, blocks of 16: blocks 0 and 1 are all shared, block 2
    // mixes shared and own tokens, block 3 own tokens only; 70 tokens make 4 full blocks.
    auto x = BlockHashes({{sys, 40}, {a, 30}}, 16);
    auto y = BlockHashes({{sys, 40}, {b, 30}}, 16);
    ASSERT_EQ(x.size(), 4u);
    ASSERT_EQ(y.size(), 4u);
    EXPECT_EQ(x[0], y[0]);
    EXPECT_EQ(x[1], y[1]);
    EXPECT_NE(x[2], y[2]);
    EXPECT_NE(x[3], y[3]);
    // The same tokens cut into runs differently are still the same tokens only when the runs
    // are the same content: a run is its content's first tokens.
    EXPECT_EQ(BlockHashes({{sys, 32}}, 16), BlockHashes({{sys, 40}}, 16));
    // A block's hash depends on every block before it: the same second block after a
    // different first one differs.
    auto z = BlockHashes({{a, 16}, {sys, 16}}, 16);
    auto w = BlockHashes({{b, 16}, {sys, 16}}, 16);
    EXPECT_NE(z[1], w[1]);
    EXPECT_TRUE(BlockHashes({{sys, 15}}, 16).empty());
}

TEST(PrefixCache, HitsStopAtTheFirstMissAndBeforeTheLastToken)
{
    const uint64_t sys = ContentId(ContentKind::SystemPrompt, 0);
    PrefixBlockPool pool(100, 16);
    pool.Attach(1, Hashes({{sys, 64}, {ContentId(ContentKind::Unique, 1), 36}}, 16));
    ASSERT_TRUE(pool.Grow(1, 100, 0));
    EXPECT_EQ(pool.Held(1), 7u);
    EXPECT_EQ(pool.CachedBlocks(), 6u); // the 7th block is partial

    // Same 64-token system prompt: 4 blocks hit, then a miss.
    pool.Attach(2, Hashes({{sys, 64}, {ContentId(ContentKind::Unique, 2), 36}}, 16));
    EXPECT_EQ(pool.CachedTokens(2, 100), 64u);
    // A prompt that is exactly the cached 64 tokens: the last one is computed again, so only
    // the blocks before it (3 blocks, 48 tokens) count.
    pool.Attach(3, Hashes({{sys, 64}}, 16));
    EXPECT_EQ(pool.CachedTokens(3, 64), 48u);
    EXPECT_EQ(pool.CachedTokens(3, 65), 64u);
    // Sequence 2 shares the 4 blocks: only 3 new ones leave the free queue.
    const uint64_t freeBefore = pool.FreeBlocks();
    ASSERT_TRUE(pool.Grow(2, 100, 64));
    EXPECT_EQ(pool.Held(2), 7u);
    EXPECT_EQ(pool.FreeBlocks(), freeBefore - 3);
}

TEST(PrefixCache, FreedBlocksAreEvictedTailFirstAndNeverUsedOnesGoFirst)
{
    const uint64_t a = ContentId(ContentKind::Unique, 1);
    const uint64_t b = ContentId(ContentKind::Unique, 2);
    PrefixBlockPool pool(4, 2);
    pool.Attach(1, Hashes({{a, 6}}, 2));
    ASSERT_TRUE(pool.Grow(1, 6, 0)); // blocks a1 a2 a3, all registered
    pool.Free(1);                    // queue: a3 a2 a1 (its tail first)
    EXPECT_EQ(pool.FreeBlocks(), 4u);
    EXPECT_EQ(pool.CachedBlocks(), 3u);
    // Two new blocks: the never-used one, then the queue's head, a3.
    pool.Attach(2, Hashes({{b, 4}}, 2));
    ASSERT_TRUE(pool.Grow(2, 4, 0));
    EXPECT_EQ(pool.CachedBlocks(), 4u); // a1 a2 b1 b2
    pool.Attach(3, Hashes({{a, 7}}, 2));
    EXPECT_EQ(pool.CachedTokens(3, 7), 4u); // a1 a2 still there, a3 evicted
    // Taking a1 and a2 back plus a new block needs 3 of the 2 free: refused, nothing changes.
    EXPECT_FALSE(pool.CanGrow(3, 6, 4));
    EXPECT_FALSE(pool.Grow(3, 6, 4));
    EXPECT_EQ(pool.Held(3), 0u);
    EXPECT_EQ(pool.FreeBlocks(), 2u);
    // Once sequence 2 is gone, it fits: the hits leave the queue first, so the new block
    // evicts b2 (its sequence's tail), not a hit.
    pool.Free(2);
    ASSERT_TRUE(pool.Grow(3, 6, 4));
    EXPECT_EQ(pool.Held(3), 3u);
    EXPECT_EQ(pool.FreeBlocks(), 1u);
    pool.Attach(4, Hashes({{b, 4}}, 2));
    EXPECT_EQ(pool.CachedTokens(4, 5), 2u); // b1 left, b2 gone
}

TEST(PrefixCache, SharedBlocksStayWhileReferenced)
{
    const uint64_t sys = ContentId(ContentKind::SystemPrompt, 0);
    PrefixBlockPool pool(10, 4);
    pool.Attach(1, Hashes({{sys, 8}, {ContentId(ContentKind::Unique, 1), 4}}, 4));
    ASSERT_TRUE(pool.Grow(1, 12, 0));
    pool.Attach(2, Hashes({{sys, 8}, {ContentId(ContentKind::Unique, 2), 4}}, 4));
    ASSERT_EQ(pool.CachedTokens(2, 12), 8u);
    ASSERT_TRUE(pool.Grow(2, 12, 8));
    EXPECT_EQ(pool.FreeBlocks(), 10u - 4u); // 2 shared + 1 own each
    pool.Free(1);
    EXPECT_EQ(pool.FreeBlocks(), 10u - 3u); // only sequence 1's own block is free
    pool.Free(2);
    EXPECT_EQ(pool.FreeBlocks(), 10u);
    EXPECT_EQ(pool.CachedBlocks(), 4u); // all still findable
}

TEST(PrefixCache, AllocatorCountsTheSameWithoutIdentities)
{
    // Caching on, nothing shared: the allocator holds and frees as many blocks as without.
    BlockAllocator plain(50, 16);
    BlockAllocator caching(50, 16, KvCacheGroups(), true);
    caching.Attach(7, Hashes({{ContentId(ContentKind::Unique, 7), 200}}, 16));
    for (uint64_t tokens : {1u, 16u, 17u, 100u, 200u})
    {
        ASSERT_TRUE(plain.Grow(7, tokens, 0));
        ASSERT_TRUE(caching.Grow(7, tokens, 0));
        EXPECT_EQ(plain.Held(7), caching.Held(7));
        EXPECT_EQ(plain.FreeBlocks(), caching.FreeBlocks());
    }
    EXPECT_EQ(plain.CanGrow(7, 50 * 16, 0), caching.CanGrow(7, 50 * 16, 0));
    EXPECT_EQ(plain.CanGrow(7, 50 * 16 + 1, 0), caching.CanGrow(7, 50 * 16 + 1, 0));
    plain.Free(7);
    caching.Free(7);
    EXPECT_EQ(plain.FreeBlocks(), caching.FreeBlocks());
    KvCacheGroups sliding;
    sliding.sliding = 1;
    sliding.window = 64;
    EXPECT_THROW(BlockAllocator(50, 16, sliding, true), std::invalid_argument);
}

} // namespace fabricsim
