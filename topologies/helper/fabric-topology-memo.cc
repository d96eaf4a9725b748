/*
 * The collective memo's scope of a group of hosts (FabricTopologyHelper::GetMemoScope): what
 * the group's traffic can reach, followed along the same route tables the switches forward by.
 */
#include "fabric-topology-helper.h"

#include <set>

namespace ns3
{

MemoScope
FabricTopologyHelper::GetMemoScope(const std::vector<uint32_t>& hosts) const
{
    std::set<uint32_t> switches;
    std::set<uint32_t> links;
    for (uint32_t src : hosts)
    {
        for (uint32_t dst : hosts)
        {
            if (src == dst)
            {
                continue;
            }
            // Every node any equal-cost route src -> dst passes (the reverse direction, which
            // the ACKs take, is the pair dst -> src).
            std::vector<uint32_t> todo{m_topo.hosts.at(src)};
            std::set<uint32_t> seen(todo.begin(), todo.end());
            const uint32_t dstNode = m_topo.hosts.at(dst);
            while (!todo.empty())
            {
                const uint32_t node = todo.back();
                todo.pop_back();
                if (node == dstNode)
                {
                    continue;
                }
                if (m_switches[node])
                {
                    switches.insert(node);
                }
                for (uint16_t port : m_table->NextHops(node, dst))
                {
                    links.insert(m_routing->PortLink(node, port));
                    const uint32_t peer = m_routing->PortPeer(node, port);
                    if (seen.insert(peer).second)
                    {
                        todo.push_back(peer);
                    }
                }
            }
        }
    }
    // A switch's every link: frames on their way into its shared buffer contend with the group's.
    for (uint32_t sw : switches)
    {
        for (uint32_t p = 0; p < m_routing->NumPorts(sw); ++p)
        {
            links.insert(m_routing->PortLink(sw, p));
        }
    }
    MemoScope scope;
    for (uint32_t sw : switches)
    {
        scope.switches.push_back(m_switches[sw]);
    }
    for (uint32_t l : links)
    {
        scope.links.push_back(m_links[l]);
        for (uint32_t end : {m_topo.links[l].a, m_topo.links[l].b})
        {
            if (switches.count(end))
            {
                continue; // visited with its switch
            }
            for (uint32_t p = 0; p < m_routing->NumPorts(end); ++p)
            {
                if (m_routing->PortLink(end, p) == l)
                {
                    scope.devices.push_back(m_ports[end][p]);
                }
            }
        }
    }
    return scope;
}

} // namespace ns3
