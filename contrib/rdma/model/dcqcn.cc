#include "dcqcn.h"

#include "ns3/double.h"
#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cmath>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("Dcqcn");
NS_OBJECT_ENSURE_REGISTERED(Dcqcn);

TypeId
Dcqcn::GetTypeId()
{
    // Defaults are the firmware flavour; PaperPreset() overrides them.
    static TypeId tid
        = TypeId("ns3::Dcqcn")
              .SetParent<CongestionControl>()
              .SetGroupName("Rdma")
              .AddConstructor<Dcqcn>()
              .AddAttribute("G",
                            "Alpha EWMA gain g.",
                            DoubleValue(1.0 / 256),
                            MakeDoubleAccessor(&Dcqcn::m_g),
                            MakeDoubleChecker<double>(0, 1))
              .AddAttribute("AlphaPeriod",
                            "Alpha update period.",
                            TimeValue(MicroSeconds(1)),
                            MakeTimeAccessor(&Dcqcn::m_alphaPeriod),
                            MakeTimeChecker(NanoSeconds(1)))
              .AddAttribute("RateDecreasePeriod",
                            "Minimum time between two rate decreases.",
                            TimeValue(MicroSeconds(4)),
                            MakeTimeAccessor(&Dcqcn::m_decreasePeriod),
                            MakeTimeChecker(PicoSeconds(0)))
              .AddAttribute("RateIncreasePeriod",
                            "Rate increase timer.",
                            TimeValue(MicroSeconds(300)),
                            MakeTimeAccessor(&Dcqcn::m_increasePeriod),
                            MakeTimeChecker(NanoSeconds(1)))
              .AddAttribute("ByteCounter",
                            "Bytes per byte-counter increase stage (0 disables the byte counter).",
                            UintegerValue(0),
                            MakeUintegerAccessor(&Dcqcn::m_byteCounter),
                            MakeUintegerChecker<uint64_t>())
              .AddAttribute("FastRecoveryRounds",
                            "F: stages of fast recovery.",
                            UintegerValue(1),
                            MakeUintegerAccessor(&Dcqcn::m_fastRecoveryRounds),
                            MakeUintegerChecker<uint32_t>())
              .AddAttribute("RateAI",
                            "Additive increase step R_AI.",
                            DataRateValue(DataRate("20Mbps")),
                            MakeDataRateAccessor(&Dcqcn::m_rai),
                            MakeDataRateChecker())
              .AddAttribute("RateHAI",
                            "Hyper increase step R_HAI.",
                            DataRateValue(DataRate("200Mbps")),
                            MakeDataRateAccessor(&Dcqcn::m_rhai),
                            MakeDataRateChecker())
              .AddAttribute("MinRate",
                            "Lowest rate.",
                            DataRateValue(DataRate("1000Mbps")),
                            MakeDataRateAccessor(&Dcqcn::m_minRate),
                            MakeDataRateChecker())
              .AddAttribute("InitialAlpha",
                            "Alpha at start.",
                            DoubleValue(1.0),
                            MakeDoubleAccessor(&Dcqcn::m_initialAlpha),
                            MakeDoubleChecker<double>(0, 1));
    return tid;
}

ObjectFactory
Dcqcn::FirmwarePreset()
{
    return ObjectFactory("ns3::Dcqcn");
}

ObjectFactory
Dcqcn::PaperPreset()
{
    ObjectFactory f("ns3::Dcqcn");
    f.Set("G", DoubleValue(1.0 / 256));
    f.Set("AlphaPeriod", TimeValue(MicroSeconds(55)));
    f.Set("RateDecreasePeriod", TimeValue(MicroSeconds(50)));
    f.Set("RateIncreasePeriod", TimeValue(MicroSeconds(55)));
    f.Set("ByteCounter", UintegerValue(10000000));
    f.Set("FastRecoveryRounds", UintegerValue(5));
    f.Set("RateAI", DataRateValue(DataRate("40Mbps")));
    f.Set("RateHAI", DataRateValue(DataRate("400Mbps")));
    return f;
}

Dcqcn::Dcqcn()
    : m_alpha(1.0)
    , m_targetBps(0)
    , m_decreasedOnce(false)
    , m_timerStage(0)
    , m_byteStage(0)
    , m_bytesSinceStage(0)
{
}

void
Dcqcn::DoDispose()
{
    m_increaseEvent.Cancel();
    CongestionControl::DoDispose();
}

void
Dcqcn::Init(uint64_t lineRateBps, Time baseRtt, uint32_t mtuBytes)
{
    CongestionControl::Init(lineRateBps, baseRtt, mtuBytes);
    m_minRateBps = m_minRate.GetBitRate();
    m_alpha = m_initialAlpha;
    m_targetBps = lineRateBps;
    m_alphaUpdated = Simulator::Now();
}

void
Dcqcn::DecayAlpha()
{
    // Each whole alpha period without a CNP: alpha <- (1-g) alpha.
    Time now = Simulator::Now();
    int64_t periods = (now - m_alphaUpdated).GetPicoSeconds() / m_alphaPeriod.GetPicoSeconds();
    if (periods > 0)
    {
        m_alpha *= std::pow(1.0 - m_g, double(periods));
        m_alphaUpdated += m_alphaPeriod * periods;
    }
}

void
Dcqcn::OnCnp()
{
    DecayAlpha();
    // The period holding this CNP: alpha <- (1-g) alpha + g.
    m_alpha = (1.0 - m_g) * m_alpha + m_g;
    m_alphaUpdated = Simulator::Now();
    Time now = Simulator::Now();
    if (m_decreasedOnce && now - m_lastDecrease < m_decreasePeriod)
    {
        return;
    }
    m_decreasedOnce = true;
    m_lastDecrease = now;
    uint64_t rc = GetRateBps();
    m_targetBps = rc;
    SetRateFromModel(double(rc) * (1.0 - m_alpha / 2.0));
    m_timerStage = 0;
    m_byteStage = 0;
    m_bytesSinceStage = 0;
    ArmIncreaseTimer();
}

void
Dcqcn::ArmIncreaseTimer()
{
    m_increaseEvent.Cancel();
    m_increaseEvent.Schedule(m_increasePeriod, &Dcqcn::IncreaseTimer, this);
}

void
Dcqcn::IncreaseTimer()
{
    m_increaseEvent.Ran();
    m_timerStage++;
    Increase();
    if (GetRateBps() < m_lineRateBps)
    {
        m_increaseEvent.Schedule(m_increasePeriod, &Dcqcn::IncreaseTimer, this);
    }
}

void
Dcqcn::OnSend(uint32_t wireBytes)
{
    if (m_byteCounter == 0 || GetRateBps() >= m_lineRateBps)
    {
        return;
    }
    m_bytesSinceStage += wireBytes;
    if (m_bytesSinceStage >= m_byteCounter)
    {
        m_bytesSinceStage -= m_byteCounter;
        m_byteStage++;
        Increase();
    }
}

void
Dcqcn::Increase()
{
    // Stages as in the DCQCN paper: fast recovery while both counters are <= F, hyper increase
    // once both exceed F, additive in between. Timer-only (firmware) mode has no byte counter:
    // it runs F additive rounds after fast recovery before hyper increase.
    uint32_t f = m_fastRecoveryRounds;
    uint32_t hi = m_timerStage;
    uint32_t lo = m_timerStage > f ? m_timerStage - f : 0;
    if (m_byteCounter > 0)
    {
        hi = std::max(m_timerStage, m_byteStage);
        lo = std::min(m_timerStage, m_byteStage);
    }
    uint64_t step = 0; // fast recovery: target unchanged
    if (hi > f && lo > f)
    {
        // hyper increase; a product past 64 bits is past any line rate
        if (__builtin_mul_overflow(m_rhai.GetBitRate(), uint64_t(lo - f), &step))
        {
            step = m_lineRateBps;
        }
    }
    else if (hi > f)
    {
        step = m_rai.GetBitRate(); // additive increase
    }
    // The target never passes the line rate (the sum could wrap for huge steps).
    m_targetBps = step >= m_lineRateBps - std::min(m_targetBps, m_lineRateBps) ? m_lineRateBps
                                                                               : m_targetBps + step;
    // Halfway to the target, rounded up: rounded down, a rate one bit/s below the target
    // would stay there, and the timer would run on for the rest of the run.
    SetRate((GetRateBps() + m_targetBps + 1) / 2);
}

void
Dcqcn::ProbeRest(MemoProbe& probe, uint32_t psn) const
{
    CongestionControl::ProbeRest(probe, psn);
    if (m_increaseEvent.IsPending())
    {
        probe.Block("DCQCN: the rate-increase timer is armed");
    }
    probe.Mix(m_targetBps);
    // Read only when a CNP comes: alpha and its decay phase, the last decrease if recent.
    probe.MixSignalDouble(m_alpha);
    probe.MixSignalSince(m_alphaUpdated);
    const bool recent = m_decreasedOnce && probe.Now() - m_lastDecrease < m_decreasePeriod;
    probe.MixSignal(recent);
    if (recent)
    {
        probe.MixSignalSince(m_lastDecrease);
    }
    probe.MixSignal(m_timerStage);
    probe.MixSignal(m_byteStage);
    probe.MixSignal(m_bytesSinceStage);
}

void
Dcqcn::VisitMemo(MemoRecord& r)
{
    CongestionControl::VisitMemo(r);
    r.Last(m_alpha);
    r.Last(m_targetBps);
    r.LastTime(m_alphaUpdated);
    r.LastTime(m_lastDecrease);
    r.Last(m_decreasedOnce);
    r.Last(m_timerStage);
    r.Last(m_byteStage);
    r.Last(m_bytesSinceStage);
}

} // namespace ns3
