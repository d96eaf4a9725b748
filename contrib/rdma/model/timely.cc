#include "timely.h"

#include "ns3/double.h"
#include "ns3/log.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("Timely");
NS_OBJECT_ENSURE_REGISTERED(Timely);

TypeId
Timely::GetTypeId()
{
    // Defaults: reference sheet "Congestion control", TIMELY row.
    static TypeId tid
        = TypeId("ns3::Timely")
              .SetParent<CongestionControl>()
              .SetGroupName("Rdma")
              .AddConstructor<Timely>()
              .AddAttribute("Alpha",
                            "EWMA weight of the newest RTT difference.",
                            DoubleValue(0.875),
                            MakeDoubleAccessor(&Timely::m_alpha),
                            MakeDoubleChecker<double>(0, 1))
              .AddAttribute("Beta",
                            "Multiplicative decrease factor.",
                            DoubleValue(0.8),
                            MakeDoubleAccessor(&Timely::m_beta),
                            MakeDoubleChecker<double>(0, 1))
              .AddAttribute("Tlow",
                            "Below this RTT the rate always grows.",
                            TimeValue(MicroSeconds(50)),
                            MakeTimeAccessor(&Timely::m_tLow),
                            MakeTimeChecker(PicoSeconds(0)))
              .AddAttribute("Thigh",
                            "Above this RTT the rate always drops.",
                            TimeValue(MicroSeconds(500)),
                            MakeTimeAccessor(&Timely::m_tHigh),
                            MakeTimeChecker(PicoSeconds(0)))
              .AddAttribute("MinRtt",
                            "Normalisation of the RTT gradient.",
                            TimeValue(MicroSeconds(20)),
                            MakeTimeAccessor(&Timely::m_minRtt),
                            MakeTimeChecker(NanoSeconds(1)))
              .AddAttribute("Delta",
                            "Additive increase step delta.",
                            DataRateValue(DataRate("100Mbps")),
                            MakeDataRateAccessor(&Timely::m_delta),
                            MakeDataRateChecker())
              .AddAttribute("HaiThreshold",
                            "Updates in a row with a non-positive gradient that start hyper-active "
                            "increase.",
                            UintegerValue(5),
                            MakeUintegerAccessor(&Timely::m_haiThreshold),
                            MakeUintegerChecker<uint32_t>(1))
              .AddAttribute("HaiFactor",
                            "Multiple of delta added per update in hyper-active increase.",
                            UintegerValue(5),
                            MakeUintegerAccessor(&Timely::m_haiFactor),
                            MakeUintegerChecker<uint32_t>(1))
              .AddAttribute("SegmentBytes",
                            "Acknowledged bytes per rate update (the paper's completed segment; 1: "
                            "every ACK). 0: once per RTT, at the first ACK of data sent after the "
                            "previous update, which keeps updates frequent at low rates.",
                            UintegerValue(0),
                            MakeUintegerAccessor(&Timely::m_segmentBytes),
                            MakeUintegerChecker<uint64_t>())
              .AddAttribute("MinRate",
                            "Lowest rate.",
                            DataRateValue(DataRate("100Mbps")),
                            MakeDataRateAccessor(&Timely::m_minRate),
                            MakeDataRateChecker());
    return tid;
}

Timely::Timely()
    : m_alpha(0.875)
    , m_beta(0.8)
    , m_haiThreshold(5)
    , m_haiFactor(5)
    , m_segmentBytes(0)
    , m_rate(0)
    , m_rttDiff(0)
    , m_havePrev(false)
    , m_negCount(0)
    , m_ackedSinceUpdate(0)
    , m_lastUpdateSeq(0)
{
}

void
Timely::Init(uint64_t lineRateBps, Time baseRtt, uint32_t mtuBytes)
{
    CongestionControl::Init(lineRateBps, baseRtt, mtuBytes);
    m_minRateBps = m_minRate.GetBitRate();
    m_rate = double(lineRateBps);
    m_rttDiff = 0;
    m_havePrev = false;
    m_negCount = 0;
    m_ackedSinceUpdate = 0;
    m_lastUpdateSeq = 0;
}

void
Timely::OnAck(const AckSample& ack)
{
    if (ack.newlyAckedBytes == 0)
    {
        return; // duplicate ACK: no completion
    }
    if (m_segmentBytes == 0)
    {
        if (ack.ackedPsn <= m_lastUpdateSeq)
        {
            return; // this RTT's data is still being acknowledged
        }
        m_lastUpdateSeq = ack.sndNxt;
    }
    else
    {
        m_ackedSinceUpdate += ack.newlyAckedBytes;
        if (m_ackedSinceUpdate < m_segmentBytes)
        {
            return; // the segment is not complete yet
        }
        m_ackedSinceUpdate = 0;
    }
    Update(ack.rtt);
}

void
Timely::Update(Time rtt)
{
    if (!m_havePrev)
    {
        // A gradient needs two samples.
        m_prevRtt = rtt;
        m_havePrev = true;
        return;
    }
    double newDiff = (rtt - m_prevRtt).GetSeconds();
    m_prevRtt = rtt;
    m_rttDiff = (1.0 - m_alpha) * m_rttDiff + m_alpha * newDiff;
    double gradient = m_rttDiff / m_minRtt.GetSeconds();
    double delta = double(m_delta.GetBitRate());
    if (rtt < m_tLow)
    {
        m_rate += delta;
    }
    else if (rtt > m_tHigh)
    {
        m_rate *= 1.0 - m_beta * (1.0 - m_tHigh.GetSeconds() / rtt.GetSeconds());
        m_negCount = 0;
    }
    else if (gradient <= 0)
    {
        m_negCount++;
        m_rate += (m_negCount >= m_haiThreshold ? m_haiFactor : 1) * delta;
    }
    else
    {
        m_rate *= 1.0 - m_beta * gradient;
        m_negCount = 0;
    }
    m_rate = std::min(std::max(m_rate, double(m_minRateBps)), double(m_lineRateBps));
    SetRateFromModel(m_rate);
}

void
Timely::ProbeRest(MemoProbe& probe, uint32_t psn) const
{
    CongestionControl::ProbeRest(probe, psn);
    probe.MixDouble(m_rate);
    probe.MixDouble(m_rttDiff);
    probe.Mix(uint64_t(m_prevRtt.GetPicoSeconds()));
    probe.Mix(m_havePrev);
    probe.Mix(m_negCount);
    probe.Mix(m_ackedSinceUpdate);
    probe.Mix(uint32_t(m_lastUpdateSeq - psn));
}

void
Timely::VisitMemo(MemoRecord& r)
{
    CongestionControl::VisitMemo(r);
    r.Last(m_rate);
    r.Last(m_rttDiff);
    int64_t prev = m_prevRtt.GetPicoSeconds();
    r.Last(prev);
    m_prevRtt = PicoSeconds(prev);
    r.Last(m_havePrev);
    r.Last(m_negCount);
    r.Last(m_ackedSinceUpdate);
    r.Sum(m_lastUpdateSeq);
}

} // namespace ns3
