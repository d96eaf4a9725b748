#include "hpcc.h"

#include "ns3/double.h"
#include "ns3/log.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cmath>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("Hpcc");
NS_OBJECT_ENSURE_REGISTERED(Hpcc);

TypeId
Hpcc::GetTypeId()
{
    // Defaults: reference sheet "Congestion control", HPCC row.
    static TypeId tid
        = TypeId("ns3::Hpcc")
              .SetParent<CongestionControl>()
              .SetGroupName("Rdma")
              .AddConstructor<Hpcc>()
              .AddAttribute("Eta",
                            "Target utilisation eta of the most loaded hop.",
                            DoubleValue(0.95),
                            MakeDoubleAccessor(&Hpcc::m_eta),
                            MakeDoubleChecker<double>(0.01, 1.0))
              .AddAttribute("MaxStage",
                            "Additive-increase stages before a multiplicative step is forced "
                            "(0: every update is multiplicative, as in the HPCC run configs).",
                            UintegerValue(5),
                            MakeUintegerAccessor(&Hpcc::m_maxStage),
                            MakeUintegerChecker<uint32_t>())
              .AddAttribute("RateAI",
                            "Additive increase expressed as a rate: W_AI = RateAI * base RTT.",
                            DataRateValue(DataRate("40Mbps")),
                            MakeDataRateAccessor(&Hpcc::m_rai),
                            MakeDataRateChecker())
              .AddAttribute("MinRate",
                            "Lowest rate; the window never drops below MinRate * base RTT.",
                            DataRateValue(DataRate("100Mbps")),
                            MakeDataRateAccessor(&Hpcc::m_minRate),
                            MakeDataRateChecker());
    return tid;
}

Hpcc::Hpcc()
    : m_eta(0.95)
    , m_maxStage(5)
    , m_u(1.0)
    , m_wc(0)
    , m_wMax(0)
    , m_wAi(0)
    , m_incStage(0)
    , m_lastUpdateSeq(0)
    , m_started(false)
{
}

void
Hpcc::Init(uint64_t lineRateBps, Time baseRtt, uint32_t mtuBytes)
{
    CongestionControl::Init(lineRateBps, baseRtt, mtuBytes);
    m_minRateBps = m_minRate.GetBitRate();
    double t = baseRtt.GetSeconds();
    m_wMax = double(lineRateBps) * t / 8.0;
    m_wc = m_wMax;
    m_wAi = double(m_rai.GetBitRate()) * t / 8.0;
    // Until measured, the path counts as fully used: a new flow does not grow past its BDP.
    m_u = 1.0;
    m_incStage = 0;
    m_lastUpdateSeq = 0;
    m_started = false;
    m_prev.clear();
    SetWindowFromModel(m_wMax);
}

void
Hpcc::OnAck(const AckSample& ack)
{
    if (!ack.intHops || ack.intHops->empty())
    {
        return; // nothing measured (e.g. INT stripped by a non-stamping path)
    }
    const std::vector<IntHop>& hops = *ack.intHops;
    if (!m_started || hops.size() != m_prev.size())
    {
        // First stack, or the path changed: a new baseline, rates need two samples per hop.
        m_prev = hops;
        m_started = true;
        m_lastUpdateSeq = ack.sndNxt;
        return;
    }
    bool commit = ack.ackedPsn > m_lastUpdateSeq;
    if (MeasureInflight(hops))
    {
        double w = ComputeWindow(commit);
        if (commit)
        {
            m_lastUpdateSeq = ack.sndNxt;
        }
        Apply(w);
    }
    m_prev = hops;
}

bool
Hpcc::MeasureInflight(const std::vector<IntHop>& hops)
{
    double tPs = double(m_baseRtt.GetPicoSeconds());
    double tS = m_baseRtt.GetSeconds();
    double uMax = 0;
    double tauPs = 0;
    bool any = false;
    for (size_t i = 0; i < hops.size(); ++i)
    {
        const IntHop& cur = hops[i];
        const IntHop& old = m_prev[i];
        // A hop whose clock or counter did not advance is a different port (re-route) or a
        // reordered sample: it says nothing about utilisation.
        if (cur.tsPs <= old.tsPs || cur.txBytes < old.txBytes || cur.rateBps == 0)
        {
            continue;
        }
        double dtPs = double(cur.tsPs - old.tsPs);
        double txBps = double(cur.txBytes - old.txBytes) * 8.0 / (dtPs * 1e-12);
        double b = double(cur.rateBps);
        double qlen = double(std::min(cur.qlenBytes, old.qlenBytes));
        double u = txBps / b + qlen * 8.0 / (b * tS);
        if (!any || u > uMax)
        {
            uMax = u;
            tauPs = dtPs;
            any = true;
        }
    }
    if (!any)
    {
        return false;
    }
    double w = std::min(tauPs, tPs) / tPs;
    m_u = (1.0 - w) * m_u + w * uMax;
    return true;
}

double
Hpcc::ComputeWindow(bool commit)
{
    double w;
    if (m_u >= m_eta || m_incStage >= m_maxStage)
    {
        // Multiplicative step toward eta; an idle path (U = 0) jumps straight to the BDP.
        w = m_u > 0 ? m_wc / (m_u / m_eta) + m_wAi : m_wMax;
        if (commit)
        {
            m_incStage = 0;
        }
    }
    else
    {
        w = m_wc + m_wAi;
        if (commit)
        {
            m_incStage++;
        }
    }
    double wMin = double(m_minRateBps) * m_baseRtt.GetSeconds() / 8.0;
    w = std::min(std::max(w, wMin), m_wMax);
    if (commit)
    {
        m_wc = w;
    }
    return w;
}

void
Hpcc::Apply(double window)
{
    SetWindowFromModel(window);
    SetRateFromModel(window * 8.0 / m_baseRtt.GetSeconds());
}

void
Hpcc::ProbeRest(MemoProbe& probe, uint32_t psn) const
{
    CongestionControl::ProbeRest(probe, psn);
    if (m_started)
    {
        // Its last INT stack holds switch clocks and port byte counters: no replay matches it.
        probe.Block("HPCC: a per-hop INT sample is held");
    }
    probe.MixDouble(m_u);
    probe.MixDouble(m_wc);
    probe.Mix(m_incStage);
    probe.Mix(uint32_t(m_lastUpdateSeq - psn));
}

void
Hpcc::VisitMemo(MemoRecord& r)
{
    CongestionControl::VisitMemo(r);
    r.Last(m_u);
    r.Last(m_wc);
    r.Last(m_incStage);
    r.Sum(m_lastUpdateSeq);
    r.Unusable(m_started, "HPCC's per-hop INT samples");
}

} // namespace ns3
