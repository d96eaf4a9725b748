#include "swift.h"

#include "ns3/double.h"
#include "ns3/log.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <cmath>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("Swift");
NS_OBJECT_ENSURE_REGISTERED(Swift);

TypeId
Swift::GetTypeId()
{
    // BaseTarget, Beta, MaxMdf, FsRange: reference sheet "Congestion control", Swift row.
    // FsMinCwnd / FsMaxCwnd: the Swift paper's flow-scaling range. PerHopScaling and
    // AdditiveIncrease: fabricsim's choice (the sheet gives none); see docs/congestion-control.md.
    static TypeId tid
        = TypeId("ns3::Swift")
              .SetParent<CongestionControl>()
              .SetGroupName("Rdma")
              .AddConstructor<Swift>()
              .AddAttribute("BaseTarget",
                            "Target delay of a one-hop path for a large window.",
                            TimeValue(MicroSeconds(25)),
                            MakeTimeAccessor(&Swift::m_baseTarget),
                            MakeTimeChecker(MicroSeconds(0)))
              .AddAttribute("PerHopScaling",
                            "Target delay added per switch hop.",
                            TimeValue(MicroSeconds(1)),
                            MakeTimeAccessor(&Swift::m_perHop),
                            MakeTimeChecker(MicroSeconds(0)))
              .AddAttribute("FsRange",
                            "Largest flow-scaling term, as a multiple of BaseTarget.",
                            DoubleValue(4.0),
                            MakeDoubleAccessor(&Swift::m_fsRange),
                            MakeDoubleChecker<double>(0))
              .AddAttribute("FsMinCwnd",
                            "Window (packets) at which flow scaling reaches FsRange.",
                            DoubleValue(0.1),
                            MakeDoubleAccessor(&Swift::m_fsMinCwnd),
                            MakeDoubleChecker<double>(1e-6))
              .AddAttribute("FsMaxCwnd",
                            "Window (packets) at and above which flow scaling is zero.",
                            DoubleValue(100.0),
                            MakeDoubleAccessor(&Swift::m_fsMaxCwnd),
                            MakeDoubleChecker<double>(1e-6))
              .AddAttribute("AdditiveIncrease",
                            "Additive increase in packets (MTU) per RTT below the target.",
                            DoubleValue(1.0),
                            MakeDoubleAccessor(&Swift::m_ai),
                            MakeDoubleChecker<double>(0))
              .AddAttribute("Beta",
                            "Multiplicative decrease gain on (delay - target) / delay.",
                            DoubleValue(0.8),
                            MakeDoubleAccessor(&Swift::m_beta),
                            MakeDoubleChecker<double>(0, 1))
              .AddAttribute("MaxMdf",
                            "Largest multiplicative decrease per RTT.",
                            DoubleValue(0.4),
                            MakeDoubleAccessor(&Swift::m_maxMdf),
                            MakeDoubleChecker<double>(0, 1))
              .AddAttribute("MinRate",
                            "Lowest rate; the window never drops below MinRate * base RTT.",
                            DataRateValue(DataRate("100Mbps")),
                            MakeDataRateAccessor(&Swift::m_minRate),
                            MakeDataRateChecker());
    return tid;
}

Swift::Swift()
    : m_fsRange(4.0)
    , m_fsMinCwnd(0.1)
    , m_fsMaxCwnd(100.0)
    , m_ai(1.0)
    , m_beta(0.8)
    , m_maxMdf(0.4)
    , m_w(0)
    , m_wMax(0)
    , m_decreased(false)
{
}

void
Swift::Init(uint64_t lineRateBps, Time baseRtt, uint32_t mtuBytes)
{
    CongestionControl::Init(lineRateBps, baseRtt, mtuBytes);
    m_minRateBps = m_minRate.GetBitRate();
    m_wMax = double(lineRateBps) * baseRtt.GetSeconds() / 8.0;
    m_w = m_wMax;
    m_decreased = false;
    m_lastRtt = baseRtt;
    SetWindowFromModel(std::floor(m_w));
}

Time
Swift::TargetDelay(uint32_t hops) const
{
    double range = m_fsRange * m_baseTarget.GetSeconds();
    double a = range / (1.0 / std::sqrt(m_fsMinCwnd) - 1.0 / std::sqrt(m_fsMaxCwnd));
    double b = -a / std::sqrt(m_fsMaxCwnd);
    double cwnd = m_w / double(m_mtu);
    double fs = std::min(std::max(a / std::sqrt(cwnd) + b, 0.0), range);
    return m_baseTarget + m_perHop * int64_t(hops) + Seconds(fs);
}

bool
Swift::CanDecrease(Time rtt) const
{
    return !m_decreased || Simulator::Now() - m_lastDecrease >= rtt;
}

void
Swift::Decrease(double factor)
{
    m_w *= factor;
    m_lastDecrease = Simulator::Now();
    m_decreased = true;
}

void
Swift::OnAck(const AckSample& ack)
{
    m_lastRtt = ack.rtt;
    Time target = TargetDelay(ack.hops);
    if (ack.rtt < target)
    {
        double acked = double(ack.newlyAckedBytes);
        double mtu = double(m_mtu);
        m_w += m_w >= mtu ? m_ai * mtu * acked / m_w : m_ai * acked;
    }
    else if (CanDecrease(ack.rtt))
    {
        double delay = ack.rtt.GetSeconds();
        double excess = (delay - target.GetSeconds()) / delay;
        Decrease(std::max(1.0 - m_beta * excess, 1.0 - m_maxMdf));
    }
    Apply();
}

void
Swift::OnNack()
{
    if (CanDecrease(m_lastRtt))
    {
        Decrease(1.0 - m_maxMdf);
        Apply();
    }
}

void
Swift::OnTimeout()
{
    if (CanDecrease(m_lastRtt))
    {
        Decrease(1.0 - m_maxMdf);
        Apply();
    }
}

void
Swift::Apply()
{
    double wMin = double(m_minRateBps) * m_baseRtt.GetSeconds() / 8.0;
    m_w = std::min(std::max(m_w, wMin), m_wMax);
    SetWindowFromModel(std::ceil(m_w));
    SetRateFromModel(m_w * 8.0 / m_baseRtt.GetSeconds());
}

void
Swift::ProbeRest(MemoProbe& probe, uint32_t psn) const
{
    CongestionControl::ProbeRest(probe, psn);
    probe.MixDouble(m_w);
    probe.MixDouble(m_wMax);
    probe.Mix(m_decreased);
    if (m_decreased)
    {
        probe.MixSince(m_lastDecrease);
    }
    probe.Mix(uint64_t(m_lastRtt.GetPicoSeconds()));
}

void
Swift::VisitMemo(MemoRecord& r)
{
    CongestionControl::VisitMemo(r);
    r.Last(m_w);
    r.Last(m_wMax);
    r.LastTime(m_lastDecrease);
    r.Last(m_decreased);
    int64_t rtt = m_lastRtt.GetPicoSeconds();
    r.Last(rtt);
    m_lastRtt = PicoSeconds(rtt);
}

} // namespace ns3
