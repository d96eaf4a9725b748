#include "nccl-tuner-attributes.h"

#include "input-error.h"

#include "ns3/boolean.h"
#include "ns3/data-rate.h"
#include "ns3/double.h"
#include "ns3/object-factory.h"
#include "ns3/string.h"

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
                            "Fixed cost of an LL128 call relative to Simple; 0 = NCCL's ring "
                            "latency model for the collective and GPU count (base 14 / 8.4 us, "
                            "per NVLink step 1.9 / 3.4 us)",
                            DoubleValue(d.ll128LaunchScale),
                            MakeDoubleAccessor(&NcclTuner::m_ll128LaunchScale),
                            MakeDoubleChecker<double>(0.0))
              .AddAttribute(
                  "LLLaunchScale",
                  "Fixed cost of an LL call relative to Simple; 0 = NCCL's ring latency model for "
                  "the collective and GPU count (base 6.6 / 8.4 us, per NVLink step 0.6 / 3.4 us)",
                  DoubleValue(d.llLaunchScale),
                  MakeDoubleAccessor(&NcclTuner::m_llLaunchScale),
                  MakeDoubleChecker<double>(0.0))
              .AddAttribute("NvlsLaunchScale",
                            "Fixed cost of an in-switch (NVLS) all-reduce relative to Simple's "
                            "ring (NCCL NVLS NVLink latency 25 us / ring Simple base 8.4 us); 0 = "
                            "over NCCL's whole Simple ring latency (8.4 + 3.4 us per step)",
                            DoubleValue(d.nvlsLaunchScale),
                            MakeDoubleAccessor(&NcclTuner::m_nvlsLaunchScale),
                            MakeDoubleChecker<double>(0.0))
              .AddAttribute("NvlsBandwidthScale",
                            "Link rate of the in-switch (NVLS) all-reduce relative to the ring's "
                            "(NCCL's nvlsEfficiency for Hopper: 0.85)",
                            DoubleValue(d.nvlsBandwidthScale),
                            MakeDoubleAccessor(&NcclTuner::m_nvlsBandwidthScale),
                            MakeDoubleChecker<double>(1e-3, 1.0))
              .AddAttribute("LLBandwidthScale",
                            "LL's bandwidth relative to Simple's (NCCL 2.28 ring model: "
                            "1/2; older: 1/3)",
                            DoubleValue(d.llBandwidthScale),
                            MakeDoubleAccessor(&NcclTuner::m_llBandwidthScale),
                            MakeDoubleChecker<double>(1e-3, 1.0))
              .AddAttribute("LLAllReduceBandwidthScale",
                            "LL's all-reduce bandwidth relative to Simple's (NCCL 2.28 ring "
                            "model: 1/2; older: 1/4)",
                            DoubleValue(d.llAllReduceBandwidthScale),
                            MakeDoubleAccessor(&NcclTuner::m_llAllReduceBandwidthScale),
                            MakeDoubleChecker<double>(1e-3, 1.0))
              .AddAttribute("LLMaxBandwidth",
                            "Most bus bandwidth LL reaches whatever the links (NCCL llMaxBw on "
                            "one node: Hopper 141 GB/s, Ampere 87.7 GB/s); 0 = no cap",
                            DataRateValue(DataRate(uint64_t(d.llMaxBytesPerSecond * 8))),
                            MakeDataRateAccessor(&NcclTuner::m_llMaxRate),
                            MakeDataRateChecker())
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
{
    // The attribute defaults and these come from one place: TunerConfig's defaults.
    const fabricsim::TunerConfig d;
    m_ll128StepScale = d.ll128StepScale;
    m_llStepScale = d.llStepScale;
    m_ll128LaunchScale = d.ll128LaunchScale;
    m_llLaunchScale = d.llLaunchScale;
    m_nvlsLaunchScale = d.nvlsLaunchScale;
    m_nvlsBandwidthScale = d.nvlsBandwidthScale;
    m_llBandwidthScale = d.llBandwidthScale;
    m_llAllReduceBandwidthScale = d.llAllReduceBandwidthScale;
    m_llMaxRate = ns3::DataRate(uint64_t(d.llMaxBytesPerSecond * 8));
    m_inNetworkReduction = d.inNetworkReduction;
    m_gpuClockMhz = d.gpuClockMhz;
    m_localCopyEfficiency = d.localCopyEfficiency;
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
    c.nvlsBandwidthScale = m_nvlsBandwidthScale;
    c.llBandwidthScale = m_llBandwidthScale;
    c.llAllReduceBandwidthScale = m_llAllReduceBandwidthScale;
    c.llMaxBytesPerSecond = double(m_llMaxRate.GetBitRate()) / 8.0;
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
