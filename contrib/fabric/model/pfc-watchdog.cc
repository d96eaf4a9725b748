#include "pfc-watchdog.h"

#include "fabric-switch.h"

#include "ns3/enum.h"
#include "ns3/simulator.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(PfcWatchdog);

TypeId
PfcWatchdog::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::PfcWatchdog")
              .SetParent<Object>()
              .SetGroupName("Fabric")
              .AddConstructor<PfcWatchdog>()
              .AddAttribute("Interval",
                            "Polling interval of the egress queues; 0 disables the watchdog.",
                            TimeValue(Time(0)),
                            MakeTimeAccessor(&PfcWatchdog::m_interval),
                            MakeTimeChecker(Time(0)))
              .AddAttribute("DetectionTime",
                            "A queue holding frames while paused without a break for this long "
                            "triggers the watchdog (commodity switches: 100-200 ms).",
                            TimeValue(MilliSeconds(200)),
                            MakeTimeAccessor(&PfcWatchdog::m_detection),
                            MakeTimeChecker(Time(0)))
              .AddAttribute("RestorationTime",
                            "Normal operation resumes once the peer has not paused the queue for "
                            "this long.",
                            TimeValue(MilliSeconds(200)),
                            MakeTimeAccessor(&PfcWatchdog::m_restoration),
                            MakeTimeChecker(Time(0)))
              .AddAttribute("Action",
                            "What happens to a stuck queue: report it, ignore the peer's pauses, "
                            "or drop its frames (counted as pfc_watchdog drops).",
                            EnumValue(PfcWatchdog::DROP),
                            MakeEnumAccessor(&PfcWatchdog::m_action),
                            MakeEnumChecker(PfcWatchdog::REPORT,
                                            "report",
                                            PfcWatchdog::IGNORE_PAUSE,
                                            "ignore-pause",
                                            PfcWatchdog::DROP,
                                            "drop"))
              .AddTraceSource(
                  "Storm",
                  "A stuck queue was detected (true) or restored (false): port, priority.",
                  MakeTraceSourceAccessor(&PfcWatchdog::m_stormTrace),
                  "ns3::PfcWatchdog::StormTracedCallback");
    return tid;
}

PfcWatchdog::PfcWatchdog()
    : m_interval(0)
    , m_detection(MilliSeconds(200))
    , m_restoration(MilliSeconds(200))
    , m_action(DROP)
{
}

void
PfcWatchdog::DoDispose()
{
    m_poll.Cancel();
    m_switch = nullptr;
    Object::DoDispose();
}

void
PfcWatchdog::Start(FabricSwitch* sw)
{
    m_switch = sw;
    m_state.assign(sw->GetNPorts(), {});
    for (uint32_t p = 0; p < m_state.size(); ++p)
    {
        for (uint8_t c = 0; c < 8; ++c)
        {
            m_state[p][c].port = p;
            m_state[p][c].priority = c;
        }
    }
    if (IsEnabled())
    {
        m_poll = Simulator::Schedule(m_interval, &PfcWatchdog::Poll, this);
    }
}

void
PfcWatchdog::Poll()
{
    Time now = Simulator::Now();
    for (uint32_t p = 0; p < m_state.size(); ++p)
    {
        SwitchPort* port = PeekPointer(m_switch->GetPort(p));
        for (uint8_t c = 0; c < 8; ++c)
        {
            QueueRecord& r = m_state[p][c];
            if (r.active)
            {
                if (!port->PeerPausing(c) && now - port->PeerPauseEnd(c) >= m_restoration)
                {
                    Restore(p, c);
                }
            }
            else if (port->QueueBytes(c) > 0 && port->IsPaused(c)
                     && now - port->PausedSince(c) >= m_detection)
            {
                Trigger(p, c);
            }
        }
    }
    m_poll = Simulator::Schedule(m_interval, &PfcWatchdog::Poll, this);
}

void
PfcWatchdog::Trigger(uint32_t p, uint8_t c)
{
    SwitchPort* port = PeekPointer(m_switch->GetPort(p));
    QueueRecord& r = m_state[p][c];
    if (r.triggers == 0)
    {
        r.firstTrigger = Simulator::Now();
        r.pausedAtFirstTrigger = Simulator::Now() - port->PausedSince(c);
    }
    r.triggers++;
    r.active = true;
    m_stormTrace(p, c, true);
    switch (m_action)
    {
    case IGNORE_PAUSE:
        port->SetPauseIgnored(c, true);
        break;
    case DROP:
        port->SetWatchdogDrop(c, true);
        r.flushedFrames += port->FlushQueue(c, DropReason::PfcWatchdog);
        break;
    case REPORT:
        break;
    }
}

void
PfcWatchdog::Restore(uint32_t p, uint8_t c)
{
    SwitchPort* port = PeekPointer(m_switch->GetPort(p));
    QueueRecord& r = m_state[p][c];
    r.active = false;
    r.restorations++;
    m_stormTrace(p, c, false);
    switch (m_action)
    {
    case IGNORE_PAUSE:
        port->SetPauseIgnored(c, false);
        break;
    case DROP:
        port->SetWatchdogDrop(c, false);
        break;
    case REPORT:
        break;
    }
}

std::vector<PfcWatchdog::QueueRecord>
PfcWatchdog::GetRecords() const
{
    std::vector<QueueRecord> v;
    for (const auto& port : m_state)
    {
        for (const auto& q : port)
        {
            if (q.triggers > 0)
            {
                v.push_back(q);
            }
        }
    }
    return v;
}

uint64_t
PfcWatchdog::GetTriggers() const
{
    uint64_t n = 0;
    for (const auto& port : m_state)
    {
        for (const auto& q : port)
        {
            n += q.triggers;
        }
    }
    return n;
}

} // namespace ns3
