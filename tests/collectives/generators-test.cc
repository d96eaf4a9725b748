/*
 * Generators: every algorithm x collective it supports x 1..16 ranks passes the validator (in
 * place and out of place), with channels and pipelining too; unsupported requests throw
 * InputError naming the constraint; exact structure of ring, recursive doubling, Rabenseifner,
 * Bruck and the double binary tree; hierarchical traffic is rail-aligned.
 */
#include "generators.h"
#include "input-error.h"
#include "schedule-validator.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace fabricsim
{
namespace
{

using K = CollectiveKind;

std::string
Dump(const ValidationReport& r)
{
    std::string out;
    for (size_t i = 0; i < r.m_problems.size() && i < 8; ++i)
    {
        out += "\n  " + r.m_problems[i].ToString();
    }
    return out;
}

GeneratorOptions
Options(int channels = 1, int chunksPerRank = 1, int localSize = 0, uint32_t root = 0)
{
    GeneratorOptions o;
    o.channels = channels;
    o.chunksPerRank = chunksPerRank;
    o.localSize = localSize;
    o.root = root;
    return o;
}

/// Generates and validates; records a failure naming the case when the schedule is wrong.
Schedule
Checked(K kind, const std::string& algo, int n, const GeneratorOptions& opt)
{
    const std::string what = algo + " " + ToString(kind) + " n=" + std::to_string(n)
                             + " channels=" + std::to_string(opt.channels)
                             + " chunks=" + std::to_string(opt.chunksPerRank) + " local="
                             + std::to_string(opt.localSize) + " root=" + std::to_string(opt.root);
    Schedule s = GenerateSchedule(kind, algo, n, opt);
    EXPECT_EQ(s.m_collective, kind) << what;
    EXPECT_EQ(s.m_ranks, n) << what;
    // Pairwise overwrites input blocks that later rounds send: out of place only.
    EXPECT_EQ(s.m_inPlace, algo != "pairwise" || n == 1) << what;
    EXPECT_EQ(s.m_outOfPlace, true) << what;
    const ValidationReport report = ValidateSchedule(s, kind, n);
    EXPECT_TRUE(report.m_valid) << what << Dump(report);
    return s;
}

/// Send steps (s, rcs, rrs, rrcs) of \p rank.
int
Sends(const Schedule& s, int rank)
{
    int sends = 0;
    for (const auto& tb : s.Rank(rank).m_threadblocks)
    {
        for (const auto& st : tb.m_steps)
        {
            sends += OpSends(st.m_op) ? 1 : 0;
        }
    }
    return sends;
}

struct Case
{
    std::string m_algorithm;
    K m_kind;
};

void
PrintTo(const Case& c, std::ostream* os)
{
    *os << c.m_algorithm << "_" << ToString(c.m_kind);
}

std::vector<Case>
AllCases()
{
    std::vector<Case> cases;
    for (K kind :
         {K::kAllReduce, K::kAllGather, K::kReduceScatter, K::kAllToAll, K::kBroadcast, K::kReduce})
    {
        for (const auto& algo : AlgorithmsFor(kind))
        {
            cases.push_back(Case{algo, kind});
        }
    }
    return cases;
}

class EveryGenerator : public ::testing::TestWithParam<Case>
{
};

TEST_P(EveryGenerator, ValidForRanksOneToSixteen)
{
    const Case& c = GetParam();
    const bool rooted = c.m_kind == K::kBroadcast || c.m_kind == K::kReduce;
    for (int n = 1; n <= 16; ++n)
    {
        if (c.m_algorithm == "hierarchical")
        {
            for (int local : {1, 2, 4})
            {
                if (n % local == 0)
                {
                    Checked(c.m_kind, c.m_algorithm, n, Options(1, 1, local));
                }
            }
            continue;
        }
        Checked(c.m_kind, c.m_algorithm, n, Options(1, 1, 0, rooted ? uint32_t(n / 2) : 0));
    }
}

TEST_P(EveryGenerator, ValidWithChannelsAndPipelining)
{
    const Case& c = GetParam();
    const bool rooted = c.m_kind == K::kBroadcast || c.m_kind == K::kReduce;
    for (int n : {2, 3, 5, 6, 8})
    {
        for (const auto& [channels, chunks] :
             {std::make_pair(2, 1), std::make_pair(1, 3), std::make_pair(2, 2)})
        {
            if (c.m_algorithm == "hierarchical")
            {
                for (int local : {2, 4})
                {
                    if (n % local == 0)
                    {
                        Checked(c.m_kind, c.m_algorithm, n, Options(channels, chunks, local));
                    }
                }
                continue;
            }
            Checked(c.m_kind,
                    c.m_algorithm,
                    n,
                    Options(channels, chunks, 0, rooted ? uint32_t(n - 1) : 0));
        }
    }
}

TEST_P(EveryGenerator, DeterministicAndNamed)
{
    const Case& c = GetParam();
    const GeneratorOptions opt = Options(2, 2, c.m_algorithm == "hierarchical" ? 2 : 0);
    const Schedule a = GenerateSchedule(c.m_kind, c.m_algorithm, 6, opt);
    const Schedule b = GenerateSchedule(c.m_kind, c.m_algorithm, 6, opt);
    EXPECT_TRUE(a == b);
    EXPECT_EQ(a.m_name, c.m_algorithm + "_" + ToString(c.m_kind));
}

INSTANTIATE_TEST_SUITE_P(Generators,
                         EveryGenerator,
                         ::testing::ValuesIn(AllCases()),
                         [](const ::testing::TestParamInfo<Case>& info)
                         { return info.param.m_algorithm + "_" + ToString(info.param.m_kind); });

TEST(Generators, AlgorithmsForEachCollective)
{
    using V = std::vector<std::string>;
    EXPECT_EQ(AlgorithmsFor(K::kAllReduce),
              (V{"ring", "tree", "rhd", "rd", "direct", "hierarchical"}));
    EXPECT_EQ(AlgorithmsFor(K::kAllToAll),
              (V{"ring", "direct", "pairwise", "bruck", "hierarchical"}));
    EXPECT_EQ(AlgorithmsFor(K::kBroadcast), (V{"ring", "tree"}));
    EXPECT_TRUE(AlgorithmsFor(K::kCustom).empty());
}

/// Runs \p f, expects an InputError on \p field whose message holds every part of \p parts.
template <typename F>
void
ExpectInputError(F f, const std::string& field, const std::vector<std::string>& parts)
{
    try
    {
        f();
        ADD_FAILURE() << "no InputError for field " << field;
    }
    catch (const fabricsim::InputError& e)
    {
        EXPECT_EQ(e.Field(), field) << e.what();
        for (const auto& part : parts)
        {
            EXPECT_NE(std::string(e.what()).find(part), std::string::npos)
                << "'" << part << "' not in: " << e.what();
        }
    }
}

TEST(Generators, UnsupportedRequestsThrowInputError)
{
    ExpectInputError(
        [] { GenerateSchedule(K::kAllGather, "tree", 4); },
        "algorithm",
        {"allgather", "ring", "\"tree\"", "supports only allreduce, broadcast or reduce"});
    ExpectInputError([] { GenerateSchedule(K::kAllToAll, "rhd", 4); },
                     "algorithm",
                     {"alltoall", "pairwise", "bruck"});
    ExpectInputError([] { GenerateSchedule(K::kReduceScatter, "rd", 4); },
                     "algorithm",
                     {"reducescatter", "rhd"});
    ExpectInputError([] { GenerateSchedule(K::kBroadcast, "pairwise", 4); },
                     "algorithm",
                     {"broadcast", "ring or tree"});
    ExpectInputError([] { GenerateSchedule(K::kAllReduce, "nvls", 4); },
                     "algorithm",
                     {"one of ring, tree", "\"nvls\""});
    ExpectInputError([] { GenerateSchedule(K::kCustom, "ring", 4); }, "collective", {"custom"});
    ExpectInputError([] { GenerateSchedule(K::kAllReduce, "ring", 0); }, "ranks", {"found 0"});
    ExpectInputError(
        [] { GenerateSchedule(K::kAllReduce, "ring", 4, Options(0)); }, "channels", {"at least 1"});
    ExpectInputError([] { GenerateSchedule(K::kAllReduce, "ring", 4, Options(1, 0)); },
                     "chunksPerRank",
                     {"at least 1"});
    ExpectInputError([] { GenerateSchedule(K::kAllReduce, "ring", 4096, Options(64, 64)); },
                     "chunksPerRank",
                     {"at most"});
    // A ring alltoall relays every block around the ring: n^2 steps per rank.
    ExpectInputError([] { GenerateSchedule(K::kAllToAll, "ring", 1024); },
                     "ranks",
                     {"at most 33554432 steps", "1024 ranks"});
    ExpectInputError([] { GenerateSchedule(K::kBroadcast, "ring", 4, Options(1, 1, 0, 4)); },
                     "root",
                     {"[0, 4)", "found 4"});
    ExpectInputError([] { GenerateSchedule(K::kAllReduce, "hierarchical", 8); },
                     "localSize",
                     {"scale-up domain", "found 0"});
    ExpectInputError([] { GenerateSchedule(K::kAllReduce, "hierarchical", 6, Options(1, 1, 4)); },
                     "localSize",
                     {"divisor of the rank count 6", "found 4"});
}

TEST(Generators, RingAllReduceSendsTwiceNMinusOnePerChunk)
{
    for (int n : {2, 3, 4, 7, 8})
    {
        for (const auto& [channels, chunks] : {std::make_pair(1, 1), std::make_pair(4, 2)})
        {
            const Schedule s = Checked(K::kAllReduce, "ring", n, Options(channels, chunks));
            EXPECT_EQ(s.m_chunksPerLoop, n * channels * chunks);
            EXPECT_EQ(s.m_channels, channels);
            for (int r = 0; r < n; ++r)
            {
                EXPECT_EQ(Sends(s, r), 2 * (n - 1) * channels * chunks)
                    << "n=" << n << " rank " << r;
                // One threadblock per channel: send to r + 1, receive from r - 1.
                ASSERT_EQ(s.Rank(r).m_threadblocks.size(), size_t(channels));
                for (const auto& tb : s.Rank(r).m_threadblocks)
                {
                    EXPECT_EQ(tb.m_sendPeer, (r + 1) % n);
                    EXPECT_EQ(tb.m_recvPeer, (r + n - 1) % n);
                    EXPECT_EQ(tb.m_steps.size(), size_t(2 * n - 1) * chunks);
                }
            }
        }
    }
}

TEST(Generators, RingAllGatherAndReduceScatterSendNMinusOne)
{
    for (K kind : {K::kAllGather, K::kReduceScatter})
    {
        const Schedule s = Checked(kind, "ring", 6, Options());
        for (int r = 0; r < 6; ++r)
        {
            EXPECT_EQ(Sends(s, r), 5) << ToString(kind);
        }
    }
}

TEST(Generators, RecursiveDoublingAllReduceOnEightRanksHasThreeSends)
{
    const Schedule s = Checked(K::kAllReduce, "rd", 8, Options());
    for (int r = 0; r < 8; ++r)
    {
        EXPECT_EQ(Sends(s, r), 3);
        std::set<int> peers;
        for (const auto& tb : s.Rank(r).m_threadblocks)
        {
            peers.insert(tb.m_sendPeer);
        }
        EXPECT_EQ(peers, (std::set<int>{r ^ 1, r ^ 2, r ^ 4}));
    }
}

TEST(Generators, FoldForNonPowersOfTwo)
{
    // 6 ranks: 0 and 2 hand their data to 1 and 3, which run with 4 and 5 as four ranks.
    const Schedule s = Checked(K::kAllReduce, "rd", 6, Options());
    EXPECT_EQ(Sends(s, 0), 1);
    EXPECT_EQ(Sends(s, 2), 1);
    EXPECT_EQ(Sends(s, 1), 2 + 1); // two doubling rounds, then the result back to rank 0
    EXPECT_EQ(Sends(s, 4), 2);
}

TEST(Generators, RabenseifnerSendsTwiceLogN)
{
    const Schedule ar = Checked(K::kAllReduce, "rhd", 16, Options());
    const Schedule rs = Checked(K::kReduceScatter, "rhd", 16, Options());
    for (int r = 0; r < 16; ++r)
    {
        EXPECT_EQ(Sends(ar, r), 8);
        EXPECT_EQ(Sends(rs, r), 4);
    }
    // Halving: the first exchange moves half the vector, the last one block.
    const auto& first = ar.Rank(0).m_threadblocks[0];
    EXPECT_EQ(first.m_sendPeer, 8);
    EXPECT_EQ(first.m_steps[0].m_op, StepOp::kSend);
    EXPECT_EQ(first.m_steps[0].m_count, 8);
}

TEST(Generators, BruckAllToAllHasLogRounds)
{
    for (int n : {5, 8, 13})
    {
        const Schedule s = Checked(K::kAllToAll, "bruck", n, Options());
        int rounds = 0;
        for (int d = 1; d < n; d *= 2)
        {
            ++rounds;
        }
        for (int r = 0; r < n; ++r)
        {
            EXPECT_EQ(Sends(s, r), rounds) << "n=" << n;
            EXPECT_GT(s.Rank(r).m_scratchChunks, 0);
        }
    }
}

TEST(Generators, PairwiseTalksToOnePeerPerRound)
{
    const int n = 5;
    const Schedule s = Checked(K::kAllToAll, "pairwise", n, Options());
    for (int r = 0; r < n; ++r)
    {
        const auto& tbs = s.Rank(r).m_threadblocks;
        ASSERT_EQ(tbs.size(), size_t(n)); // local copy + one per round
        for (int i = 1; i < n; ++i)
        {
            const Threadblock& tb = tbs[i];
            EXPECT_EQ(tb.m_sendPeer, (r + i) % n);
            EXPECT_EQ(tb.m_recvPeer, (r - i + n) % n);
            if (i > 1)
            {
                // The round's send waits for the previous round's receive.
                ASSERT_EQ(tb.m_steps[0].m_deps.size(), 1u);
                EXPECT_EQ(tb.m_steps[0].m_deps[0].m_tb, i - 1);
            }
        }
    }
}

TEST(Generators, DirectAllToAllTalksToAllPeersAtOnce)
{
    const Schedule s = Checked(K::kAllToAll, "direct", 6, Options());
    for (int r = 0; r < 6; ++r)
    {
        int peers = 0;
        for (const auto& tb : s.Rank(r).m_threadblocks)
        {
            peers += tb.m_sendPeer >= 0 ? 1 : 0;
            for (const auto& st : tb.m_steps)
            {
                EXPECT_TRUE(st.m_deps.empty());
            }
        }
        EXPECT_EQ(peers, 5);
    }
}

TEST(Generators, DoubleBinaryTreeShape)
{
    for (int n = 1; n <= 64; ++n)
    {
        const RankTree t0 = DoubleBinaryTree(n, 0);
        const RankTree t1 = DoubleBinaryTree(n, 1);
        EXPECT_EQ(t0.m_root, 0);
        EXPECT_EQ(t1.m_root, n % 2 == 0 ? n - 1 : 1 % n);
        int interiorInBoth = 0;
        for (int r = 0; r < n; ++r)
        {
            EXPECT_LE(t0.m_children[r].size(), 2u);
            EXPECT_LE(t1.m_children[r].size(), 2u);
            interiorInBoth += !t0.m_children[r].empty() && !t1.m_children[r].empty() ? 1 : 0;
            if (r % 2 == 1)
            {
                EXPECT_TRUE(t0.m_children[r].empty()) << "odd ranks are leaves of tree 0";
            }
        }
        // Even n: every rank is interior in at most one tree; odd n: only rank 0 is in both.
        EXPECT_EQ(interiorInBoth, n % 2 == 0 || n == 1 ? 0 : 1) << "n=" << n;
        if (n % 2 == 1 && n > 1)
        {
            EXPECT_FALSE(t0.m_children[0].empty() || t1.m_children[0].empty());
        }
    }
    EXPECT_EQ(DoubleBinaryTree(14, 0).m_children[8], (std::vector<int>{4, 12}));
    EXPECT_EQ(DoubleBinaryTree(14, 0).m_children[12], (std::vector<int>{10, 13}));
}

TEST(Generators, TreeAllReduceSplitsDataOverTwoTrees)
{
    const int n = 8;
    const Schedule s = Checked(K::kAllReduce, "tree", n, Options(2, 3));
    EXPECT_EQ(s.m_channels, 4);
    EXPECT_EQ(s.m_chunksPerLoop, 2 * 2 * 3);
    // Every rank is a leaf in one tree: it sends each of that tree's chunks once, up.
    const RankTree t0 = DoubleBinaryTree(n, 0);
    for (int r = 0; r < n; ++r)
    {
        int upSends = 0;
        for (const auto& tb : s.Rank(r).m_threadblocks)
        {
            if (tb.m_channel < 2 && tb.m_sendPeer == t0.m_parent[r])
            {
                for (const auto& st : tb.m_steps)
                {
                    upSends += OpSends(st.m_op) ? 1 : 0;
                }
            }
        }
        EXPECT_EQ(upSends, r == 0 ? 0 : 6) << "rank " << r;
    }
}

TEST(Generators, HierarchicalTrafficIsRailAligned)
{
    const int local = 4;
    for (K kind : {K::kAllReduce, K::kAllGather, K::kReduceScatter, K::kAllToAll})
    {
        const Schedule s = Checked(kind, "hierarchical", 16, Options(2, 1, local));
        for (int r = 0; r < 16; ++r)
        {
            for (const auto& tb : s.Rank(r).m_threadblocks)
            {
                for (int peer : {tb.m_sendPeer, tb.m_recvPeer})
                {
                    if (peer >= 0 && peer / local != r / local)
                    {
                        EXPECT_EQ(peer % local, r % local)
                            << ToString(kind) << ": rank " << r << " talks to host peer " << peer;
                    }
                }
            }
        }
    }
}

TEST(Generators, HierarchicalAllReduceMovesLessAcrossHosts)
{
    // 2 hosts x 4: the rail allreduce moves 1/4 of what a flat ring pushes between hosts.
    auto interHostChunks = [](const Schedule& s, int local)
    {
        int chunks = 0;
        for (const auto& p : s.m_programs)
        {
            for (const auto& tb : p.m_threadblocks)
            {
                for (const auto& st : tb.m_steps)
                {
                    if (OpSends(st.m_op) && tb.m_sendPeer / local != p.m_rank / local)
                    {
                        chunks += st.m_count;
                    }
                }
            }
        }
        return chunks;
    };
    const Schedule h = Checked(K::kAllReduce, "hierarchical", 8, Options(1, 1, 4));
    const Schedule ring = Checked(K::kAllReduce, "ring", 8, Options());
    // Per unit of 8 chunks: hierarchical 4 rails x 2 ranks x 2 sends; ring 2 boundary ranks x 14.
    EXPECT_EQ(interHostChunks(h, 4), 16);
    EXPECT_EQ(interHostChunks(ring, 4), 28);
}

TEST(Generators, SingleRankCopiesInputToOutput)
{
    const Schedule s = Checked(K::kAllReduce, "tree", 1, Options(2, 2));
    ASSERT_EQ(s.Rank(0).m_threadblocks.size(), 1u);
    EXPECT_EQ(s.Rank(0).m_threadblocks[0].m_steps.size(), 1u);
    EXPECT_EQ(s.Rank(0).m_threadblocks[0].m_steps[0].m_op, StepOp::kCopy);
}

} // namespace
} // namespace fabricsim
