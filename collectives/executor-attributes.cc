#include "executor-attributes.h"

#include "ns3/enum.h"
#include "ns3/object-factory.h"
#include "ns3/uinteger.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(CollectiveExecutor);
NS_OBJECT_ENSURE_REGISTERED(AnalyticalBackend);

TypeId
CollectiveExecutor::GetTypeId()
{
    const fabricsim::ExecutorConfig d;
    static TypeId tid
        = TypeId("ns3::CollectiveExecutor")
              .SetParent<Object>()
              .SetGroupName("Fabricsim")
              .AddConstructor<CollectiveExecutor>()
              .AddAttribute("MaxChunkSize",
                            "Most bytes one chunk carries per tile (0 = connection buffer / "
                            "largest step count)",
                            UintegerValue(d.m_maxChunkBytes),
                            MakeUintegerAccessor(&CollectiveExecutor::m_maxChunkBytes),
                            MakeUintegerChecker<uint64_t>())
              .AddAttribute(
                  "SliceSize",
                  "Pipelining unit in bytes, one transport message (0 = connection buffer / slots)",
                  UintegerValue(d.m_sliceBytes),
                  MakeUintegerAccessor(&CollectiveExecutor::m_sliceBytes),
                  MakeUintegerChecker<uint64_t>())
              .AddAttribute("Slots",
                            "Slices in flight per connection (NCCL_STEPS); 0 = unbounded",
                            UintegerValue(d.m_slots),
                            MakeUintegerAccessor(&CollectiveExecutor::m_slots),
                            MakeUintegerChecker<uint32_t>())
              .AddAttribute("StepLatency",
                            "GPU cost of starting one step of one tile",
                            TimeValue(PicoSeconds(d.m_stepLatencyPs)),
                            MakeTimeAccessor(&CollectiveExecutor::m_stepLatency),
                            MakeTimeChecker(Seconds(0)))
              .AddAttribute("LaunchLatency",
                            "Kernel launch before the first step of a collective",
                            TimeValue(PicoSeconds(d.m_launchLatencyPs)),
                            MakeTimeAccessor(&CollectiveExecutor::m_launchLatency),
                            MakeTimeChecker(Seconds(0)))
              .AddAttribute(
                  "MemoryBandwidth",
                  "Memory bandwidth for reductions (3 bytes touched per byte) and copies (2)",
                  DataRateValue(DataRate(uint64_t(d.m_memoryBytesPerSecond * 8))),
                  MakeDataRateAccessor(&CollectiveExecutor::m_memoryBandwidth),
                  MakeDataRateChecker())
              .AddAttribute("Protocol",
                            "Wire protocol: the schedule's own, or forced Simple / LL / LL128",
                            EnumValue(-1),
                            MakeEnumAccessor(&CollectiveExecutor::m_protocol),
                            MakeEnumChecker(-1,
                                            "Schedule",
                                            int(fabricsim::Protocol::kSimple),
                                            "Simple",
                                            int(fabricsim::Protocol::kLL),
                                            "LL",
                                            int(fabricsim::Protocol::kLL128),
                                            "LL128"));
    return tid;
}

CollectiveExecutor::CollectiveExecutor()
    : m_maxChunkBytes(0)
    , m_sliceBytes(0)
    , m_slots(8)
    , m_protocol(-1)
{
}

fabricsim::ExecutorConfig
CollectiveExecutor::GetConfig() const
{
    fabricsim::ExecutorConfig c;
    c.m_maxChunkBytes = m_maxChunkBytes;
    c.m_sliceBytes = m_sliceBytes;
    c.m_slots = m_slots;
    c.m_stepLatencyPs = m_stepLatency.GetPicoSeconds();
    c.m_launchLatencyPs = m_launchLatency.GetPicoSeconds();
    c.m_memoryBytesPerSecond = double(m_memoryBandwidth.GetBitRate()) / 8.0;
    c.m_overrideProtocol = m_protocol >= 0;
    if (m_protocol >= 0)
    {
        c.m_protocol = fabricsim::Protocol(m_protocol);
    }
    return c;
}

TypeId
AnalyticalBackend::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::AnalyticalBackend")
              .SetParent<Object>()
              .SetGroupName("Fabricsim")
              .AddConstructor<AnalyticalBackend>()
              .AddAttribute("MessageOverhead",
                            "Latency added to every message of the analytical backend",
                            TimeValue(Seconds(0)),
                            MakeTimeAccessor(&AnalyticalBackend::m_messageOverhead),
                            MakeTimeChecker(Seconds(0)));
    return tid;
}

AnalyticalBackend::AnalyticalBackend()
{
}

fabricsim::ExecutorConfig
ExecutorConfigFromAttributes()
{
    ObjectFactory f("ns3::CollectiveExecutor");
    return f.Create<CollectiveExecutor>()->GetConfig();
}

int64_t
AnalyticalOverheadFromAttributes()
{
    ObjectFactory f("ns3::AnalyticalBackend");
    return f.Create<AnalyticalBackend>()->GetMessageOverhead().GetPicoSeconds();
}

} // namespace ns3
