#include "schedule-collectives.h"

#include "connection-capacity.h"
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

namespace
{

/// The algorithms "auto" prefers for a size, best first (the fixed rule).
std::vector<std::string>
Preferences(CollectiveKind kind, bool small, bool multiDomain)
{
    // Latency-bound sizes take logarithmic-depth algorithms, bandwidth-bound ones the ring, or
    // the two-level algorithm when ranks span several scale-up domains.
    switch (kind)
    {
    case CollectiveKind::kAllReduce:
        return small         ? std::vector<std::string>{"tree", "rd", "ring"}
               : multiDomain ? std::vector<std::string>{"hierarchical", "ring"}
                             : std::vector<std::string>{"ring"};
    case CollectiveKind::kAllGather:
        return small ? std::vector<std::string>{"rd", "bruck", "ring"}
                     : std::vector<std::string>{"ring"};
    case CollectiveKind::kReduceScatter:
        return small ? std::vector<std::string>{"rhd", "ring"} : std::vector<std::string>{"ring"};
    case CollectiveKind::kAllToAll:
        return multiDomain && !small ? std::vector<std::string>{"hierarchical", "direct"}
                                     : std::vector<std::string>{"direct", "pairwise"};
    case CollectiveKind::kBroadcast:
    case CollectiveKind::kReduce:
        return small ? std::vector<std::string>{"tree", "ring"} : std::vector<std::string>{"ring"};
    default:
        return {};
    }
}

bool
MultiDomain(int ranks, const CollectiveOptions& options)
{
    const int local = options.m_localSize;
    return local > 1 && ranks > local && ranks % local == 0;
}

/// Whether \p algorithm is one of \p kind's and generates for \p ranks (some need powers of
/// two).
bool
Generates(CollectiveKind kind, const std::string& algorithm, int ranks, const GeneratorOptions& opt)
{
    const std::vector<std::string> known = AlgorithmsFor(kind);
    if (std::find(known.begin(), known.end(), algorithm) == known.end())
    {
        return false;
    }
    try
    {
        GenerateSchedule(kind, algorithm, ranks, opt);
        return true;
    }
    catch (const fabricsim::InputError&)
    {
        return false;
    }
}

} // namespace

std::string
AutoAlgorithm(CollectiveKind kind, uint64_t bytes, int ranks, const CollectiveOptions& options)
{
    GeneratorOptions opt;
    opt.localSize = options.m_localSize;
    for (const std::string& a :
         Preferences(kind, bytes <= options.m_smallBytes, MultiDomain(ranks, options)))
    {
        if (Generates(kind, a, ranks, opt))
        {
            return a;
        }
    }
    const std::vector<std::string> known = AlgorithmsFor(kind);
    return known.empty() ? "ring" : known.front();
}

std::vector<std::string>
AutoCandidates(CollectiveKind kind, uint64_t bytes, int ranks, const CollectiveOptions& options)
{
    // The fixed choice, then what NCCL's tuner weighs against it at every size: the
    // bandwidth-bound algorithms (ring, or hierarchical across domains) and, for all-reduce, the
    // tree. Recursive doubling and Bruck stay where the fixed rule puts them: NCCL has neither,
    // and timed at every size they would undercut its small-size latency.
    std::vector<std::string> wanted = Preferences(kind, false, MultiDomain(ranks, options));
    if (kind == CollectiveKind::kAllReduce)
    {
        wanted.push_back("tree");
    }
    std::vector<std::string> out{AutoAlgorithm(kind, bytes, ranks, options)};
    GeneratorOptions opt;
    opt.localSize = options.m_localSize;
    for (const std::string& a : wanted)
    {
        if (std::find(out.begin(), out.end(), a) == out.end() && Generates(kind, a, ranks, opt))
        {
            out.push_back(a);
        }
    }
    return out;
}

int64_t
IdleRunPs(Transport& idle,
          const Schedule& schedule,
          const ExecutorConfig& config,
          const std::vector<uint32_t>& rankMap,
          uint64_t bytes)
{
    const int64_t start = idle.NowPs();
    int64_t end = -1;
    Executor ex(idle, schedule, config, rankMap);
    ex.Start(bytes, {}, [&end, &idle]() { end = idle.NowPs(); });
    idle.Run();
    return end < 0 ? -1 : end - start;
}

std::string
FastestAlgorithm(CollectiveKind kind,
                 uint64_t bytes,
                 const std::vector<uint32_t>& ranks,
                 const GeneratorOptions& gen,
                 const CollectiveOptions& options,
                 const ExecutorConfig& config,
                 Transport* probe)
{
    const int n = int(ranks.size());
    std::vector<std::string> candidates = AutoCandidates(kind, bytes, n, options);
    if ((!probe && !options.m_probe) || candidates.size() == 1)
    {
        return candidates.front();
    }
    std::unique_ptr<Transport> owned;
    if (!probe)
    {
        owned = options.m_probe();
        probe = owned.get();
    }
    std::string best = candidates.front();
    int64_t bestPs = -1;
    for (const std::string& a : candidates)
    {
        Schedule schedule;
        try
        {
            schedule = GenerateSchedule(kind, a, n, gen);
        }
        catch (const fabricsim::InputError&)
        {
            continue; // not with these generator options (the request's own choice reports it)
        }
        const int64_t ps = IdleRunPs(*probe, schedule, config, ranks, bytes);
        if (ps >= 0 && (bestPs < 0 || ps < bestPs))
        {
            best = a;
            bestPs = ps;
        }
    }
    return best;
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
        try
        {
            it = m_schedules
                     .emplace(key,
                              GenerateSchedule(req.kind, algorithm, n, GeneratorOptionsFor(root)))
                     .first;
            // Worked out once: every call of this collective runs an executor on a copy.
            it->second.m_connectionChunks = ConnectionChunksNeeded(it->second);
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

GeneratorOptions
ScheduleCollectives::GeneratorOptionsFor(uint32_t root) const
{
    GeneratorOptions opt;
    opt.channels = m_options.m_channels;
    opt.chunksPerRank = m_options.m_chunksPerRank;
    opt.localSize = m_options.m_localSize;
    opt.protocol = m_options.m_protocol;
    opt.root = root;
    return opt;
}

Transport*
ScheduleCollectives::Probe()
{
    // One idle copy serves every timing: each run drains it before the next starts.
    if (!m_probeTransport)
    {
        m_probeTransport = m_options.m_probe();
    }
    return m_probeTransport.get();
}

std::string
ScheduleCollectives::AutoFor(const CollectiveRequest& req)
{
    const int n = int(req.ranks.size());
    if (!m_options.m_probe || m_userSchedules.count({int(req.kind), n}) > 0)
    {
        // A registered schedule serves "auto" whatever the name (ScheduleFor).
        return ChooseAlgorithm(req.kind, req.bytes, n);
    }
    const uint32_t root
        = (req.kind == CollectiveKind::kBroadcast || req.kind == CollectiveKind::kReduce) ? req.root
                                                                                          : 0;
    auto key = std::make_tuple(int(req.kind), req.bytes, req.ranks, root);
    auto it = m_tuned.find(key);
    if (it == m_tuned.end())
    {
        it = m_tuned
                 .emplace(key,
                          FastestAlgorithm(req.kind,
                                           req.bytes,
                                           req.ranks,
                                           GeneratorOptionsFor(root),
                                           m_options,
                                           m_config,
                                           Probe()))
                 .first;
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
    const std::string algorithm = req.algorithm == "auto" ? AutoFor(req) : req.algorithm;
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
