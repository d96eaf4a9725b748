/*
 * GenerateSchedule: checks the request and hands it to the algorithm family.
 */
#include "generator-algorithms.h"
#include "input-error.h"

#include <algorithm>
#include <cstdint>

namespace fabricsim
{

namespace
{

using Generator = Schedule (*)(CollectiveKind, int, const GeneratorOptions&);

struct Algorithm
{
    const char* m_name;
    Generator m_generate;
    std::vector<CollectiveKind> m_kinds;
};

const std::vector<Algorithm>&
Algorithms()
{
    using K = CollectiveKind;
    static const std::vector<Algorithm> kAlgorithms = {
        {"ring",
         gen::GenerateRing,
         {K::kAllReduce,
          K::kAllGather,
          K::kReduceScatter,
          K::kAllToAll,
          K::kBroadcast,
          K::kReduce}},
        {"tree", gen::GenerateTree, {K::kAllReduce, K::kBroadcast, K::kReduce}},
        {"rhd", gen::GenerateHalvingDoubling, {K::kAllReduce, K::kAllGather, K::kReduceScatter}},
        {"rd", gen::GenerateRecursiveDoubling, {K::kAllReduce, K::kAllGather}},
        {"direct",
         gen::GenerateDirect,
         {K::kAllReduce, K::kAllGather, K::kReduceScatter, K::kAllToAll}},
        {"pairwise", gen::GeneratePairwise, {K::kAllToAll}},
        {"bruck", gen::GenerateBruck, {K::kAllGather, K::kAllToAll}},
        {"hierarchical",
         gen::GenerateHierarchical,
         {K::kAllReduce, K::kAllGather, K::kReduceScatter, K::kAllToAll}},
    };
    return kAlgorithms;
}

std::string
Join(const std::vector<std::string>& items)
{
    std::string out;
    for (size_t i = 0; i < items.size(); ++i)
    {
        out += (i == 0 ? "" : i + 1 == items.size() ? " or " : ", ") + items[i];
    }
    return out;
}

/// Largest n x channels x chunksPerRank accepted (the validator executes up to 2^24 chunks).
constexpr int64_t kMaxChunks = int64_t(1) << 22;
constexpr int kMaxRanks = 1 << 16;
/// Largest schedule generated (steps over all ranks; about 60 bytes each).
constexpr int64_t kMaxSteps = int64_t(1) << 25;

/// Upper estimate of the steps one rank runs for one unit of data.
int64_t
StepsPerRankAndUnit(CollectiveKind kind, const std::string& algorithm, int64_t n)
{
    int64_t log = 1;
    while ((int64_t(1) << log) < n)
    {
        ++log;
    }
    if (algorithm == "ring")
    {
        return kind == CollectiveKind::kAllToAll ? n * n : 2 * n;
    }
    if (algorithm == "tree")
    {
        return 8;
    }
    if (algorithm == "bruck")
    {
        return (n + 2) * log;
    }
    // rd, rhd (strided windows send one piece per block), direct, pairwise, hierarchical.
    return 4 * n + 2 * log;
}

void
CheckOptions(CollectiveKind kind,
             const std::string& algorithm,
             int ranks,
             const GeneratorOptions& opt)
{
    if (ranks < 1 || ranks > kMaxRanks)
    {
        throw fabricsim::InputError(
            "", "ranks", "between 1 and " + std::to_string(kMaxRanks), std::to_string(ranks));
    }
    if (opt.channels < 1)
    {
        throw fabricsim::InputError("", "channels", "at least 1", std::to_string(opt.channels));
    }
    if (opt.chunksPerRank < 1)
    {
        throw fabricsim::InputError(
            "", "chunksPerRank", "at least 1", std::to_string(opt.chunksPerRank));
    }
    const int64_t chunks = int64_t(ranks) * opt.channels * opt.chunksPerRank;
    if (chunks > kMaxChunks)
    {
        throw fabricsim::InputError("",
                                    "chunksPerRank",
                                    "ranks x channels x chunksPerRank at most "
                                        + std::to_string(kMaxChunks),
                                    std::to_string(chunks));
    }
    const int64_t steps = chunks * StepsPerRankAndUnit(kind, algorithm, ranks);
    if (steps > kMaxSteps)
    {
        throw fabricsim::InputError(
            "",
            "ranks",
            "a schedule of at most " + std::to_string(kMaxSteps) + " steps (" + algorithm + " "
                + ToString(kind) + " runs about "
                + std::to_string(StepsPerRankAndUnit(kind, algorithm, ranks))
                + " per rank and unit of data; fewer ranks, channels or "
                  "chunksPerRank)",
            "about " + std::to_string(steps) + " steps for " + std::to_string(ranks) + " ranks");
    }
    if ((kind == CollectiveKind::kBroadcast || kind == CollectiveKind::kReduce)
        && opt.root >= static_cast<uint32_t>(ranks))
    {
        throw fabricsim::InputError(
            "", "root", "a rank in [0, " + std::to_string(ranks) + ")", std::to_string(opt.root));
    }
    if (algorithm == "hierarchical")
    {
        if (opt.localSize < 1)
        {
            throw fabricsim::InputError("",
                                        "localSize",
                                        "the ranks per scale-up domain (>= 1) for hierarchical",
                                        std::to_string(opt.localSize));
        }
        if (ranks % opt.localSize != 0)
        {
            throw fabricsim::InputError("",
                                        "localSize",
                                        "a divisor of the rank count " + std::to_string(ranks)
                                            + " (hierarchical needs whole scale-up domains)",
                                        std::to_string(opt.localSize));
        }
    }
}

/// One rank: the result is the input.
Schedule
SingleRank(CollectiveKind kind, const std::string& algorithm, const GeneratorOptions& opt)
{
    const int units = opt.channels * opt.chunksPerRank;
    gen::ScheduleBuilder b(kind, 1, units, 1, opt, gen::ScheduleName(algorithm, kind));
    b.Copy(0, b.Tb(0, -1, -1, 0), gen::In(0), gen::Out(0), units);
    return b.Finish();
}

} // namespace

namespace gen
{

std::string
ScheduleName(const std::string& algorithm, CollectiveKind kind)
{
    return algorithm + "_" + ToString(kind);
}

} // namespace gen

std::vector<std::string>
AlgorithmsFor(CollectiveKind kind)
{
    std::vector<std::string> names;
    for (const auto& a : Algorithms())
    {
        if (std::find(a.m_kinds.begin(), a.m_kinds.end(), kind) != a.m_kinds.end())
        {
            names.push_back(a.m_name);
        }
    }
    return names;
}

Schedule
GenerateSchedule(CollectiveKind kind,
                 const std::string& algorithm,
                 int ranks,
                 const GeneratorOptions& opt)
{
    if (kind == CollectiveKind::kCustom)
    {
        throw fabricsim::InputError("",
                                    "collective",
                                    "a built-in collective (allreduce, allgather, reducescatter, "
                                    "alltoall, broadcast or reduce); custom ones have no generator",
                                    "custom");
    }
    const Algorithm* found = nullptr;
    std::vector<std::string> all;
    for (const auto& a : Algorithms())
    {
        all.push_back(a.m_name);
        if (algorithm == a.m_name)
        {
            found = &a;
        }
    }
    if (!found)
    {
        throw fabricsim::InputError(
            "", "algorithm", "one of " + Join(all), "\"" + algorithm + "\"");
    }
    if (std::find(found->m_kinds.begin(), found->m_kinds.end(), kind) == found->m_kinds.end())
    {
        std::vector<std::string> supported;
        for (CollectiveKind k : found->m_kinds)
        {
            supported.push_back(ToString(k));
        }
        throw fabricsim::InputError(
            "",
            "algorithm",
            "an algorithm for " + ToString(kind) + ": " + Join(AlgorithmsFor(kind)),
            "\"" + algorithm + "\", which supports only " + Join(supported));
    }
    CheckOptions(kind, algorithm, ranks, opt);
    if (ranks == 1)
    {
        return SingleRank(kind, algorithm, opt);
    }
    return found->m_generate(kind, ranks, opt);
}

} // namespace fabricsim
