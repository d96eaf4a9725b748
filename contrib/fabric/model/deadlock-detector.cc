#include "deadlock-detector.h"

#include "ns3/fabric-channel.h"
#include "ns3/keyed-event.h"
#include "ns3/node.h"
#include "ns3/rdma-nic.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <tuple>
#include <unordered_map>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(DeadlockDetector);

namespace
{

/// A periodic check's decision: after every other event of its picosecond but the end of a
/// run (run-end.h), so that every rank has the snapshots of the others by then.
class DecisionEvent final : public KeyedEventImpl
{
  public:
    DecisionEvent(DeadlockDetector* detector, int64_t ps, void (DeadlockDetector::*decide)(int64_t))
        : KeyedEventImpl((uint64_t(1) << 63) - 2)
        , m_detector(detector)
        , m_ps(ps)
        , m_decide(decide)
    {
    }

  private:
    void Notify() override
    {
        (m_detector->*m_decide)(m_ps);
    }

    DeadlockDetector* m_detector;
    int64_t m_ps;
    void (DeadlockDetector::*m_decide)(int64_t);
};

} // namespace

TypeId
DeadlockDetector::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::DeadlockDetector")
              .SetParent<Object>()
              .SetGroupName("Fabric")
              .AddConstructor<DeadlockDetector>()
              .AddAttribute("CheckInterval",
                            "Time between two checks; a cycle must be seen by two checks in a row. "
                            "0 disables the detector.",
                            TimeValue(MicroSeconds(100)),
                            MakeTimeAccessor(&DeadlockDetector::m_interval),
                            MakeTimeChecker(Time(0)))
              .AddAttribute(
                  "StallTime",
                  "Report a stall when paused queues hold frames and no frame (PFC frames "
                  "aside) was transmitted anywhere for this long. 0 disables it.",
                  TimeValue(MilliSeconds(1)),
                  MakeTimeAccessor(&DeadlockDetector::m_stallTime),
                  MakeTimeChecker(Time(0)))
              .AddTraceSource("Deadlock",
                              "A deadlock (cycle of paused queues) or a stall was confirmed.",
                              MakeTraceSourceAccessor(&DeadlockDetector::m_trace),
                              "ns3::DeadlockDetector::DeadlockTracedCallback");
    return tid;
}

DeadlockDetector::DeadlockDetector()
    : m_interval(MicroSeconds(100))
    , m_stallTime(MilliSeconds(1))
{
}

void
DeadlockDetector::DoDispose()
{
    m_event.Cancel();
    m_switches.clear();
    m_endpoints.clear();
    Object::DoDispose();
}

void
DeadlockDetector::Install(const std::vector<Ptr<FabricSwitch>>& switches,
                          const std::vector<Ptr<FabricNetDevice>>& endpoints)
{
    m_switches = switches;
    m_endpoints = endpoints;
    std::unordered_map<const FabricSwitch*, int32_t> index;
    uint32_t ports = 0;
    m_portBase.clear();
    for (uint32_t s = 0; s < m_switches.size(); ++s)
    {
        index[PeekPointer(m_switches[s])] = int32_t(s);
        m_switchOf[m_switches[s]->GetTopologyId()] = s;
        m_portBase.push_back(ports);
        ports += m_switches[s]->GetNPorts();
    }
    m_peers.assign(ports, PortPeer());
    m_vertex.assign(size_t(ports) * 8, -1);
    for (uint32_t s = 0; s < m_switches.size(); ++s)
    {
        for (uint32_t p = 0; p < m_switches[s]->GetNPorts(); ++p)
        {
            Ptr<SwitchPort> port = m_switches[s]->GetPort(p);
            Ptr<FabricChannel> ch = port->GetFabricChannel();
            Ptr<FabricNetDevice> far = ch ? ch->GetPeer(PeekPointer(port)) : nullptr;
            PortPeer& pp = m_peers[m_portBase[s] + p];
            if (auto sp = DynamicCast<SwitchPort>(far))
            {
                auto it = index.find(sp->GetSwitch());
                pp.sw = it == index.end() ? -1 : it->second;
                pp.port = sp->GetPortIndex();
                pp.node = sp->GetSwitch()->GetTopologyId();
            }
            else if (auto nic = DynamicCast<RdmaNic>(far))
            {
                pp.node = nic->GetHostIndex();
            }
        }
    }
    if (m_interval.IsStrictlyPositive())
    {
        m_event = Simulator::Schedule(m_interval, &DeadlockDetector::Periodic, this);
    }
}

void
DeadlockDetector::Periodic()
{
    if (m_delay.IsZero() && m_ranks == 1)
    {
        Check();
    }
    else
    {
        DeadlockSnapshot snap = TakeSnapshot();
        if (m_send)
        {
            m_send(snap);
        }
        const int64_t ps = snap.at.GetTimeStep();
        m_waiting[ps].push_back(std::move(snap));
        Simulator::Schedule(
            m_delay,
            Ptr<EventImpl>(new DecisionEvent(this, ps, &DeadlockDetector::DecideWaiting), false));
    }
    m_event = Simulator::Schedule(m_interval, &DeadlockDetector::Periodic, this);
}

void
DeadlockDetector::SetDecision(Time delay,
                              uint32_t ranks,
                              std::function<void(const DeadlockSnapshot&)> send)
{
    m_delay = delay;
    m_ranks = ranks;
    m_send = std::move(send);
}

void
DeadlockDetector::AddSnapshot(DeadlockSnapshot snapshot)
{
    const int64_t ps = snapshot.at.GetTimeStep();
    m_waiting[ps].push_back(std::move(snapshot));
}

void
DeadlockDetector::DecideWaiting(int64_t ps)
{
    auto it = m_waiting.find(ps);
    NS_ABORT_MSG_IF(it == m_waiting.end() || it->second.size() != m_ranks,
                    "DeadlockDetector: the check of "
                        << ps << " ps has " << (it == m_waiting.end() ? 0 : it->second.size())
                        << " snapshots of " << m_ranks);
    std::vector<DeadlockSnapshot> parts = std::move(it->second);
    m_waiting.erase(it);
    Decide(std::move(parts));
}

bool
DeadlockDetector::IsLocal(uint32_t s) const
{
    const FabricSwitch& sw = *m_switches[s];
    return sw.GetNPorts() == 0
           || sw.GetPort(0)->GetNode()->GetSystemId() == Simulator::GetSystemId();
}

void
DeadlockDetector::CollectPaused()
{
    for (const QueueKey& k : m_paused)
    {
        m_vertex[(m_portBase[k.sw] + k.port) * 8 + k.prio] = -1;
    }
    m_paused.clear();
    for (uint32_t s = 0; s < m_switches.size(); ++s)
    {
        if (!IsLocal(s))
        {
            continue;
        }
        const FabricSwitch& sw = *m_switches[s];
        for (uint32_t p = 0; p < sw.GetNPorts(); ++p)
        {
            const SwitchPort& port = *sw.GetPort(p);
            if (port.TotalQueueBytes() == 0)
            {
                continue;
            }
            for (uint8_t c = 0; c < 8; ++c)
            {
                if (port.QueueBytes(c) > 0 && port.IsPaused(c))
                {
                    m_vertex[(m_portBase[s] + p) * 8 + c] = int32_t(m_paused.size());
                    m_paused.push_back(QueueKey{s, p, c});
                }
            }
        }
    }
}

bool
DeadlockDetector::StuckTargets(uint32_t b,
                               uint32_t q,
                               uint8_t c,
                               std::vector<uint32_t>& targets) const
{
    const FabricSwitch& sw = *m_switches[b];
    for (uint32_t p = 0; p < sw.GetNPorts(); ++p)
    {
        const auto& frames = sw.GetPort(p)->Queue(c);
        bool fromQ = std::any_of(frames.begin(),
                                 frames.end(),
                                 [q](const FabricPacket* f) { return f->ingressPort == q; });
        if (!fromQ)
        {
            continue;
        }
        int32_t v = m_vertex[(m_portBase[b] + p) * 8 + c];
        if (v < 0)
        {
            return false; // these frames drain, and XON follows once enough have left
        }
        targets.push_back(uint32_t(v));
    }
    return true;
}

uint64_t
DeadlockDetector::PausingKey(uint32_t sw, uint32_t port, uint8_t prio) const
{
    return (uint64_t(m_portBase[sw] + port) << 3) | prio;
}

std::vector<uint32_t>
DeadlockDetector::FindCycle(
    const std::unordered_map<uint64_t, const DeadlockSnapshot::Pausing*>& pausing) const
{
    size_t n = m_paused.size();
    std::vector<std::vector<uint32_t>> adj(n);
    for (uint32_t i = 0; i < n; ++i)
    {
        const QueueKey& k = m_paused[i];
        const PortPeer& peer = m_peers[m_portBase[k.sw] + k.port];
        if (peer.sw < 0)
        {
            continue;
        }
        auto it = pausing.find(PausingKey(uint32_t(peer.sw), peer.port, k.prio));
        if (it == pausing.end() || it->second->drains)
        {
            continue; // not paused by the peer, or its frames drain and XON follows
        }
        for (uint32_t p : it->second->waitPorts)
        {
            const int32_t v = m_vertex[(m_portBase[peer.sw] + p) * 8 + k.prio];
            NS_ABORT_MSG_IF(v < 0, "DeadlockDetector: a wait on a queue no snapshot has");
            adj[i].push_back(uint32_t(v));
        }
    }
    // Depth-first search; an edge back to a vertex on the stack closes a cycle.
    std::vector<uint8_t> color(n, 0); // 0 unseen, 1 on the stack, 2 done
    std::vector<std::pair<uint32_t, size_t>> stack;
    for (uint32_t s = 0; s < n; ++s)
    {
        if (color[s] != 0)
        {
            continue;
        }
        color[s] = 1;
        stack.emplace_back(s, 0);
        while (!stack.empty())
        {
            uint32_t v = stack.back().first;
            size_t& e = stack.back().second;
            if (e == adj[v].size())
            {
                color[v] = 2;
                stack.pop_back();
                continue;
            }
            uint32_t w = adj[v][e++];
            if (color[w] == 1)
            {
                std::vector<uint32_t> cycle;
                auto it = std::find_if(
                    stack.begin(), stack.end(), [w](const auto& x) { return x.first == w; });
                for (; it != stack.end(); ++it)
                {
                    cycle.push_back(it->first);
                }
                return cycle;
            }
            if (color[w] == 0)
            {
                color[w] = 1;
                stack.emplace_back(w, 0);
            }
        }
    }
    return {};
}

uint64_t
DeadlockDetector::DataFramesSent() const
{
    // A frame still being serialised is progress too (a slow link may take longer than a check).
    uint64_t n = 0;
    auto add = [&n](const FabricNetDevice& d)
    {
        const FabricDeviceStats& st = d.GetStats();
        n += st.txFrames - st.txPfcFrames + (d.IsBusy() ? 1 : 0);
    };
    for (uint32_t s = 0; s < m_switches.size(); ++s)
    {
        if (!IsLocal(s))
        {
            continue;
        }
        for (uint32_t p = 0; p < m_switches[s]->GetNPorts(); ++p)
        {
            add(*m_switches[s]->GetPort(p));
        }
    }
    for (const auto& d : m_endpoints)
    {
        if (d->GetNode()->GetSystemId() == Simulator::GetSystemId())
        {
            add(*d);
        }
    }
    return n;
}

DeadlockHop
DeadlockDetector::Describe(const QueueKey& k) const
{
    const SwitchPort& port = *m_switches[k.sw]->GetPort(k.port);
    const PortPeer& peer = m_peers[m_portBase[k.sw] + k.port];
    DeadlockHop h;
    h.node = m_switches[k.sw]->GetTopologyId();
    h.port = k.port;
    h.priority = k.prio;
    h.peerNode = peer.node;
    h.peerPort = peer.port;
    h.peerIsSwitch = peer.sw >= 0;
    h.pausedFor = Simulator::Now() - port.PausedSince(k.prio);
    h.queuedBytes = port.QueueBytes(k.prio);
    h.queuedFrames = port.Queue(k.prio).size();
    return h;
}

void
DeadlockDetector::Report(DeadlockReport r)
{
    m_reported = true;
    m_reports.push_back(r);
    m_trace(m_reports.back());
}

void
DeadlockDetector::Check()
{
    Decide({TakeSnapshot()});
}

DeadlockSnapshot
DeadlockDetector::TakeSnapshot()
{
    DeadlockSnapshot snap;
    snap.at = Simulator::Now();
    CollectPaused();
    for (const QueueKey& k : m_paused)
    {
        snap.paused.push_back(Describe(k));
    }
    for (uint32_t b = 0; b < m_switches.size(); ++b)
    {
        if (!IsLocal(b))
        {
            continue;
        }
        const FabricSwitch& sw = *m_switches[b];
        for (uint32_t q = 0; q < sw.GetNPorts(); ++q)
        {
            for (uint8_t c = 0; c < 8; ++c)
            {
                if (!sw.GetPort(q)->IsPausingPeer(c))
                {
                    continue;
                }
                DeadlockSnapshot::Pausing e;
                e.node = sw.GetTopologyId();
                e.port = q;
                e.priority = c;
                std::vector<uint32_t> targets;
                e.drains = !StuckTargets(b, q, c, targets);
                for (uint32_t v : targets)
                {
                    e.waitPorts.push_back(m_paused[v].port);
                }
                snap.pausing.push_back(std::move(e));
            }
        }
    }
    snap.sent = DataFramesSent();
    return snap;
}

void
DeadlockDetector::Decide(std::vector<DeadlockSnapshot> parts)
{
    const Time now = parts.front().at;
    // Every rank's paused queues, in switch, port, class order (the order one process finds).
    for (const QueueKey& k : m_paused)
    {
        m_vertex[(m_portBase[k.sw] + k.port) * 8 + k.prio] = -1;
    }
    std::vector<std::pair<QueueKey, DeadlockHop>> paused;
    std::unordered_map<uint64_t, const DeadlockSnapshot::Pausing*> pausing;
    uint64_t sent = 0;
    for (const DeadlockSnapshot& part : parts)
    {
        NS_ABORT_MSG_IF(part.at != now, "DeadlockDetector: snapshots of different times");
        for (const DeadlockHop& h : part.paused)
        {
            paused.emplace_back(QueueKey{m_switchOf.at(h.node), h.port, h.priority}, h);
        }
        for (const auto& e : part.pausing)
        {
            pausing[PausingKey(m_switchOf.at(e.node), e.port, e.priority)] = &e;
        }
        sent += part.sent;
    }
    std::sort(paused.begin(),
              paused.end(),
              [](const auto& a, const auto& b)
              {
                  return std::tie(a.first.sw, a.first.port, a.first.prio)
                         < std::tie(b.first.sw, b.first.port, b.first.prio);
              });
    m_paused.clear();
    m_pausedHops.clear();
    for (const auto& [k, h] : paused)
    {
        m_vertex[(m_portBase[k.sw] + k.port) * 8 + k.prio] = int32_t(m_paused.size());
        m_paused.push_back(k);
        m_pausedHops.push_back(h);
    }
    if (m_paused.empty())
    {
        m_candidate.clear();
        m_haveBaseline = false;
        m_stalledFor = Time(0);
        m_reported = false;
        return;
    }
    if (m_haveBaseline && sent == m_lastSent)
    {
        m_stalledFor += now - m_lastCheck;
    }
    else
    {
        m_stalledFor = Time(0);
    }
    m_haveBaseline = true;
    m_lastSent = sent;
    m_lastCheck = now;

    std::vector<uint32_t> cycle = FindCycle(pausing);
    if (!cycle.empty())
    {
        std::vector<QueueKey> keys;
        for (uint32_t v : cycle)
        {
            keys.push_back(m_paused[v]);
        }
        // Confirmed when the previous check saw the same queues (a cycle that persists).
        bool confirmed
            = keys.size() == m_candidate.size()
              && std::all_of(keys.begin(),
                             keys.end(),
                             [this](const QueueKey& k) {
                                 return std::find(m_candidate.begin(), m_candidate.end(), k)
                                        != m_candidate.end();
                             });
        m_candidate = keys;
        if (confirmed && !m_reported)
        {
            DeadlockReport r;
            r.cycle = true;
            r.time = now;
            r.stalledFor = m_stalledFor;
            for (uint32_t v : cycle)
            {
                r.hops.push_back(m_pausedHops[v]);
            }
            Report(r);
        }
        return;
    }
    m_candidate.clear();
    if (m_stallTime.IsStrictlyPositive() && m_stalledFor >= m_stallTime)
    {
        if (!m_reported)
        {
            DeadlockReport r;
            r.cycle = false;
            r.time = now;
            r.stalledFor = m_stalledFor;
            r.hops = m_pausedHops;
            Report(r);
        }
    }
    else if (m_stalledFor.IsZero())
    {
        m_reported = false;
    }
}

} // namespace ns3
