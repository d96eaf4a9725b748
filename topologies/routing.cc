/*
 * Shortest-path ECMP next-hop tables: one BFS per destination group (hosts with identical
 * attachment sets), next-hop port sets deduplicated per node and referenced by uint16 ids.
 */
#include "topology.h"

#include <algorithm>
#include <limits>
#include <map>
#include <stdexcept>
#include <unordered_map>

namespace fabricsim
{

namespace
{

constexpr uint32_t kUnreached = std::numeric_limits<uint32_t>::max();

struct PortSetHash
{
    size_t operator()(const std::vector<uint16_t>& v) const
    {
        uint64_t h = 1469598103934665603ULL; // FNV-1a
        for (uint16_t p : v)
        {
            h = (h ^ p) * 1099511628211ULL;
        }
        return static_cast<size_t>(h);
    }
};

using SetIndex = std::unordered_map<std::vector<uint16_t>, uint16_t, PortSetHash>;

/// Id of `ports` in a node's set table, adding it when new (id 0 is the empty set).
uint16_t
Intern(std::vector<std::vector<uint16_t>>& table,
       SetIndex& index,
       const std::vector<uint16_t>& ports,
       uint32_t node)
{
    if (ports.empty())
    {
        return 0;
    }
    const auto it = index.find(ports);
    if (it != index.end())
    {
        return it->second;
    }
    if (table.size() > std::numeric_limits<uint16_t>::max())
    {
        throw std::runtime_error("Routing: node " + std::to_string(node)
                                 + " has more than 65535 distinct next-hop sets");
    }
    const uint16_t id = static_cast<uint16_t>(table.size());
    table.push_back(ports);
    index.emplace(ports, id);
    return id;
}

} // namespace

Routing::Routing(const Topology& topo, const std::vector<bool>& linkDown)
{
    m_numNodes = static_cast<uint32_t>(topo.nodes.size());
    const uint32_t numHosts = topo.NumHosts();
    m_hostNode = topo.hosts;

    // Ports: the k-th link touching a node is its port k (down links keep their port numbers).
    m_portStart.assign(m_numNodes + 1, 0);
    for (const auto& l : topo.links)
    {
        ++m_portStart[l.a + 1];
        ++m_portStart[l.b + 1];
    }
    for (uint32_t n = 0; n < m_numNodes; ++n)
    {
        if (m_portStart[n + 1] > std::numeric_limits<uint16_t>::max())
        {
            throw std::runtime_error("Routing: node " + topo.nodes[n].name
                                     + " has more than 65535 ports");
        }
        m_portStart[n + 1] += m_portStart[n];
    }
    m_portLink.resize(m_portStart.back());
    m_portPeer.resize(m_portStart.back());
    {
        std::vector<uint32_t> fill(m_portStart.begin(), m_portStart.end() - 1);
        for (uint32_t id = 0; id < topo.links.size(); ++id)
        {
            const auto& l = topo.links[id];
            m_portLink[fill[l.a]] = id;
            m_portPeer[fill[l.a]++] = l.b;
            m_portLink[fill[l.b]] = id;
            m_portPeer[fill[l.b]++] = l.a;
        }
    }
    auto up = [&](uint32_t i)
    {
        const uint32_t link = m_portLink[i];
        return link >= linkDown.size() || !linkDown[link];
    };
    std::vector<bool> isHost(m_numNodes, false);
    for (uint32_t h : m_hostNode)
    {
        isHost[h] = true;
    }

    // Destination groups: hosts with the same set of up neighbours share routes.
    std::map<std::vector<uint32_t>, uint32_t> groupOf;
    std::vector<std::vector<uint32_t>> groupSources;
    m_hostGroup.resize(numHosts);
    for (uint32_t h = 0; h < numHosts; ++h)
    {
        const uint32_t node = m_hostNode[h];
        std::vector<uint32_t> nb;
        for (uint32_t i = m_portStart[node]; i < m_portStart[node + 1]; ++i)
        {
            if (up(i))
            {
                nb.push_back(m_portPeer[i]);
            }
        }
        std::sort(nb.begin(), nb.end());
        nb.erase(std::unique(nb.begin(), nb.end()), nb.end());
        auto it = groupOf.find(nb);
        if (it == groupOf.end())
        {
            it = groupOf.emplace(nb, static_cast<uint32_t>(groupSources.size())).first;
            groupSources.push_back(nb);
        }
        m_hostGroup[h] = it->second;
    }
    m_numGroups = static_cast<uint32_t>(groupSources.size());

    m_sets.assign(m_numNodes, std::vector<std::vector<uint16_t>>(1)); // id 0 = empty set
    std::vector<SetIndex> index(m_numNodes);
    m_table.assign(static_cast<size_t>(m_numGroups) * m_numNodes, 0);

    // Multi-source BFS from the group's attached nodes; hosts are reached but never expanded.
    std::vector<uint32_t> dist(m_numNodes);
    std::vector<uint32_t> queue(m_numNodes);
    std::vector<uint16_t> ports;
    for (uint32_t g = 0; g < m_numGroups; ++g)
    {
        std::fill(dist.begin(), dist.end(), kUnreached);
        size_t head = 0;
        size_t tail = 0;
        for (uint32_t s : groupSources[g])
        {
            dist[s] = 0;
            queue[tail++] = s;
        }
        while (head < tail)
        {
            const uint32_t n = queue[head++];
            if (isHost[n])
            {
                continue;
            }
            for (uint32_t i = m_portStart[n]; i < m_portStart[n + 1]; ++i)
            {
                if (up(i) && dist[m_portPeer[i]] == kUnreached)
                {
                    dist[m_portPeer[i]] = dist[n] + 1;
                    queue[tail++] = m_portPeer[i];
                }
            }
        }
        // Next hops: up ports toward a switch one step closer (attached nodes are handled per
        // destination host below, so their entry here stays empty).
        uint16_t* row = &m_table[static_cast<size_t>(g) * m_numNodes];
        for (uint32_t n = 0; n < m_numNodes; ++n)
        {
            if (dist[n] == kUnreached || dist[n] == 0)
            {
                continue;
            }
            ports.clear();
            for (uint32_t i = m_portStart[n]; i < m_portStart[n + 1]; ++i)
            {
                const uint32_t peer = m_portPeer[i];
                if (up(i) && !isHost[peer] && dist[peer] + 1 == dist[n])
                {
                    ports.push_back(static_cast<uint16_t>(i - m_portStart[n]));
                }
            }
            row[n] = Intern(m_sets[n], index[n], ports, n);
        }
    }

    // Attached nodes: their next hops toward a host are their up ports to that host.
    m_attachStart.assign(numHosts + 1, 0);
    for (uint32_t h = 0; h < numHosts; ++h)
    {
        const uint32_t dst = m_hostNode[h];
        for (uint32_t s : groupSources[m_hostGroup[h]])
        {
            ports.clear();
            for (uint32_t i = m_portStart[s]; i < m_portStart[s + 1]; ++i)
            {
                if (up(i) && m_portPeer[i] == dst)
                {
                    ports.push_back(static_cast<uint16_t>(i - m_portStart[s]));
                }
            }
            m_attach.push_back(Attach{s, Intern(m_sets[s], index[s], ports, s)});
        }
        m_attachStart[h + 1] = static_cast<uint32_t>(m_attach.size());
    }

    // Reachability: every host has a route (or a direct link) toward every other host.
    std::vector<uint32_t> groupSize(m_numGroups, 0);
    for (uint32_t g : m_hostGroup)
    {
        ++groupSize[g];
    }
    for (uint32_t g = 0; g < m_numGroups && m_allReachable; ++g)
    {
        const auto& src = groupSources[g];
        for (uint32_t x = 0; x < numHosts && m_allReachable; ++x)
        {
            const uint32_t node = m_hostNode[x];
            if (m_hostGroup[x] == g && groupSize[g] == 1)
            {
                continue; // the only destination of the group is x itself
            }
            const bool attached = std::binary_search(src.begin(), src.end(), node);
            m_allReachable = attached || m_table[static_cast<size_t>(g) * m_numNodes + node] != 0;
        }
    }
}

const std::vector<uint16_t>&
Routing::NextHops(uint32_t node, uint32_t dstHost) const
{
    if (m_hostNode.at(dstHost) == node)
    {
        return m_sets.at(node)[0];
    }
    for (uint32_t i = m_attachStart[dstHost]; i < m_attachStart[dstHost + 1]; ++i)
    {
        if (m_attach[i].node == node)
        {
            return m_sets[node][m_attach[i].set];
        }
    }
    return m_sets.at(node)[m_table[static_cast<size_t>(m_hostGroup[dstHost]) * m_numNodes + node]];
}

uint32_t
Routing::NumPorts(uint32_t node) const
{
    return m_portStart.at(node + 1) - m_portStart[node];
}

uint32_t
Routing::PortLink(uint32_t node, uint32_t port) const
{
    return m_portLink.at(m_portStart.at(node) + port);
}

uint32_t
Routing::PortPeer(uint32_t node, uint32_t port) const
{
    return m_portPeer.at(m_portStart.at(node) + port);
}

std::vector<uint32_t>
Routing::Path(uint32_t srcHost, uint32_t dstHost) const
{
    std::vector<uint32_t> path;
    uint32_t node = m_hostNode.at(srcHost);
    const uint32_t dst = m_hostNode.at(dstHost);
    // Every step strictly shortens the distance, so the walk ends within m_numNodes steps.
    while (node != dst)
    {
        const auto& hops = NextHops(node, dstHost);
        if (hops.empty() || path.size() > m_numNodes)
        {
            return {};
        }
        path.push_back(PortLink(node, hops[0]));
        node = PortPeer(node, hops[0]);
    }
    return path;
}

uint32_t
Routing::HopCount(uint32_t srcHost, uint32_t dstHost) const
{
    if (srcHost == dstHost)
    {
        return 0;
    }
    const auto path = Path(srcHost, dstHost);
    return path.empty() ? std::numeric_limits<uint32_t>::max() : static_cast<uint32_t>(path.size());
}

bool
Routing::AllReachable() const
{
    return m_allReachable;
}

} // namespace fabricsim
