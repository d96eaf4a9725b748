#include "schedule-collectives.h"

#include "input-error.h"

#include <algorithm>
#include <set>

namespace fabricsim
{

namespace
{

/// Channels reserved per rank group, so concurrent groups never share connections.
constexpr uint32_t kGroupChannels = 256;
/// Channel of AlltoAllv transfers inside a group's range.
constexpr uint32_t kAllToAllVChannel = kGroupChannels - 1;
/// Channel of point-to-point transfers (outside every group's range).
constexpr uint32_t kP2pChannel = 0xfffff000u;

const char* kWhere = "<collective request>";

} // namespace

ScheduleCollectives::ScheduleCollectives(Transport& transport,
                                         const ExecutorConfig& config,
                                         const CollectiveOptions& options)
    : m_transport(transport)
    , m_config(config)
    , m_options(options)
{
}

ScheduleCollectives::~ScheduleCollectives()
{
    *m_alive = false;
}

int64_t
ScheduleCollectives::NowPs() const
{
    return m_transport.NowPs();
}

void
ScheduleCollectives::Schedule(int64_t delayPs, Done fn)
{
    m_transport.Schedule(delayPs, std::move(fn));
}

void
ScheduleCollectives::UseSchedule(const fabricsim::Schedule& schedule)
{
    m_userSchedules[{int(schedule.m_collective), schedule.m_ranks}] = schedule;
}

std::string
ScheduleCollectives::ChooseAlgorithm(CollectiveKind kind, uint64_t bytes, int ranks) const
{
    return AutoAlgorithm(kind, bytes, ranks, m_options);
}

std::string
AutoAlgorithm(CollectiveKind kind, uint64_t bytes, int ranks, const CollectiveOptions& options)
{
    // Latency-bound sizes take logarithmic-depth algorithms, bandwidth-bound ones the ring, or
    // the two-level algorithm when ranks span several scale-up domains.
    const int local = options.m_localSize;
    const bool multiDomain = local > 1 && ranks > local && ranks % local == 0;
    const bool small = bytes <= options.m_smallBytes;
    std::vector<std::string> prefs;
    switch (kind)
    {
    case CollectiveKind::kAllReduce:
        prefs = small         ? std::vector<std::string>{"tree", "rd", "ring"}
                : multiDomain ? std::vector<std::string>{"hierarchical", "ring"}
                              : std::vector<std::string>{"ring"};
        break;
    case CollectiveKind::kAllGather:
        prefs = small ? std::vector<std::string>{"rd", "bruck", "ring"}
                      : std::vector<std::string>{"ring"};
        break;
    case CollectiveKind::kReduceScatter:
        prefs = small ? std::vector<std::string>{"rhd", "ring"} : std::vector<std::string>{"ring"};
        break;
    case CollectiveKind::kAllToAll:
        prefs = multiDomain && !small ? std::vector<std::string>{"hierarchical", "direct"}
                                      : std::vector<std::string>{"direct", "pairwise"};
        break;
    case CollectiveKind::kBroadcast:
    case CollectiveKind::kReduce:
        prefs = small ? std::vector<std::string>{"tree", "ring"} : std::vector<std::string>{"ring"};
        break;
    default:
        break;
    }
    const std::vector<std::string> known = AlgorithmsFor(kind);
    GeneratorOptions opt;
    opt.localSize = local;
    for (const std::string& a : prefs)
    {
        if (std::find(known.begin(), known.end(), a) == known.end())
        {
            continue;
        }
        try
        {
            // Some algorithms need power-of-two rank counts: take the first that generates.
            GenerateSchedule(kind, a, ranks, opt);
            return a;
        }
        catch (const fabricsim::InputError&)
        {
        }
    }
    return known.empty() ? "ring" : known.front();
}

void
ScheduleCollectives::CheckRequest(const CollectiveRequest& req) const
{
    if (req.ranks.empty())
    {
        throw fabricsim::InputError(kWhere, "ranks", "a non-empty rank group", "no ranks");
    }
    std::set<uint32_t> seen;
    for (uint32_t r : req.ranks)
    {
        if (r >= m_transport.NumRanks())
        {
            throw fabricsim::InputError(kWhere,
                                        "ranks",
                                        "ranks below " + std::to_string(m_transport.NumRanks()),
                                        std::to_string(r));
        }
        if (!seen.insert(r).second)
        {
            throw fabricsim::InputError(
                kWhere, "ranks", "each rank once", "rank " + std::to_string(r) + " again");
        }
    }
    if (req.root >= req.ranks.size())
    {
        throw fabricsim::InputError(kWhere,
                                    "root",
                                    "a group index below " + std::to_string(req.ranks.size()),
                                    std::to_string(req.root));
    }
    if ((req.kernelLaunchPs >= 0 || req.kernelMinPs > 0 || req.kernelFillPs > 0)
        && req.alltoallBytes.empty())
    {
        throw fabricsim::InputError(kWhere,
                                    "kernelLaunchPs, kernelMinPs, kernelFillPs",
                                    "an all-to-all(v) with its byte matrix (own kernels)",
                                    ToString(req.kind) + " without one");
    }
    if (req.kernelMinPs < 0 || req.kernelLaunchPs < -1 || req.kernelFillPs < 0)
    {
        throw fabricsim::InputError(kWhere,
                                    "kernelLaunchPs, kernelMinPs, kernelFillPs",
                                    "times of at least 0 ps",
                                    std::to_string(req.kernelLaunchPs) + ", "
                                        + std::to_string(req.kernelMinPs) + ", "
                                        + std::to_string(req.kernelFillPs));
    }
    if (!req.alltoallBytes.empty())
    {
        if (req.kind != CollectiveKind::kAllToAll || req.alltoallBytes.size() != req.ranks.size())
        {
            throw fabricsim::InputError(kWhere,
                                        "alltoallBytes",
                                        "an n x n matrix for an alltoall of n ranks",
                                        std::to_string(req.alltoallBytes.size()) + " rows");
        }
        for (const auto& row : req.alltoallBytes)
        {
            if (row.size() != req.ranks.size())
            {
                throw fabricsim::InputError(kWhere,
                                            "alltoallBytes",
                                            "rows of " + std::to_string(req.ranks.size()),
                                            std::to_string(row.size()));
            }
        }
    }
}

uint32_t
ScheduleCollectives::ChannelBase(const std::vector<uint32_t>& ranks)
{
    // One channel range per rank group: like an NCCL communicator, it owns its connections.
    auto it = m_groups.find(ranks);
    if (it == m_groups.end())
    {
        it = m_groups.emplace(ranks, uint32_t(m_groups.size())).first;
    }
    return it->second * kGroupChannels;
}

const fabricsim::Schedule&
ScheduleCollectives::ScheduleFor(const CollectiveRequest& req, const std::string& algorithm)
{
    const int n = int(req.ranks.size());
    auto user = m_userSchedules.find({int(req.kind), n});
    if (user != m_userSchedules.end()
        && (req.algorithm == "auto" || req.algorithm == user->second.m_name))
    {
        return user->second;
    }
    const uint32_t root
        = (req.kind == CollectiveKind::kBroadcast || req.kind == CollectiveKind::kReduce) ? req.root
                                                                                          : 0;
    auto key = std::make_tuple(int(req.kind), algorithm, n, root);
    auto it = m_schedules.find(key);
    if (it == m_schedules.end())
    {
        GeneratorOptions opt;
        opt.channels = m_options.m_channels;
        opt.chunksPerRank = m_options.m_chunksPerRank;
        opt.localSize = m_options.m_localSize;
        opt.protocol = m_options.m_protocol;
        opt.root = root;
        try
        {
            it = m_schedules.emplace(key, GenerateSchedule(req.kind, algorithm, n, opt)).first;
        }
        catch (const fabricsim::InputError& e)
        {
            throw fabricsim::InputError(kWhere,
                                        "algorithm",
                                        "an algorithm that runs " + ToString(req.kind) + " on "
                                            + std::to_string(n) + " ranks",
                                        "\"" + algorithm + "\": " + e.what());
        }
    }
    return it->second;
}

void
ScheduleCollectives::Start(const CollectiveRequest& req, RankDone onRankDone, Done onDone)
{
    CheckRequest(req);
    const uint32_t base = ChannelBase(req.ranks);
    if (!req.alltoallBytes.empty())
    {
        StartAllToAllV(req, std::move(onRankDone), std::move(onDone), base + kAllToAllVChannel);
        return;
    }
    const int n = int(req.ranks.size());
    if (req.bytes == 0 || n == 1)
    {
        // Nothing moves between ranks: every rank has its result at once.
        m_transport.Schedule(0,
                             [onRankDone, onDone, n]()
                             {
                                 for (int i = 0; i < n; ++i)
                                 {
                                     if (onRankDone)
                                     {
                                         onRankDone(uint32_t(i));
                                     }
                                 }
                                 if (onDone)
                                 {
                                     onDone();
                                 }
                             });
        return;
    }
    const std::string algorithm
        = req.algorithm == "auto" ? ChooseAlgorithm(req.kind, req.bytes, n) : req.algorithm;
    const fabricsim::Schedule& s = ScheduleFor(req, algorithm);
    const uint64_t id = m_nextId++;
    Active& a = m_running[id];
    a.m_tag = req.tag.empty() ? ToString(req.kind) + " " + algorithm : req.tag;
    a.m_executor = std::make_unique<Executor>(m_transport, s, m_config, req.ranks, base);
    a.m_executor->Start(req.bytes,
                        std::move(onRankDone),
                        [this, id, onDone, alive = m_alive]()
                        {
                            if (onDone)
                            {
                                onDone();
                            }
                            if (*alive)
                            {
                                Finish(id);
                            }
                        });
}

void
ScheduleCollectives::Finish(uint64_t id)
{
    // The executor is inside its own callback now: free it once the stack has unwound.
    m_transport.Schedule(0,
                         [this, id, alive = m_alive]()
                         {
                             if (*alive)
                             {
                                 m_running.erase(id);
                             }
                         });
}

void
ScheduleCollectives::SendSliced(
    uint32_t src, uint32_t dst, uint32_t channel, uint64_t bytes, Done onDelivered)
{
    // Same message granularity as the executor, so the fabric sees the same traffic shape.
    const uint64_t slice = m_config.m_sliceBytes > 0 ? m_config.m_sliceBytes
                                                     : ProtocolBufferBytes(Protocol::kSimple) / 8;
    const uint64_t n = std::max<uint64_t>(1, (bytes + slice - 1) / slice);
    for (uint64_t i = 0; i < n; ++i)
    {
        const uint64_t part = bytes / n + (i < bytes % n ? 1 : 0);
        m_transport.Send(src,
                         dst,
                         channel,
                         std::max<uint64_t>(1, part),
                         i + 1 == n ? onDelivered : Done([]() {}));
    }
}

void
ScheduleCollectives::SendRecv(uint32_t src, uint32_t dst, uint64_t bytes, Done onDone)
{
    if (src >= m_transport.NumRanks() || dst >= m_transport.NumRanks())
    {
        throw fabricsim::InputError(kWhere,
                                    "sendrecv",
                                    "ranks below " + std::to_string(m_transport.NumRanks()),
                                    std::to_string(src) + " -> " + std::to_string(dst));
    }
    if (src == dst || bytes == 0)
    {
        m_transport.Schedule(m_config.m_launchLatencyPs, std::move(onDone));
        return;
    }
    m_transport.Schedule(m_config.m_launchLatencyPs,
                         [this, src, dst, bytes, onDone, alive = m_alive]()
                         {
                             if (*alive)
                             {
                                 SendSliced(
                                     src, dst, kP2pChannel, bytes, onDone ? onDone : []() {});
                             }
                         });
}

void
ScheduleCollectives::StartAllToAllV(const CollectiveRequest& req,
                                    RankDone onRankDone,
                                    Done onDone,
                                    uint32_t channel)
{
    // One transfer per ordered pair, all at once (NCCL's alltoall is grouped send/recv); a rank
    // is done when everything addressed to it has arrived.
    const uint32_t n = uint32_t(req.ranks.size());
    const uint64_t id = m_nextId++;
    Active& a = m_running[id];
    a.m_tag = req.tag.empty() ? "alltoallv" : req.tag;
    auto expected = std::make_shared<std::vector<uint32_t>>(n, 0);
    for (uint32_t i = 0; i < n; ++i)
    {
        for (uint32_t j = 0; j < n; ++j)
        {
            if (i != j && req.alltoallBytes[i][j] > 0)
            {
                (*expected)[j]++;
                a.m_pending++;
            }
        }
    }
    auto rankDone = [onRankDone](uint32_t r)
    {
        if (onRankDone)
        {
            onRankDone(r);
        }
    };
    const int64_t launch
        = req.kernelLaunchPs >= 0 ? req.kernelLaunchPs : m_config.m_launchLatencyPs;
    const int64_t minPs = req.kernelMinPs;
    const int64_t fillPs = req.kernelFillPs;
    // When rank j's last transfer came in (the fill needs its delivery time).
    auto lastIn = std::make_shared<std::vector<int64_t>>(n, -1);
    auto sendsFrom = std::make_shared<int64_t>(0);
    auto count = [this, id, onDone](uint32_t arrivals)
    {
        m_running[id].m_pending -= arrivals;
        if (m_running[id].m_pending == 0)
        {
            if (onDone)
            {
                onDone();
            }
            Finish(id);
        }
    };
    // One arrival at rank j (a transfer, or the kernels' own bound) has come in; the last one
    // holds the rank back by the pipeline's fill, min(delivery, own work, kernelFillPs).
    auto arrived = [this,
                    expected,
                    rankDone,
                    count,
                    lastIn,
                    sendsFrom,
                    launch,
                    minPs,
                    fillPs,
                    alive = m_alive](uint32_t j, bool transfer)
    {
        if (!*alive)
        {
            return;
        }
        if (transfer)
        {
            (*lastIn)[j] = m_transport.NowPs();
        }
        if (--(*expected)[j] > 0)
        {
            count(1);
            return;
        }
        int64_t fill = 0;
        if (fillPs > 0 && (*lastIn)[j] >= 0)
        {
            fill = std::min({(*lastIn)[j] - *sendsFrom, minPs - launch, fillPs});
        }
        if (fill <= 0)
        {
            rankDone(j);
            count(1);
            return;
        }
        m_transport.Schedule(fill,
                             [rankDone, count, j, alive]()
                             {
                                 if (*alive)
                                 {
                                     rankDone(j);
                                     count(1);
                                 }
                             });
    };
    if (req.kernelMinPs > 0)
    {
        // Every rank also waits for the kernels' own bound, counted as one more arrival.
        for (uint32_t j = 0; j < n; ++j)
        {
            (*expected)[j]++;
            a.m_pending++;
        }
    }
    auto ranks = req.ranks;
    auto matrix = req.alltoallBytes;
    m_transport.Schedule(launch,
                         [=, alive = m_alive]()
                         {
                             if (!*alive)
                             {
                                 return;
                             }
                             *sendsFrom = m_transport.NowPs();
                             for (uint32_t j = 0; j < n; ++j)
                             {
                                 if ((*expected)[j] == 0)
                                 {
                                     rankDone(j);
                                 }
                             }
                             if (m_running[id].m_pending == 0)
                             {
                                 if (onDone)
                                 {
                                     onDone();
                                 }
                                 Finish(id);
                                 return;
                             }
                             for (uint32_t i = 0; i < n; ++i)
                             {
                                 for (uint32_t j = 0; j < n; ++j)
                                 {
                                     if (i != j && matrix[i][j] > 0)
                                     {
                                         SendSliced(ranks[i],
                                                    ranks[j],
                                                    channel,
                                                    matrix[i][j],
                                                    [arrived, j]() { arrived(j, true); });
                                     }
                                 }
                             }
                             if (minPs > 0)
                             {
                                 m_transport.Schedule(std::max<int64_t>(0, minPs - launch),
                                                      [arrived, n]()
                                                      {
                                                          for (uint32_t j = 0; j < n; ++j)
                                                          {
                                                              arrived(j, false);
                                                          }
                                                      });
                             }
                         });
}

std::vector<std::string>
ScheduleCollectives::StuckReports() const
{
    std::vector<std::string> out;
    for (const auto& [id, a] : m_running)
    {
        if (a.m_executor)
        {
            if (!a.m_executor->Complete())
            {
                out.push_back(a.m_tag + ": " + a.m_executor->Result().StuckReport());
            }
        }
        else if (a.m_pending > 0)
        {
            out.push_back(a.m_tag + ": " + std::to_string(a.m_pending)
                          + " transfer(s) not delivered");
        }
    }
    return out;
}

} // namespace fabricsim
