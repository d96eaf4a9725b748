#include "fabric-collective-helper.h"

#include "analytical-transport.h"
#include "executor-attributes.h"
#include "input-error.h"
#include "packet-transport.h"

#include <algorithm>

namespace ns3
{

FabricCollectiveHelper::FabricCollectiveHelper(FabricTopologyHelper& fabric)
    : m_fabric(&fabric)
    , m_topology(&fabric.GetTopology())
{
}

FabricCollectiveHelper::FabricCollectiveHelper(fabricsim::Transport& transport,
                                               const fabricsim::Topology* topology)
    : m_external(&transport)
    , m_topology(topology)
{
}

FabricCollectiveHelper::~FabricCollectiveHelper()
{
    // The API's executors hold callbacks into the transport: drop them first.
    m_api.reset();
    m_owned.reset();
}

void
FabricCollectiveHelper::SetCongestionControl(const std::string& name)
{
    SetCongestionControl(CongestionControlFactory::Get(name));
}

void
FabricCollectiveHelper::SetCongestionControl(const ObjectFactory& cc)
{
    m_cc = cc;
    m_ccSet = true;
}

void
FabricCollectiveHelper::SetPriority(uint8_t priority)
{
    m_priority = priority;
}

void
FabricCollectiveHelper::SetStopTime(Time stop)
{
    m_stop = stop;
}

void
FabricCollectiveHelper::SetStallTime(Time stall)
{
    m_stall = stall;
}

void
FabricCollectiveHelper::SetRankHosts(const std::vector<uint32_t>& hosts)
{
    m_rankHosts = hosts;
}

std::vector<uint32_t>
FabricCollectiveHelper::GetRankHosts() const
{
    if (!m_rankHosts.empty())
    {
        return m_rankHosts;
    }
    const uint32_t n = m_fabric ? m_fabric->NumHosts() : m_external->NumRanks();
    std::vector<uint32_t> hosts(n);
    for (uint32_t i = 0; i < n; ++i)
    {
        hosts[i] = i;
    }
    return hosts;
}

uint32_t
FabricCollectiveHelper::GetNRanks() const
{
    return uint32_t(GetRankHosts().size());
}

void
FabricCollectiveHelper::SetExecutorConfig(const fabricsim::ExecutorConfig& config)
{
    m_config = config;
}

fabricsim::ExecutorConfig
FabricCollectiveHelper::GetExecutorConfig() const
{
    // Read late, so attributes set after the helper was made still count.
    return m_config ? *m_config : ExecutorConfigFromAttributes();
}

int
FabricCollectiveHelper::ServerLocalSize(const fabricsim::Topology& topo,
                                        const std::vector<uint32_t>& hosts)
{
    const int ranks = int(hosts.size());
    if (ranks == 0)
    {
        return 0;
    }
    for (uint32_t h : hosts)
    {
        if (h >= topo.NumHosts())
        {
            return 0;
        }
    }
    auto group = [&](int r)
    {
        return topo.nodes[topo.hosts[hosts[r]]].group;
    };
    int local = 0;
    while (local < ranks && group(local) == group(0))
    {
        local++;
    }
    if (local < 2 || ranks % local != 0)
    {
        return 0;
    }
    for (int r = 0; r < ranks; ++r)
    {
        const int lead = r - r % local;
        // Same server as its server's first rank, and a different server from the previous one.
        if (group(r) != group(lead) || (lead > 0 && group(lead) == group(lead - local)))
        {
            return 0;
        }
    }
    return local;
}

int
FabricCollectiveHelper::ScaleUpDomainSize(const fabricsim::Topology& topo)
{
    int size = 0;
    for (const auto& n : topo.nodes)
    {
        if (n.kind == fabricsim::NodeKind::Host)
        {
            size = std::max<int>(size, int(n.localIndex) + 1);
        }
    }
    return size;
}

int
FabricCollectiveHelper::GetLocalSize() const
{
    return m_topology ? ServerLocalSize(*m_topology, GetRankHosts()) : 0;
}

fabricsim::Schedule
FabricCollectiveHelper::Generate(fabricsim::CollectiveKind kind,
                                 const std::string& algorithm,
                                 fabricsim::GeneratorOptions opt) const
{
    if (opt.localSize == 0)
    {
        opt.localSize = GetLocalSize();
    }
    return fabricsim::GenerateSchedule(kind, algorithm, int(GetNRanks()), opt);
}

fabricsim::Transport&
FabricCollectiveHelper::GetTransport()
{
    if (m_external)
    {
        return *m_external;
    }
    if (!m_owned)
    {
        fabricsim::PacketTransportOptions po;
        po.m_priority = m_priority;
        po.m_stopPs = m_stop.GetPicoSeconds();
        po.m_stallPs = m_stall.GetPicoSeconds();
        m_owned = std::make_unique<fabricsim::PacketTransport>(
            *m_fabric, m_ccSet ? m_cc : CongestionControlFactory::Get("dcqcn"), po);
    }
    return *m_owned;
}

void
FabricCollectiveHelper::RunEventLoop()
{
    GetTransport().Run();
}

void
FabricCollectiveHelper::SetCollectiveOptions(const fabricsim::CollectiveOptions& options)
{
    m_collectiveOptions = options;
}

fabricsim::ScheduleCollectives&
FabricCollectiveHelper::GetCollectiveApi()
{
    if (!m_api)
    {
        fabricsim::CollectiveOptions copt;
        if (m_collectiveOptions)
        {
            copt = *m_collectiveOptions;
        }
        else if (m_topology)
        {
            copt.m_localSize = ScaleUpDomainSize(*m_topology);
            // "auto" times its candidates on an idle flow-model copy of this fabric.
            copt.m_probe = fabricsim::AnalyticalProbe(*m_topology);
        }
        m_api = std::make_unique<fabricsim::ScheduleCollectives>(
            GetTransport(), GetExecutorConfig(), copt);
    }
    return *m_api;
}

CollectiveRunResult
FabricCollectiveHelper::Run(const fabricsim::Schedule& schedule,
                            uint64_t bytes,
                            int warmup,
                            int iters)
{
    const std::vector<uint32_t> hosts = GetRankHosts();
    if (schedule.m_ranks > int(hosts.size()))
    {
        throw InputError("schedule " + schedule.m_name,
                         "ngpus",
                         "at most the " + std::to_string(hosts.size()) + " ranks mapped to hosts",
                         std::to_string(schedule.m_ranks));
    }
    const uint32_t transportRanks = GetTransport().NumRanks();
    std::vector<bool> used(transportRanks, false);
    for (int i = 0; i < schedule.m_ranks; ++i)
    {
        if (hosts[i] >= transportRanks || used[hosts[i]])
        {
            throw InputError("rank hosts",
                             "rank " + std::to_string(i),
                             "a distinct host below " + std::to_string(transportRanks),
                             "host " + std::to_string(hosts[i]));
        }
        used[hosts[i]] = true;
    }
    // An identity mapping is passed as none, so the executor runs exactly as without one.
    std::vector<uint32_t> rankMap;
    if (!m_rankHosts.empty())
    {
        rankMap.assign(hosts.begin(), hosts.begin() + schedule.m_ranks);
    }
    const fabricsim::ExecutorConfig cfg = GetExecutorConfig();
    fabricsim::Transport& transport = GetTransport();

    CollectiveRunResult r;
    r.complete = true;
    for (int i = 0; i < warmup + iters && r.complete; ++i)
    {
        fabricsim::Executor ex(transport, schedule, cfg, rankMap);
        ex.Start(bytes);
        transport.Run();
        r.last = ex.Result();
        if (!r.last.m_complete)
        {
            r.complete = false;
            r.stuckReport = r.last.StuckReport();
            // The transfers in flight, then the stop report (last, when there is one).
            const std::vector<std::string> lines = transport.StuckReport();
            const size_t undelivered = lines.size() - (transport.StopReport().empty() ? 0 : 1);
            for (size_t k = 0; k < lines.size(); ++k)
            {
                r.stuckReport += (k < undelivered ? "  undelivered: " : "  ") + lines[k] + "\n";
            }
            r.reachedStopTime = transport.ReachedStopTime();
        }
        else if (i >= warmup)
        {
            r.iterationUs.push_back(double(r.last.DurationPs()) * 1e-6);
        }
    }
    double sum = 0;
    for (double t : r.iterationUs)
    {
        sum += t;
    }
    r.timeUs = r.iterationUs.empty() ? 0 : sum / double(r.iterationUs.size());
    r.row = fabricsim::MakeNcclRow(
        schedule.m_collective, schedule.m_ranks, bytes, r.timeUs, -1, schedule.m_root);
    r.row.m_complete = r.complete;
    return r;
}

} // namespace ns3
