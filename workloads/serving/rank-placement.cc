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

} // namespace fabricsim
