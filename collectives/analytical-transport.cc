#include "analytical-transport.h"

#include "input-error.h"
#include "mix64.h"
#include "unit-conversions.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace fabricsim
{

AnalyticalTransport::AnalyticalTransport(const Topology& topo, const AnalyticalOptions& opt)
    : m_topo(topo)
    , m_routing(std::make_unique<Routing>(topo))
    , m_opt(opt)
{
    if (m_opt.m_mtuBytes == 0)
    {
        throw fabricsim::InputError("<analytical transport>", "mtu_bytes", "an MTU > 0", "0");
    }
    m_capacity.resize(m_topo.links.size() * 2);
    for (size_t l = 0; l < m_topo.links.size(); ++l)
    {
        m_capacity[2 * l] = m_capacity[2 * l + 1] = m_topo.links[l].spec.rateBps / 8.0;
    }
    m_residual.assign(m_capacity.size(), 0);
    m_load.assign(m_capacity.size(), 0);
    m_stamp.assign(m_capacity.size(), 0);
    m_users.assign(m_capacity.size(), {});
}

AnalyticalTransport::~AnalyticalTransport() = default;

uint32_t
AnalyticalTransport::NumRanks() const
{
    return m_topo.NumHosts();
}

std::string
AnalyticalTransport::Name() const
{
    return "analytical";
}

int64_t
AnalyticalTransport::NowPs() const
{
    return m_nowPs;
}

void
AnalyticalTransport::Push(int64_t timePs, Callback fn)
{
    m_events.push(Event{timePs, m_seq++, std::move(fn)});
}

void
AnalyticalTransport::Schedule(int64_t delayPs, Callback fn)
{
    Push(m_nowPs + std::max<int64_t>(0, delayPs), std::move(fn));
}

void
AnalyticalTransport::Run()
{
    m_stopped = false;
    while (!m_events.empty())
    {
        if (m_opt.m_stopPs > 0 && m_events.top().m_timePs > m_opt.m_stopPs)
        {
            // As the packet backend's watchdog: time reaches the cap, later events stay queued.
            m_nowPs = std::max(m_nowPs, m_opt.m_stopPs);
            m_stopped = true;
            return;
        }
        Event e = m_events.top();
        m_events.pop();
        m_eventsRun++;
        m_nowPs = e.m_timePs;
        if (e.m_fn)
        {
            e.m_fn();
        }
    }
}

std::string
AnalyticalTransport::StopReport() const
{
    if (!m_stopped)
    {
        return "";
    }
    size_t queued = 0;
    for (const Connection& c : m_conns)
    {
        queued += c.m_queue.size();
    }
    return "stopped at " + std::to_string(double(m_nowPs) * 1e-12) + " s simulated (stop_ns) with "
           + std::to_string(queued) + " message(s) in flight";
}

uint64_t
AnalyticalTransport::WireBytes(uint64_t payload) const
{
    const uint64_t frames
        = std::max<uint64_t>(1, (payload + m_opt.m_mtuBytes - 1) / m_opt.m_mtuBytes);
    return units::CheckedAdd(
        units::CheckedAdd(payload,
                          units::CheckedMul(frames, m_opt.m_frameOverheadBytes, "wire bytes"),
                          "wire bytes"),
        m_opt.m_firstFrameExtraBytes,
        "wire bytes");
}

const AnalyticalTransport::Path&
AnalyticalTransport::PathFor(uint32_t src, uint32_t dst, uint32_t channel)
{
    auto key = std::make_tuple(src, dst, channel);
    auto it = m_paths.find(key);
    if (it != m_paths.end())
    {
        return *it->second;
    }
    auto p = std::make_unique<Path>();
    uint32_t node = m_topo.hosts[src];
    const uint32_t target = m_topo.hosts[dst];
    while (node != target)
    {
        const auto& hops = m_routing->NextHops(node, dst);
        if (hops.empty() || p->m_forward.size() > m_topo.nodes.size())
        {
            throw fabricsim::InputError("<topology>",
                                        "routes",
                                        "a route from host " + std::to_string(src) + " to host "
                                            + std::to_string(dst),
                                        "none");
        }
        // ECMP: a fixed hash of (src, dst, channel, node) picks the next hop, so channels spread
        // over parallel paths as different source ports do in the packet fabric.
        const uint64_t h = Mix64((uint64_t(src) << 40) ^ (uint64_t(dst) << 20) ^ channel
                                 ^ (uint64_t(node) << 52));
        const uint16_t port = hops[h % hops.size()];
        const uint32_t link = m_routing->PortLink(node, port);
        const TopoLink& l = m_topo.links[link];
        const uint32_t dir = l.a == node ? 0 : 1;
        p->m_forward.push_back(2 * link + dir);
        p->m_reverse.push_back(2 * link + 1 - dir);
        p->m_hopBytesPerSecond.push_back(l.spec.rateBps / 8.0);
        p->m_propagationPs += int64_t(l.spec.delayPs);
        node = m_routing->PortPeer(node, port);
    }
    const Path& ref = *p;
    m_paths[key] = std::move(p);
    return ref;
}

int64_t
AnalyticalTransport::LatencyPs(const Path& p, uint64_t payload) const
{
    // Store-and-forward: after the last byte leaves the source, the last frame is serialised
    // again at every later hop.
    const uint64_t mtu = m_opt.m_mtuBytes;
    const uint64_t last = payload == 0 ? 0 : (payload % mtu == 0 ? mtu : payload % mtu);
    const double frame = double(last + m_opt.m_frameOverheadBytes
                                + (payload <= mtu ? m_opt.m_firstFrameExtraBytes : 0));
    double ps = double(p.m_propagationPs);
    for (size_t i = 1; i < p.m_hopBytesPerSecond.size(); ++i)
    {
        ps += frame / p.m_hopBytesPerSecond[i] * 1e12;
    }
    return units::CheckedAdd(
        units::RoundPs(ps, "analytical latency"), m_opt.m_messageOverheadPs, "analytical latency");
}

int64_t
AnalyticalTransport::IdealPs(uint32_t src, uint32_t dst, uint64_t bytes)
{
    if (src == dst)
    {
        return m_opt.m_messageOverheadPs;
    }
    const Path& p = PathFor(src, dst, 0);
    double bottleneck = std::numeric_limits<double>::infinity();
    for (double r : p.m_hopBytesPerSecond)
    {
        bottleneck = std::min(bottleneck, r);
    }
    return units::CheckedAdd(
        units::BytesAtRatePs(double(WireBytes(bytes)), bottleneck, "analytical transfer time"),
        LatencyPs(p, bytes),
        "analytical transfer time");
}

void
AnalyticalTransport::Send(
    uint32_t src, uint32_t dst, uint32_t channel, uint64_t bytes, Callback onDelivered)
{
    if (src >= NumRanks() || dst >= NumRanks())
    {
        throw std::out_of_range("AnalyticalTransport::Send: rank out of range");
    }
    auto key = std::make_tuple(src, dst, channel);
    auto it = m_connIndex.find(key);
    int ci;
    if (it == m_connIndex.end())
    {
        Connection c;
        c.m_src = src;
        c.m_dst = dst;
        c.m_path = src == dst ? nullptr : &PathFor(src, dst, channel);
        m_conns.push_back(std::move(c));
        ci = int(m_conns.size() - 1);
        m_connIndex[key] = ci;
    }
    else
    {
        ci = it->second;
    }
    Connection& c = m_conns[ci];
    if (!c.m_path)
    {
        // Loopback: no link is crossed.
        const int64_t t = std::max(m_nowPs + m_opt.m_messageOverheadPs, c.m_lastDeliveryPs);
        c.m_lastDeliveryPs = t;
        Push(t,
             [this, cb = std::move(onDelivered)]()
             {
                 m_delivered++;
                 if (cb)
                 {
                     cb();
                 }
             });
        return;
    }
    c.m_queue.push_back(Message{std::max<uint64_t>(1, bytes), std::move(onDelivered)});
    if (!c.m_active)
    {
        Activate(ci);
        m_active.push_back(ci);
        RequestUpdate();
    }
}

void
AnalyticalTransport::Activate(int ci)
{
    Connection& c = m_conns[ci];
    const uint64_t payload = c.m_queue.front().m_payload;
    const double wire = double(WireBytes(payload));
    c.m_active = true;
    c.m_remaining = wire;
    c.m_rate = 0;
    c.m_ackCoef = 0;
    if (m_opt.m_ackInterval > 0)
    {
        const uint64_t frames
            = std::max<uint64_t>(1, (payload + m_opt.m_mtuBytes - 1) / m_opt.m_mtuBytes);
        const uint64_t acks = (frames + m_opt.m_ackInterval - 1) / m_opt.m_ackInterval;
        c.m_ackCoef = double(acks * m_opt.m_ackFrameBytes) / wire;
    }
}

void
AnalyticalTransport::RequestUpdate()
{
    // Flows started at the same instant share one recomputation.
    if (!m_updatePending)
    {
        m_updatePending = true;
        Push(m_nowPs,
             [this]()
             {
                 m_updatePending = false;
                 Update();
             });
    }
}

void
AnalyticalTransport::Update()
{
    const double dt = double(m_nowPs - m_lastUpdatePs) * 1e-12;
    m_lastUpdatePs = m_nowPs;
    std::vector<int> still;
    still.reserve(m_active.size());
    for (int ci : m_active)
    {
        Connection& c = m_conns[ci];
        c.m_remaining -= c.m_rate * dt;
        // Done when less than a picosecond of sending (or a micro-byte) is left: rounding.
        if (c.m_remaining > std::max(1e-6, c.m_rate * 1e-12))
        {
            still.push_back(ci);
            continue;
        }
        Message m = std::move(c.m_queue.front());
        c.m_queue.pop_front();
        // FIFO per connection even when a short message's last frame would overtake.
        const int64_t t = std::max(m_nowPs + LatencyPs(*c.m_path, m.m_payload), c.m_lastDeliveryPs);
        c.m_lastDeliveryPs = t;
        Push(t,
             [this, cb = std::move(m.m_onDelivered)]()
             {
                 m_delivered++;
                 if (cb)
                 {
                     cb();
                 }
             });
        c.m_active = false;
        if (!c.m_queue.empty())
        {
            Activate(ci);
            still.push_back(ci);
        }
    }
    m_active.swap(still);
    Reallocate();

    double next = std::numeric_limits<double>::infinity();
    for (int ci : m_active)
    {
        const Connection& c = m_conns[ci];
        if (c.m_rate > 0)
        {
            next = std::min(next, c.m_remaining / c.m_rate);
        }
    }
    if (std::isfinite(next))
    {
        const uint64_t gen = ++m_generation;
        // Coalescing only pays (and only blurs) with many concurrent flows: small cases stay exact.
        const double slack = m_active.size() > 32 ? m_opt.m_completionSlack : 0.0;
        const int64_t delay = std::max<int64_t>(
            1, units::RoundPs(std::ceil(next * (1.0 + slack) * 1e12), "analytical completion"));
        Push(units::CheckedAdd(m_nowPs, delay, "analytical completion"),
             [this, gen]()
             {
                 if (gen == m_generation)
                 {
                     Update();
                 }
             });
    }
}

void
AnalyticalTransport::Reallocate()
{
    // Max-min fairness by progressive filling: all unfixed flows rise together; the resource
    // that saturates first fixes its flows at that level; repeat. A flow loads its forward
    // links with its rate and its reverse links with the ACK share of it.
    m_reallocations++;
    m_epoch++;
    std::vector<uint32_t> touched;
    auto touch = [&](uint32_t r)
    {
        if (m_stamp[r] != m_epoch)
        {
            m_stamp[r] = m_epoch;
            m_residual[r] = m_capacity[r];
            m_load[r] = 0;
            m_users[r].clear();
            touched.push_back(r);
        }
    };
    for (int ci : m_active)
    {
        Connection& c = m_conns[ci];
        c.m_rate = -1; // unfixed
        for (uint32_t r : c.m_path->m_forward)
        {
            touch(r);
            m_load[r] += 1;
            m_users[r].push_back(ci);
        }
        if (c.m_ackCoef > 0)
        {
            for (uint32_t r : c.m_path->m_reverse)
            {
                touch(r);
                m_load[r] += c.m_ackCoef;
                m_users[r].push_back(ci);
            }
        }
    }
    size_t unfixed = m_active.size();
    while (unfixed > 0)
    {
        double level = std::numeric_limits<double>::infinity();
        int best = -1;
        // A resource whose flows are all fixed never loads again in this call: drop it from
        // the scan as it is passed (keeping the order, so ties still go to the first touched).
        size_t kept = 0;
        for (uint32_t r : touched)
        {
            if (m_load[r] > 1e-9)
            {
                touched[kept++] = r;
                const double l = std::max(0.0, m_residual[r]) / m_load[r];
                if (l < level)
                {
                    level = l;
                    best = int(r);
                }
            }
        }
        touched.resize(kept);
        if (best < 0)
        {
            break;
        }
        for (int ci : m_users[best])
        {
            Connection& c = m_conns[ci];
            if (c.m_rate >= 0)
            {
                continue;
            }
            c.m_rate = level;
            unfixed--;
            for (uint32_t r : c.m_path->m_forward)
            {
                m_residual[r] -= level;
                m_load[r] -= 1;
            }
            if (c.m_ackCoef > 0)
            {
                for (uint32_t r : c.m_path->m_reverse)
                {
                    m_residual[r] -= level * c.m_ackCoef;
                    m_load[r] -= c.m_ackCoef;
                }
            }
        }
        m_load[best] = 0;
    }
    for (int ci : m_active)
    {
        m_conns[ci].m_rate = std::max(0.0, m_conns[ci].m_rate);
    }
}

std::function<std::unique_ptr<Transport>()>
AnalyticalProbe(const Topology& topo, const AnalyticalOptions& opt)
{
    auto shared = std::make_shared<const Topology>(topo);
    return [shared, opt]()
    {
        return std::make_unique<AnalyticalTransport>(*shared, opt);
    };
}

} // namespace fabricsim
