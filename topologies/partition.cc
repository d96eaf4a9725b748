#include "partition.h"

#include "input-error.h"

#include <algorithm>
#include <numeric>

namespace fabricsim
{

namespace
{

/// What a node costs a rank: one per port (each carries frames both ways) plus one.
std::vector<double>
NodeWeights(const Topology& topo)
{
    std::vector<double> w(topo.nodes.size(), 1.0);
    for (const TopoLink& l : topo.links)
    {
        w[l.a] += 1;
        w[l.b] += 1;
    }
    return w;
}

/// Connected components of the nodes not in \p out over the links not in \p cut; each component
/// as its node ids in ascending order, components ordered by their first node.
std::vector<std::vector<uint32_t>>
Components(const Topology& topo, const std::vector<bool>& out, const std::vector<bool>& cut)
{
    const size_t n = topo.nodes.size();
    std::vector<uint32_t> parent(n);
    std::iota(parent.begin(), parent.end(), 0u);
    auto find = [&parent](uint32_t x)
    {
        while (parent[x] != x)
        {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        return x;
    };
    for (size_t l = 0; l < topo.links.size(); ++l)
    {
        const TopoLink& k = topo.links[l];
        if (!cut[l] && !out[k.a] && !out[k.b])
        {
            const uint32_t a = find(k.a);
            const uint32_t b = find(k.b);
            parent[std::max(a, b)] = std::min(a, b);
        }
    }
    std::vector<std::vector<uint32_t>> comps;
    std::vector<int64_t> index(n, -1);
    for (uint32_t v = 0; v < n; ++v)
    {
        if (out[v])
        {
            continue;
        }
        const uint32_t r = find(v);
        if (index[r] < 0)
        {
            index[r] = int64_t(comps.size());
            comps.emplace_back();
        }
        comps[size_t(index[r])].push_back(v);
    }
    return comps;
}

/// Units largest first onto the least loaded rank (ties: the lower rank), then the nodes taken
/// out, one by one in id order, the same way.
Partition
Assign(const Topology& topo,
       uint32_t ranks,
       std::vector<std::vector<uint32_t>> units,
       const std::vector<bool>& out)
{
    const std::vector<double> w = NodeWeights(topo);
    Partition p;
    p.ranks = ranks;
    p.rankOf.assign(topo.nodes.size(), 0);
    std::vector<double> load(ranks, 0.0);
    auto weightOf = [&w](const std::vector<uint32_t>& u)
    {
        double s = 0;
        for (uint32_t v : u)
        {
            s += w[v];
        }
        return s;
    };
    std::stable_sort(units.begin(),
                     units.end(),
                     [&weightOf](const auto& a, const auto& b)
                     { return weightOf(a) > weightOf(b); });
    auto leastLoaded = [&load]()
    {
        return uint32_t(std::min_element(load.begin(), load.end()) - load.begin());
    };
    for (const auto& u : units)
    {
        const uint32_t r = leastLoaded();
        for (uint32_t v : u)
        {
            p.rankOf[v] = r;
        }
        load[r] += weightOf(u);
    }
    for (uint32_t v = 0; v < topo.nodes.size(); ++v)
    {
        if (out[v])
        {
            const uint32_t r = leastLoaded();
            p.rankOf[v] = r;
            load[r] += w[v];
        }
    }
    DescribePartition(topo, p);
    return p;
}

} // namespace

void
DescribePartition(const Topology& topo, Partition& p)
{
    const std::vector<double> w = NodeWeights(topo);
    p.load.assign(p.ranks, 0.0);
    for (size_t v = 0; v < topo.nodes.size(); ++v)
    {
        p.load[p.rankOf[v]] += w[v];
    }
    p.cutLinks = 0;
    p.lookaheadPs = 0;
    for (const TopoLink& l : topo.links)
    {
        if (p.rankOf[l.a] != p.rankOf[l.b])
        {
            ++p.cutLinks;
            p.lookaheadPs
                = p.lookaheadPs == 0 ? l.spec.delayPs : std::min(p.lookaheadPs, l.spec.delayPs);
        }
    }
}

Partition
AutoPartition(const Topology& topo, uint32_t ranks, const std::string& file)
{
    const size_t n = topo.nodes.size();
    const std::vector<bool> none(n, false);
    std::vector<bool> noCut(topo.links.size(), false);
    if (ranks <= 1)
    {
        Partition p;
        p.ranks = 1;
        p.rankOf.assign(n, 0);
        DescribePartition(topo, p);
        return p;
    }
    // Links of the largest delay, when there are shorter ones too (sites joined by long links).
    uint64_t maxDelay = 0;
    uint64_t minDelay = UINT64_MAX;
    for (const TopoLink& l : topo.links)
    {
        maxDelay = std::max(maxDelay, l.spec.delayPs);
        minDelay = std::min(minDelay, l.spec.delayPs);
    }
    if (maxDelay > minDelay)
    {
        std::vector<bool> cut(topo.links.size());
        for (size_t l = 0; l < topo.links.size(); ++l)
        {
            cut[l] = topo.links[l].spec.delayPs == maxDelay;
        }
        auto units = Components(topo, none, cut);
        if (units.size() >= ranks)
        {
            return Assign(topo, ranks, std::move(units), none);
        }
    }
    // By tiers: take out the switches of tier >= t (scale-up ones stay with their servers).
    uint32_t top = 0;
    for (const TopoNode& v : topo.nodes)
    {
        if (v.kind == NodeKind::Switch && !v.scaleUp)
        {
            top = std::max(top, v.tier);
        }
    }
    for (int64_t t = int64_t(top); t >= 0; --t)
    {
        std::vector<bool> out(n, false);
        for (size_t v = 0; v < n; ++v)
        {
            const TopoNode& node = topo.nodes[v];
            out[v] = node.kind == NodeKind::Switch && !node.scaleUp && int64_t(node.tier) >= t;
        }
        auto units = Components(topo, out, noCut);
        if (units.size() >= ranks)
        {
            return Assign(topo, ranks, std::move(units), out);
        }
        if (t == 0)
        {
            throw InputError(file,
                             "--partition",
                             "at most " + std::to_string(units.size())
                                 + " ranks (the servers and hosts that can be simulated apart)",
                             std::to_string(ranks) + " ranks");
        }
    }
    return {}; // not reached: tier 0 either returns or throws
}

Partition
PartitionFromJson(const nlohmann::json& doc,
                  const Topology& topo,
                  uint32_t ranks,
                  const std::string& file)
{
    if (!doc.is_object())
    {
        throw InputError(file, "", "an object naming each node's rank", doc.type_name());
    }
    std::vector<int64_t> rankOf(topo.nodes.size(), -1);
    for (auto it = doc.begin(); it != doc.end(); ++it)
    {
        const uint32_t v = topo.FindNode(it.key());
        if (v == UINT32_MAX)
        {
            throw InputError(file, it.key(), "the name of a node of the topology", it.key());
        }
        const nlohmann::json& r = it.value();
        if (!r.is_number_integer() || r.get<int64_t>() < 0 || r.get<int64_t>() >= int64_t(ranks))
        {
            throw InputError(
                file, it.key(), "a rank from 0 to " + std::to_string(ranks - 1), r.dump());
        }
        rankOf[v] = r.get<int64_t>();
    }
    Partition p;
    p.ranks = ranks;
    for (size_t v = 0; v < rankOf.size(); ++v)
    {
        if (rankOf[v] < 0)
        {
            throw InputError(file,
                             topo.nodes[v].name,
                             "every node of the topology named with its rank",
                             "no rank for " + topo.nodes[v].name);
        }
        p.rankOf.push_back(uint32_t(rankOf[v]));
    }
    DescribePartition(topo, p);
    return p;
}

} // namespace fabricsim
