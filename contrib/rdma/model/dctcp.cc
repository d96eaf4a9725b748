#include "dctcp.h"

#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/log.h"

#include <algorithm>
#include <cmath>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("Dctcp");
NS_OBJECT_ENSURE_REGISTERED(Dctcp);

TypeId
Dctcp::GetTypeId()
{
    // Defaults: reference sheet "Congestion control", DCTCP (rate-based) row.
    static TypeId tid
        = TypeId("ns3::Dctcp")
              .SetParent<CongestionControl>()
              .SetGroupName("Rdma")
              .AddConstructor<Dctcp>()
              .AddAttribute("G",
                            "Alpha EWMA gain g.",
                            DoubleValue(1.0 / 16),
                            MakeDoubleAccessor(&Dctcp::m_g),
                            MakeDoubleChecker<double>(0, 1))
              .AddAttribute("InitialAlpha",
                            "Alpha at start (1: the first cut halves the rate, as Linux DCTCP).",
                            DoubleValue(1.0),
                            MakeDoubleAccessor(&Dctcp::m_initialAlpha),
                            MakeDoubleChecker<double>(0, 1))
              .AddAttribute("RateAI",
                            "Additive increase per RTT outside CWR.",
                            DataRateValue(DataRate("615Mbps")),
                            MakeDataRateAccessor(&Dctcp::m_rai),
                            MakeDataRateChecker())
              .AddAttribute(
                  "UseWindow",
                  "Also limit in-flight bytes to rate * base RTT (the BDP scaled by rate / "
                  "line rate), which gives the ACK clocking of window-based DCTCP.",
                  BooleanValue(true),
                  MakeBooleanAccessor(&Dctcp::m_useWindow),
                  MakeBooleanChecker())
              .AddAttribute("MinRate",
                            "Lowest rate.",
                            DataRateValue(DataRate("100Mbps")),
                            MakeDataRateAccessor(&Dctcp::m_minRate),
                            MakeDataRateChecker());
    return tid;
}

Dctcp::Dctcp()
    : m_g(1.0 / 16)
    , m_initialAlpha(1.0)
    , m_useWindow(true)
    , m_alpha(1.0)
    , m_rate(0)
    , m_acks(0)
    , m_ecnAcks(0)
    , m_lastUpdateSeq(0)
    , m_cwr(false)
    , m_cwrEndSeq(0)
{
}

void
Dctcp::Init(uint64_t lineRateBps, Time baseRtt, uint32_t mtuBytes)
{
    CongestionControl::Init(lineRateBps, baseRtt, mtuBytes);
    m_minRateBps = m_minRate.GetBitRate();
    m_alpha = m_initialAlpha;
    m_rate = double(lineRateBps);
    m_acks = 0;
    m_ecnAcks = 0;
    m_lastUpdateSeq = 0;
    m_cwr = false;
    m_cwrEndSeq = 0;
    Apply();
}

void
Dctcp::OnAck(const AckSample& ack)
{
    m_acks++;
    if (ack.ecnEcho)
    {
        m_ecnAcks++;
    }
    if (m_cwr && ack.ackedPsn >= m_cwrEndSeq)
    {
        m_cwr = false; // everything sent before the cut is acknowledged
    }
    if (ack.ackedPsn > m_lastUpdateSeq)
    {
        // One RTT of ACKs: fold the marked fraction into alpha.
        m_alpha = (1.0 - m_g) * m_alpha + m_g * double(m_ecnAcks) / double(m_acks);
        m_acks = 0;
        m_ecnAcks = 0;
        m_lastUpdateSeq = ack.sndNxt;
        if (!m_cwr && !ack.ecnEcho)
        {
            m_rate += double(m_rai.GetBitRate());
        }
    }
    if (ack.ecnEcho && !m_cwr)
    {
        m_rate *= 1.0 - m_alpha / 2.0;
        m_cwr = true;
        m_cwrEndSeq = ack.sndNxt;
    }
    Apply();
}

void
Dctcp::Apply()
{
    m_rate = std::min(std::max(m_rate, double(m_minRateBps)), double(m_lineRateBps));
    SetRateFromModel(m_rate);
    if (m_useWindow)
    {
        SetWindowFromModel(std::max(m_rate * m_baseRtt.GetSeconds() / 8.0, double(m_mtu)));
    }
}

void
Dctcp::ProbeRest(MemoProbe& probe, uint32_t psn) const
{
    CongestionControl::ProbeRest(probe, psn);
    probe.MixDouble(m_alpha);
    probe.MixDouble(m_rate);
    probe.Mix(m_acks);
    probe.Mix(m_ecnAcks);
    probe.Mix(uint32_t(m_lastUpdateSeq - psn));
    probe.Mix(m_cwr);
    probe.Mix(uint32_t(m_cwrEndSeq - psn));
}

void
Dctcp::VisitMemo(MemoRecord& r)
{
    CongestionControl::VisitMemo(r);
    r.Last(m_alpha);
    r.Last(m_rate);
    r.Last(m_acks);
    r.Last(m_ecnAcks);
    r.Sum(m_lastUpdateSeq);
    r.Last(m_cwr);
    r.Sum(m_cwrEndSeq);
}

} // namespace ns3
