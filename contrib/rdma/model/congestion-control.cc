#include "congestion-control.h"

#include "dcqcn.h"
#include "dctcp.h"
#include "hpcc.h"
#include "input-error.h"
#include "swift.h"
#include "timely.h"
#include "unit-conversions.h"

#include "ns3/data-rate.h"
#include "ns3/log.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("CongestionControl");
NS_OBJECT_ENSURE_REGISTERED(CongestionControl);
NS_OBJECT_ENSURE_REGISTERED(NoCongestionControl);

TypeId
CongestionControl::GetTypeId()
{
    static TypeId tid = TypeId("ns3::CongestionControl")
                            .SetParent<Object>()
                            .SetGroupName("Rdma")
                            .AddTraceSource("Rate",
                                            "Current sending rate in bits/s.",
                                            MakeTraceSourceAccessor(&CongestionControl::m_rateBps),
                                            "ns3::TracedValueCallback::Uint64");
    return tid;
}

CongestionControl::CongestionControl()
    : m_rateBps(0)
{
}

void
CongestionControl::ProbeRest(MemoProbe& probe, uint32_t /* psn */) const
{
    for (char c : Name())
    {
        probe.Mix(uint64_t(uint8_t(c)));
    }
    probe.Mix(m_lineRateBps);
    probe.Mix(m_minRateBps);
    probe.Mix(uint64_t(m_baseRtt.GetPicoSeconds()));
    probe.Mix(m_mtu);
    probe.Mix(m_rateBps);
    probe.Mix(m_windowBytes);
}

void
CongestionControl::VisitMemo(MemoRecord& r)
{
    uint64_t rate = m_rateBps;
    r.Last(rate);
    if (r.GetMode() == MemoRecord::Mode::Apply)
    {
        m_rateBps = rate; // the end state, set as a value: no update to the NIC mid-replay
    }
    r.Last(m_windowBytes);
}

void
CongestionControl::DoDispose()
{
    m_update = Callback<void>();
    Object::DoDispose();
}

void
CongestionControl::Init(uint64_t lineRateBps, Time baseRtt, uint32_t mtuBytes)
{
    m_lineRateBps = lineRateBps;
    m_baseRtt = baseRtt;
    m_mtu = mtuBytes;
    m_rateBps = lineRateBps;
}

void
CongestionControl::SetRate(uint64_t bps)
{
    bps = std::min(std::max(bps, m_minRateBps), m_lineRateBps);
    if (bps != m_rateBps.Get())
    {
        m_rateBps = bps;
        if (!m_update.IsNull())
        {
            m_update();
        }
    }
}

void
CongestionControl::SetRateFromModel(double bps)
{
    if (std::isnan(bps))
    {
        fabricsim::units::ThrowOverflow("congestion-control rate", Name() + " computed NaN bit/s");
    }
    const double lo = double(std::min(m_minRateBps, m_lineRateBps));
    const double hi = double(m_lineRateBps);
    SetRate(uint64_t(std::min(std::max(bps, lo), hi)));
}

void
CongestionControl::SetWindowFromModel(double bytes)
{
    if (std::isnan(bytes))
    {
        fabricsim::units::ThrowOverflow("congestion-control window",
                                        Name() + " computed NaN bytes");
    }
    constexpr double kMax = 9223372036854775808.0; // 2^63
    SetWindow(bytes >= kMax ? uint64_t(1) << 63
                            : std::max<uint64_t>(1, uint64_t(std::llround(std::max(bytes, 0.0)))));
}

void
CongestionControl::SetWindow(uint64_t bytes)
{
    if (bytes != m_windowBytes)
    {
        m_windowBytes = bytes;
        if (!m_update.IsNull())
        {
            m_update();
        }
    }
}

TypeId
NoCongestionControl::GetTypeId()
{
    static TypeId tid = TypeId("ns3::NoCongestionControl")
                            .SetParent<CongestionControl>()
                            .SetGroupName("Rdma")
                            .AddConstructor<NoCongestionControl>();
    return tid;
}

namespace
{

// The registry is configuration (filled before a run, read when QPs are created), not model state.
std::map<std::string, ObjectFactory>&
Registry()
{
    static std::map<std::string, ObjectFactory> reg = []
    {
        std::map<std::string, ObjectFactory> r;
        r["none"] = ObjectFactory("ns3::NoCongestionControl");
        r["dcqcn"] = Dcqcn::FirmwarePreset();
        r["dcqcn-paper"] = Dcqcn::PaperPreset();
        r["hpcc"] = ObjectFactory("ns3::Hpcc");
        r["timely"] = ObjectFactory("ns3::Timely");
        r["dctcp"] = ObjectFactory("ns3::Dctcp");
        r["swift"] = ObjectFactory("ns3::Swift");
        return r;
    }();
    return reg;
}

} // namespace

ObjectFactory
CongestionControlFactory::Get(const std::string& name,
                              const std::string& file,
                              const std::string& field)
{
    auto& reg = Registry();
    auto it = reg.find(name);
    if (it == reg.end())
    {
        std::string valid;
        for (auto& n : Names())
        {
            valid += (valid.empty() ? "" : ", ") + n;
        }
        throw InputError(file, field, "one of: " + valid, "\"" + name + "\"");
    }
    return it->second;
}

void
CongestionControlFactory::Register(const std::string& name, const ObjectFactory& factory)
{
    Registry()[name] = factory;
}

std::vector<std::string>
CongestionControlFactory::Names()
{
    std::vector<std::string> n;
    for (auto& kv : Registry())
    {
        n.push_back(kv.first);
    }
    return n;
}

} // namespace ns3
