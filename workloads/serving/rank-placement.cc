#include "rank-placement.h"

#include "input-error.h"

namespace fabricsim
{

std::vector<uint32_t>
PoolHosts(const PoolSpec& pool,
          const PlacementSpec& placement,
          const std::string& file,
          const std::string& field)
{
    const ParallelismSpec& par = pool.par;
    uint32_t n = par.WorldSize();
    std::vector<uint32_t> hosts = pool.hosts;
    if (hosts.empty())
    {
        uint32_t a = placement.accelsPerServer;
        uint32_t slots = n / par.tp; // TP groups of the pool
        if (placement.tp == TpPlacement::AcrossServers && slots > a)
        {
            throw fabricsim::InputError(file,
                                        field,
                                        "at most accels_per_server (" + std::to_string(a)
                                            + ") TP groups per pool for across_servers placement",
                                        std::to_string(slots) + " TP groups (pp x dp)");
        }
        for (uint32_t i = 0; i < n; ++i)
        {
            uint32_t h = placement.tp == TpPlacement::ScaleUp
                             ? pool.firstHost + i
                             : pool.firstHost + (i % par.tp) * a + i / par.tp;
            hosts.push_back(h);
        }
    }
    if (placement.numHosts > 0)
    {
        for (uint32_t h : hosts)
        {
            if (h >= placement.numHosts)
            {
                throw fabricsim::InputError(file,
                                            field,
                                            "hosts below the topology's "
                                                + std::to_string(placement.numHosts),
                                            "host " + std::to_string(h));
            }
        }
    }
    return hosts;
}

std::vector<EngineLayout>
SplitEngines(const PoolSpec& pool, const std::vector<uint32_t>& hosts)
{
    const ParallelismSpec& par = pool.par;
    uint32_t groups = par.ep > 1 && par.dpAttention ? par.ep / par.tp : 1;
    uint32_t perGroup = par.tp * par.pp;
    std::vector<EngineLayout> out;
    for (uint32_t e = 0; e < par.dp / groups; ++e)
    {
        EngineLayout l;
        l.par = par;
        l.groups = groups;
        l.hosts.assign(hosts.begin() + size_t(e) * groups * perGroup,
                       hosts.begin() + size_t(e + 1) * groups * perGroup);
        out.push_back(std::move(l));
    }
    return out;
}

void
CheckTensorParallelScaleUp(const InferenceScenario& sc, const Topology& topo)
{
    if (sc.hw.scaleUpBwBytesPerSec <= 0 || topo.scaleUpDeclined)
    {
        return;
    }
    // Hosts joined by a scale-up switch: one hop to a switch marked scale_up.
    std::vector<bool> scaleUp(topo.NumHosts(), false);
    std::vector<int64_t> hostOf(topo.nodes.size(), -1);
    for (uint32_t h = 0; h < topo.NumHosts(); ++h)
    {
        hostOf[topo.hosts[h]] = h;
    }
    for (const TopoLink& l : topo.links)
    {
        for (const auto& [end, other] : {std::make_pair(l.a, l.b), std::make_pair(l.b, l.a)})
        {
            if (hostOf[end] >= 0 && topo.nodes[other].kind == NodeKind::Switch
                && topo.nodes[other].scaleUp)
            {
                scaleUp[hostOf[end]] = true;
            }
        }
    }
    for (const PoolSpec* pool : sc.Pools())
    {
        const std::vector<uint32_t> hosts = PoolHosts(*pool, sc.placement, sc.file, "serving");
        const uint32_t tp = pool->par.tp;
        for (size_t g = 0; tp > 1 && g + tp <= hosts.size(); g += tp)
        {
            for (size_t i = g; i < g + tp; ++i)
            {
                for (size_t j = i + 1; j < g + tp; ++j)
                {
                    const uint32_t a = hosts[i];
                    const uint32_t b = hosts[j];
                    if (a >= topo.NumHosts() || b >= topo.NumHosts()
                        || topo.nodes[topo.hosts[a]].group != topo.nodes[topo.hosts[b]].group
                        || (scaleUp[a] && scaleUp[b]))
                    {
                        continue;
                    }
                    throw fabricsim::InputError(
                        sc.file,
                        "topology.scale_up",
                        "a scale-up link block for the servers (TP " + std::to_string(tp)
                            + " puts hosts " + std::to_string(a) + " and " + std::to_string(b)
                            + " of one server in a group and " + sc.hw.name
                            + " has a scale-up link), or \"none\" to run TP over the NICs",
                        "no scale-up link between them");
                }
            }
        }
    }
}

} // namespace fabricsim
