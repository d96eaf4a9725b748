#include "forwarding-loops.h"

#include <algorithm>
#include <set>

namespace fabricsim
{

std::string
ForwardingLoop::Describe(const Topology& topo) const
{
    std::string out;
    for (uint32_t n : nodes)
    {
        out += (out.empty() ? "" : " -> ") + topo.nodes[n].name;
    }
    return out;
}

std::optional<ForwardingLoop>
FindForwardingLoop(const Topology& topo,
                   const Routing& routing,
                   const RouteOverrides& overrides,
                   const std::vector<bool>& linkDown)
{
    std::set<uint32_t> dsts;
    for (const auto& [key, ports] : overrides)
    {
        dsts.insert(key.second);
    }
    const size_t n = topo.nodes.size();
    for (uint32_t d : dsts)
    {
        // The switches a packet for d goes to next from u.
        auto next = [&](uint32_t u)
        {
            std::vector<uint32_t> out;
            auto it = overrides.find({u, d});
            const std::vector<uint16_t>& ports
                = it != overrides.end() ? it->second : routing.NextHops(u, d);
            for (uint16_t p : ports)
            {
                const uint32_t link = routing.PortLink(u, p);
                const uint32_t v = routing.PortPeer(u, p);
                if ((link >= linkDown.size() || !linkDown[link])
                    && topo.nodes[v].kind == NodeKind::Switch)
                {
                    out.push_back(v);
                }
            }
            return out;
        };
        // Depth-first from every overridden switch (0 new, 1 on the path, 2 done).
        std::vector<uint8_t> state(n, 0);
        for (const auto& [key, ports] : overrides)
        {
            if (key.second != d || state[key.first] != 0)
            {
                continue;
            }
            std::vector<std::pair<uint32_t, std::vector<uint32_t>>> stack{
                {key.first, next(key.first)}};
            std::vector<uint32_t> path{key.first};
            state[key.first] = 1;
            while (!stack.empty())
            {
                if (stack.back().second.empty())
                {
                    state[stack.back().first] = 2;
                    stack.pop_back();
                    path.pop_back();
                    continue;
                }
                const uint32_t v = stack.back().second.back();
                stack.back().second.pop_back();
                if (state[v] == 1)
                {
                    ForwardingLoop loop;
                    loop.dstHost = d;
                    loop.nodes.assign(std::find(path.begin(), path.end(), v), path.end());
                    loop.nodes.push_back(v);
                    for (uint32_t u : loop.nodes)
                    {
                        if (overrides.count({u, d}))
                        {
                            loop.route = {u, d};
                            break;
                        }
                    }
                    return loop;
                }
                if (state[v] == 0)
                {
                    state[v] = 1;
                    path.push_back(v);
                    stack.push_back({v, next(v)});
                }
            }
        }
    }
    return std::nullopt;
}

} // namespace fabricsim
