#include "nccl-tuner.h"

#include "input-error.h"

#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/object-factory.h"
#include "ns3/string.h"

#include <algorithm>
#include <sstream>

namespace fabricsim
{

double
TunerConfig::StepScale(Protocol p) const
{
    switch (p)
    {
    case Protocol::kLL:
        return llStepScale;
    case Protocol::kLL128:
        return ll128StepScale;
    case Protocol::kSimple:
        break;
    }
    return 1.0;
}

double
TunerConfig::LaunchScale(Protocol p) const
{
    switch (p)
    {
    case Protocol::kLL:
        return llLaunchScale;
    case Protocol::kLL128:
        return ll128LaunchScale;
    case Protocol::kSimple:
        break;
    }
    return 1.0;
}

double
TunerConfig::RateScale(Protocol p, CollectiveKind kind) const
{
    if (p != Protocol::kLL)
    {
        return 1.0;
    }
    // The executor already halves LL's payload rate.
    return 2.0
           * (kind == CollectiveKind::kAllReduce ? llAllReduceBandwidthScale : llBandwidthScale);
}

double
TunerConfig::OwnShareCopyUs(CollectiveKind kind,
                            uint64_t bytes,
                            int ranks,
                            double memoryBytesPerSecond) const
{
    if (!(localCopyEfficiency > 0) || !(memoryBytesPerSecond > 0) || ranks < 2
        || (kind != CollectiveKind::kAllGather && kind != CollectiveKind::kReduceScatter))
    {
        return 0;
    }
    return double(bytes) / double(ranks) / (localCopyEfficiency * memoryBytesPerSecond) * 1e6;
}

std::vector<Protocol>
ParseProtocolList(const std::string& text, const std::string& field)
{
    std::vector<Protocol> out;
    std::stringstream ss(text);
    std::string item;
    while (std::getline(ss, item, ','))
    {
        const std::optional<Protocol> p = ParseProtocol(item);
        if (!p || std::find(out.begin(), out.end(), *p) != out.end())
        {
            throw ns3::InputError(field,
                                  "",
                                  "a comma-separated list of distinct protocols among Simple, "
                                  "LL128, LL",
                                  "\"" + text + "\"");
        }
        out.push_back(*p);
    }
    if (out.empty())
    {
        throw ns3::InputError(field, "", "at least one protocol (Simple, LL128, LL)", "\"\"");
    }
    return out;
}

double
InSwitchAllReduceLinkBytes(uint64_t bytes, int ranks)
{
    return double(bytes) * (1.0 + 1.0 / double(std::max(ranks, 1)));
}

std::map<std::string, double>
CarryAcrossClocks(const std::map<std::string, double>& values, double fromMhz, double toMhz)
{
    std::map<std::string, double> out = values;
    if (!(fromMhz > 0) || !(toMhz > 0))
    {
        return out;
    }
    for (const char* k : {"launch_overhead", "step_latency"})
    {
        auto it = out.find(k);
        if (it != out.end())
        {
            it->second *= fromMhz / toMhz;
        }
    }
    return out;
}

} // namespace fabricsim

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(NcclTuner);

TypeId
NcclTuner::GetTypeId()
{
    const fabricsim::TunerConfig d;
    static TypeId tid
        = TypeId("ns3::NcclTuner")
              .SetParent<Object>()
              .SetGroupName("Fabricsim")
              .AddConstructor<NcclTuner>()
              .AddAttribute("Protocols",
                            "Protocols calibration tries per point, keeping the fastest "
                            "(comma-separated: Simple, LL128, LL)",
                            StringValue("Simple,LL128,LL"),
                            MakeStringAccessor(&NcclTuner::m_protocols),
                            MakeStringChecker())
              .AddAttribute(
                  "LL128StepScale",
                  "Per-step cost of LL128 relative to Simple (NCCL NVLink ring hop latency "
                  "1.9 us / 3.4 us)",
                  DoubleValue(d.ll128StepScale),
                  MakeDoubleAccessor(&NcclTuner::m_ll128StepScale),
                  MakeDoubleChecker<double>(0.0))
              .AddAttribute("LLStepScale",
                            "Per-step cost of LL relative to Simple (NCCL NVLink ring hop latency "
                            "0.6 us / 3.4 us)",
                            DoubleValue(d.llStepScale),
                            MakeDoubleAccessor(&NcclTuner::m_llStepScale),
                            MakeDoubleChecker<double>(0.0))
              .AddAttribute("LL128LaunchScale",
                            "Fixed cost of an LL128 call relative to Simple (NCCL base latency 14 "
                            "us / 8.4 us)",
                            DoubleValue(d.ll128LaunchScale),
                            MakeDoubleAccessor(&NcclTuner::m_ll128LaunchScale),
                            MakeDoubleChecker<double>(0.0))
              .AddAttribute(
                  "LLLaunchScale",
                  "Fixed cost of an LL call relative to Simple (NCCL base latency 6.6 us / 8.4 us)",
                  DoubleValue(d.llLaunchScale),
                  MakeDoubleAccessor(&NcclTuner::m_llLaunchScale),
                  MakeDoubleChecker<double>(0.0))
              .AddAttribute("NvlsLaunchScale",
                            "Fixed cost of an in-switch (NVLS) all-reduce relative to Simple's "
                            "ring (NCCL NVLS NVLink latency 25 us / ring Simple base 8.4 us)",
                            DoubleValue(d.nvlsLaunchScale),
                            MakeDoubleAccessor(&NcclTuner::m_nvlsLaunchScale),
                            MakeDoubleChecker<double>(0.0))
              .AddAttribute("LLBandwidthScale",
                            "LL's bandwidth relative to Simple's (NCCL ring model: 1/3)",
                            DoubleValue(d.llBandwidthScale),
                            MakeDoubleAccessor(&NcclTuner::m_llBandwidthScale),
                            MakeDoubleChecker<double>(1e-3, 1.0))
              .AddAttribute("LLAllReduceBandwidthScale",
                            "LL's all-reduce bandwidth relative to Simple's (NCCL ring model: 1/4)",
                            DoubleValue(d.llAllReduceBandwidthScale),
                            MakeDoubleAccessor(&NcclTuner::m_llAllReduceBandwidthScale),
                            MakeDoubleChecker<double>(1e-3, 1.0))
              .AddAttribute("InNetworkReduction",
                            "The scale-up switch reduces in the network (NVLink SHARP / NVLS): "
                            "all-reduce also tries the in-switch algorithm",
                            BooleanValue(d.inNetworkReduction),
                            MakeBooleanAccessor(&NcclTuner::m_inNetworkReduction),
                            MakeBooleanChecker())
              .AddAttribute("GpuClock",
                            "SM clock of the GPUs in MHz (0 = unknown); fitted launch and step "
                            "latencies carried to another system scale by the clock ratio",
                            DoubleValue(d.gpuClockMhz),
                            MakeDoubleAccessor(&NcclTuner::m_gpuClockMhz),
                            MakeDoubleChecker<double>(0.0, 1e5))
              .AddAttribute("LocalCopyEfficiency",
                            "Rate of the own-share copy of out-of-place all-gather and "
                            "reduce-scatter (S / n, serial to the ring) as a fraction of "
                            "ns3::CollectiveExecutor::MemoryBandwidth; 0 = not charged",
                            DoubleValue(d.localCopyEfficiency),
                            MakeDoubleAccessor(&NcclTuner::m_localCopyEfficiency),
                            MakeDoubleChecker<double>(0.0, 10.0));
    return tid;
}

NcclTuner::NcclTuner()
    : m_protocols("Simple,LL128,LL")
    , m_ll128StepScale(1.9 / 3.4)
    , m_llStepScale(0.6 / 3.4)
    , m_ll128LaunchScale(14.0 / 8.4)
    , m_llLaunchScale(6.6 / 8.4)
    , m_nvlsLaunchScale(25.0 / 8.4)
    , m_llBandwidthScale(1.0 / 3.0)
    , m_llAllReduceBandwidthScale(0.25)
    , m_inNetworkReduction(false)
    , m_gpuClockMhz(0)
    , m_localCopyEfficiency(0)
{
}

fabricsim::TunerConfig
NcclTuner::GetConfig() const
{
    fabricsim::TunerConfig c;
    c.protocols = fabricsim::ParseProtocolList(m_protocols, "ns3::NcclTuner::Protocols");
    c.ll128StepScale = m_ll128StepScale;
    c.llStepScale = m_llStepScale;
    c.ll128LaunchScale = m_ll128LaunchScale;
    c.llLaunchScale = m_llLaunchScale;
    c.nvlsLaunchScale = m_nvlsLaunchScale;
    c.llBandwidthScale = m_llBandwidthScale;
    c.llAllReduceBandwidthScale = m_llAllReduceBandwidthScale;
    c.inNetworkReduction = m_inNetworkReduction;
    c.gpuClockMhz = m_gpuClockMhz;
    c.localCopyEfficiency = m_localCopyEfficiency;
    return c;
}

fabricsim::TunerConfig
TunerConfigFromAttributes()
{
    ObjectFactory f("ns3::NcclTuner");
    return f.Create<NcclTuner>()->GetConfig();
}

} // namespace ns3
