#include "shared-buffer-mmu.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(SharedBufferMmu);

TypeId
SharedBufferMmu::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::SharedBufferMmu")
              .SetParent<Object>()
              .SetGroupName("Fabric")
              .AddConstructor<SharedBufferMmu>()
              .AddAttribute("BufferSize",
                            "Total packet buffer in bytes.",
                            UintegerValue(32u << 20),
                            MakeUintegerAccessor(&SharedBufferMmu::m_bufferBytes),
                            MakeUintegerChecker<uint64_t>(1))
              .AddAttribute("ReserveBytes",
                            "Guaranteed bytes per (port, lossless class).",
                            UintegerValue(4096),
                            MakeUintegerAccessor(&SharedBufferMmu::m_reserve),
                            MakeUintegerChecker<uint64_t>())
              .AddAttribute("AlphaBase",
                            "Dynamic-threshold alpha of ports at NIC speed (doubles per doubling "
                            "of port speed above it).",
                            DoubleValue(0.125),
                            MakeDoubleAccessor(&SharedBufferMmu::m_alphaBase),
                            MakeDoubleChecker<double>(0))
              .AddAttribute("ResumeOffset",
                            "XON when below threshold minus this many bytes.",
                            UintegerValue(3072),
                            MakeUintegerAccessor(&SharedBufferMmu::m_resumeOffset),
                            MakeUintegerChecker<uint64_t>())
              .AddAttribute("PfcEnabled",
                            "Generate PFC pauses for lossless classes.",
                            BooleanValue(true),
                            MakeBooleanAccessor(&SharedBufferMmu::m_pfcEnabled),
                            MakeBooleanChecker())
              .AddAttribute("LosslessClasses",
                            "Bit mask of PFC-protected priorities.",
                            UintegerValue(1u << 3),
                            MakeUintegerAccessor(&SharedBufferMmu::m_losslessMask),
                            MakeUintegerChecker<uint8_t>())
              .AddAttribute("HeadroomDelayFactor",
                            "Headroom per port = max(factor x rate x link delay, "
                            "(factor-1) x rate x delay + HeadroomFrames x MTU frame).",
                            DoubleValue(3.0),
                            MakeDoubleAccessor(&SharedBufferMmu::m_headroomDelayFactor),
                            MakeDoubleChecker<double>(0))
              .AddAttribute("HeadroomFrames",
                            "MTU-sized frames in the headroom floor.",
                            UintegerValue(3),
                            MakeUintegerAccessor(&SharedBufferMmu::m_headroomFrames),
                            MakeUintegerChecker<uint32_t>())
              .AddAttribute("HeadroomBytes",
                            "Fixed headroom per port (0 = computed).",
                            UintegerValue(0),
                            MakeUintegerAccessor(&SharedBufferMmu::m_headroomOverride),
                            MakeUintegerChecker<uint64_t>());
    return tid;
}

SharedBufferMmu::SharedBufferMmu()
    : m_reserve(4096)
    , m_resumeOffset(3072)
    , m_pfcEnabled(true)
    , m_losslessMask(1u << 3)
    , m_bufferBytes(32u << 20)
    , m_alphaBase(0.125)
    , m_headroomDelayFactor(3.0)
    , m_headroomFrames(3)
    , m_headroomOverride(0)
{
}

void
SharedBufferMmu::Configure(const std::vector<PortInfo>& ports,
                           uint64_t nicRateBps,
                           uint32_t mtuFrameBytes)
{
    size_t n = ports.size();
    m_port.assign(n, PortState{});
    uint32_t lossless = 0;
    for (uint8_t c = 0; c < 8; ++c)
    {
        lossless += (m_losslessMask >> c) & 1;
    }
    uint64_t reserved = 0;
    for (size_t i = 0; i < n; ++i)
    {
        double ratio = double(ports[i].rateBps) / double(nicRateBps);
        m_port[i].alpha = m_alphaBase * std::max(1.0, ratio);
        double bytesPerSec = double(ports[i].rateBps) / 8.0;
        double d = ports[i].delay.GetSeconds();
        double h = std::max(m_headroomDelayFactor * bytesPerSec * d,
                            (m_headroomDelayFactor - 1) * bytesPerSec * d
                                + double(m_headroomFrames) * mtuFrameBytes);
        m_port[i].headroom = m_headroomOverride ? m_headroomOverride : uint64_t(h + 0.5);
        reserved += uint64_t(lossless) * m_reserve;
        if (m_pfcEnabled)
        {
            reserved += uint64_t(lossless) * m_port[i].headroom;
        }
    }
    if (reserved >= m_bufferBytes)
    {
        throw BufferTooSmall(reserved, m_bufferBytes, n);
    }
    m_sharedPool = m_bufferBytes - reserved;
    m_sharedUsed = 0;
}

BufferTooSmall::BufferTooSmall(uint64_t needed, uint64_t buffer, size_t ports)
    : std::runtime_error("SharedBufferMmu: reserve + headroom (" + std::to_string(needed)
                         + " B) exceed the buffer (" + std::to_string(buffer) + " B)")
    , m_needed(needed)
    , m_buffer(buffer)
    , m_ports(ports)
{
}

uint64_t
SharedBufferMmu::Threshold(uint32_t port) const
{
    uint64_t freeShared = m_sharedPool > m_sharedUsed ? m_sharedPool - m_sharedUsed : 0;
    return uint64_t(m_port[port].alpha * double(freeShared));
}

bool
SharedBufferMmu::Admit(uint32_t port, uint8_t prio, uint32_t bytes)
{
    uint64_t before = SharedPart(port, prio);
    bool lossless = IsLossless(prio);
    uint64_t r = (m_losslessMask & (1u << prio)) ? m_reserve : 0;
    uint64_t after
        = (m_port[port].cls[prio].ing + bytes > r) ? m_port[port].cls[prio].ing + bytes - r : 0;
    uint64_t growth = after - before;
    bool fitsShared
        = growth == 0 || (after <= Threshold(port) && m_sharedUsed + growth <= m_sharedPool);
    if (fitsShared && m_port[port].cls[prio].hdrm == 0)
    {
        m_port[port].cls[prio].ing += bytes;
        m_sharedUsed += growth;
        return true;
    }
    if (lossless && m_port[port].cls[prio].hdrm + bytes <= m_port[port].headroom)
    {
        m_port[port].cls[prio].hdrm += bytes;
        return true;
    }
    return false;
}

void
SharedBufferMmu::Release(uint32_t port, uint8_t prio, uint32_t bytes)
{
    uint64_t h = std::min<uint64_t>(m_port[port].cls[prio].hdrm, bytes);
    m_port[port].cls[prio].hdrm -= h;
    uint64_t rest = bytes - h;
    uint64_t before = SharedPart(port, prio);
    NS_ABORT_MSG_IF(rest > m_port[port].cls[prio].ing,
                    "SharedBufferMmu: release of more than admitted");
    m_port[port].cls[prio].ing -= rest;
    m_sharedUsed -= before - SharedPart(port, prio);
}

bool
SharedBufferMmu::ShouldPause(uint32_t port, uint8_t prio) const
{
    return IsLossless(prio)
           && (m_port[port].cls[prio].hdrm > 0 || SharedPart(port, prio) >= Threshold(port));
}

bool
SharedBufferMmu::ShouldResume(uint32_t port, uint8_t prio) const
{
    uint64_t shared = SharedPart(port, prio);
    return m_port[port].cls[prio].hdrm == 0
           && (shared == 0 || shared + m_resumeOffset <= Threshold(port));
}

uint64_t
SharedBufferMmu::TotalUsedBytes() const
{
    uint64_t b = 0;
    for (size_t i = 0; i < m_port.size(); ++i)
    {
        for (int c = 0; c < 8; ++c)
        {
            b += m_port[i].cls[c].ing + m_port[i].cls[c].hdrm;
        }
    }
    return b;
}

} // namespace ns3
