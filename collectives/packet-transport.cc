#include "packet-transport.h"

#include "ns3/simulator.h"

#include <sstream>
#include <stdexcept>

namespace fabricsim
{

using namespace ns3;

PacketTransport::PacketTransport(FabricTopologyHelper& fabric,
                                 const ObjectFactory& cc,
                                 const PacketTransportOptions& opt)
    : m_fabric(fabric)
    , m_cc(cc)
    , m_opt(opt)
{
}

PacketTransport::~PacketTransport()
{
    *m_alive = false;
    m_watchdog.Cancel();
    m_stallCheck.Cancel();
}

uint32_t
PacketTransport::NumRanks() const
{
    return m_fabric.NumHosts();
}

std::string
PacketTransport::Name() const
{
    return "packet";
}

int64_t
PacketTransport::NowPs() const
{
    return Simulator::Now().GetPicoSeconds();
}

void
PacketTransport::Send(
    uint32_t src, uint32_t dst, uint32_t channel, uint64_t bytes, Callback onDelivered)
{
    if (src >= NumRanks() || dst >= NumRanks() || src == dst)
    {
        throw std::out_of_range(
            "PacketTransport::Send: ranks must be distinct hosts of the fabric");
    }
    auto key = std::make_tuple(src, dst, channel);
    auto it = m_connIndex.find(key);
    size_t ci;
    if (it == m_connIndex.end())
    {
        ci = m_conns.size();
        Connection c;
        c.m_src = src;
        c.m_dst = dst;
        c.m_channel = channel;
        // One QP per (src, dst, channel); the source port differs per channel so ECMP hashes
        // channels onto different paths, as NCCL's per-channel connections are.
        const uint16_t sport = uint16_t(m_opt.m_basePort + channel % (65536u - m_opt.m_basePort));
        auto alive = m_alive;
        c.m_qp = m_fabric.Connect(src,
                                  dst,
                                  m_opt.m_priority,
                                  sport,
                                  m_cc,
                                  ns3::Callback<void, uint64_t>(
                                      [this, ci, alive](uint64_t b)
                                      {
                                          if (*alive)
                                          {
                                              Delivered(ci, b);
                                          }
                                      }));
        m_conns.push_back(c);
        m_connIndex[key] = ci;
    }
    else
    {
        ci = it->second;
    }
    m_conns[ci].m_pending.push_back(std::move(onDelivered));
    if (m_inFlight == 0)
    {
        m_lastProgressPs = NowPs(); // a stall is counted from the first message in flight
    }
    m_inFlight++;
    m_conns[ci].m_qp->PostWrite(std::max<uint64_t>(1, bytes));
}

void
PacketTransport::Delivered(size_t ci, uint64_t /* bytes */)
{
    Connection& c = m_conns[ci];
    if (c.m_pending.empty())
    {
        return; // not ours: every message this transport posts has a callback
    }
    Callback cb = std::move(c.m_pending.front());
    c.m_pending.pop_front();
    m_inFlight--;
    m_lastProgressPs = NowPs();
    if (cb)
    {
        cb();
    }
    MaybeStop();
}

void
PacketTransport::Schedule(int64_t delayPs, Callback fn)
{
    m_timers++;
    auto alive = m_alive;
    Simulator::Schedule(PicoSeconds(std::max<int64_t>(0, delayPs)),
                        [this, alive, fn = std::move(fn)]()
                        {
                            if (!*alive)
                            {
                                return;
                            }
                            m_timers--;
                            if (fn)
                            {
                                fn();
                            }
                            MaybeStop();
                        });
}

void
PacketTransport::MaybeStop()
{
    // Nothing in flight and nothing scheduled: no callback can ever arrive, so the run is over
    // (the fabric's own timers, e.g. congestion-control recovery, need not run on).
    if (m_running && m_inFlight == 0 && m_timers == 0)
    {
        Simulator::Stop();
    }
}

void
PacketTransport::ArmStallCheck(int64_t delayPs)
{
    m_stallCheck = Simulator::Schedule(PicoSeconds(delayPs),
                                       [this]()
                                       {
                                           if (m_inFlight == 0)
                                           {
                                               m_lastProgressPs = NowPs();
                                           }
                                           const int64_t quiet = NowPs() - m_lastProgressPs;
                                           if (quiet >= m_opt.m_stallPs)
                                           {
                                               m_watchdogFired = true;
                                               m_stalled = true;
                                               Simulator::Stop();
                                               return;
                                           }
                                           ArmStallCheck(m_opt.m_stallPs - quiet);
                                       });
}

std::string
PacketTransport::WatchdogReport() const
{
    if (!m_watchdogFired)
    {
        return "";
    }
    std::ostringstream os;
    const double at = double(NowPs()) * 1e-12;
    if (m_stalled)
    {
        os << "stopped by the stall watchdog at " << at << " s simulated: " << m_inFlight
           << " message(s) in flight and none delivered for " << double(m_opt.m_stallPs) * 1e-12
           << " s";
    }
    else
    {
        os << "stopped by the watchdog at " << at << " s simulated (stop_ns) with " << m_inFlight
           << " message(s) in flight";
    }
    return os.str();
}

void
PacketTransport::Run()
{
    m_watchdogFired = false;
    m_stalled = false;
    if (m_inFlight == 0 && m_timers == 0)
    {
        return;
    }
    if (m_opt.m_stopPs > 0)
    {
        const int64_t left = m_opt.m_stopPs - NowPs();
        if (left <= 0)
        {
            m_watchdogFired = true;
            return;
        }
        m_watchdog = Simulator::Schedule(PicoSeconds(left),
                                         [this]()
                                         {
                                             m_watchdogFired = true;
                                             Simulator::Stop();
                                         });
    }
    if (m_opt.m_stallPs > 0)
    {
        m_lastProgressPs = NowPs();
        ArmStallCheck(m_opt.m_stallPs);
    }
    m_running = true;
    Simulator::Run();
    m_running = false;
    m_watchdog.Cancel();
    m_stallCheck.Cancel();
}

std::vector<std::string>
PacketTransport::InFlightReport() const
{
    std::vector<std::string> lines;
    for (const Connection& c : m_conns)
    {
        if (c.m_pending.empty())
        {
            continue;
        }
        std::ostringstream os;
        os << "host " << c.m_src << " -> host " << c.m_dst << " channel " << c.m_channel << ": "
           << c.m_pending.size() << " message(s) undelivered, " << c.m_qp->PendingBytes()
           << " bytes unacknowledged";
        lines.push_back(os.str());
    }
    return lines;
}

std::vector<std::string>
PacketTransport::StuckReport() const
{
    std::vector<std::string> lines = InFlightReport();
    const std::string stop = StopReport();
    if (!stop.empty())
    {
        lines.push_back(stop);
    }
    return lines;
}

} // namespace fabricsim
