/*
 * Shared-buffer switch MMU with ingress accounting per (port, priority), as in commodity
 * datacenter switches and the HPCC simulator: a small reserve per lossless queue, a shared pool
 * with a dynamic threshold alpha * (free shared buffer), and per-port headroom that absorbs what
 * is in flight after an XOFF. Lossy classes are admitted against the dynamic threshold only.
 */
#ifndef FABRICSIM_SHARED_BUFFER_MMU_H
#define FABRICSIM_SHARED_BUFFER_MMU_H

#include "ns3/nstime.h"
#include "ns3/object.h"

#include <array>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace ns3
{

/// Thrown by SharedBufferMmu::Configure when the reserve and PFC headroom of the switch's ports
/// leave no shared pool: a configuration the switch cannot hold, for the caller to report.
class BufferTooSmall : public std::runtime_error
{
  public:
    BufferTooSmall(uint64_t needed, uint64_t buffer, size_t ports);

    uint64_t Needed() const ///< reserve + headroom of all ports, in bytes
    {
        return m_needed;
    }

    uint64_t Buffer() const ///< the buffer it had to fit
    {
        return m_buffer;
    }

    size_t Ports() const
    {
        return m_ports;
    }

  private:
    uint64_t m_needed;
    uint64_t m_buffer;
    size_t m_ports;
};

class SharedBufferMmu : public Object
{
  public:
    static TypeId GetTypeId();
    SharedBufferMmu();

    struct PortInfo
    {
        uint64_t rateBps = 0;
        Time delay;
    };

    /**
     * Size the pools: `nicRateBps` is the port speed whose alpha is AlphaBase (alpha doubles
     * with each doubling of port speed above it).
     * \throws BufferTooSmall when reserve + headroom leave no shared pool
     */
    void Configure(const std::vector<PortInfo>& ports, uint64_t nicRateBps, uint32_t mtuFrameBytes);

    /// Admit `bytes` arriving on (port, prio); false = drop (buffer overflow).
    bool Admit(uint32_t port, uint8_t prio, uint32_t bytes);
    /// Release `bytes` of (port, prio) when the frame leaves.
    void Release(uint32_t port, uint8_t prio, uint32_t bytes);

    bool IsLossless(uint8_t prio) const
    {
        return m_pfcEnabled && (m_losslessMask & (1u << prio));
    }

    /// XOFF condition: the queue uses headroom or reached its dynamic threshold.
    bool ShouldPause(uint32_t port, uint8_t prio) const;
    /// XON condition: no headroom used and below threshold minus the resume offset.
    bool ShouldResume(uint32_t port, uint8_t prio) const;

    /// Dynamic threshold of a port now.
    uint64_t Threshold(uint32_t port) const;
    uint64_t HeadroomPerPort(uint32_t port) const
    {
        return m_port[port].headroom;
    }
    uint64_t SharedPoolBytes() const
    {
        return m_sharedPool;
    }
    uint64_t SharedUsedBytes() const
    {
        return m_sharedUsed;
    }
    uint64_t BufferBytes() const
    {
        return m_bufferBytes;
    }
    double Alpha(uint32_t port) const
    {
        return m_port[port].alpha;
    }
    uint64_t IngressBytes(uint32_t port, uint8_t prio) const
    {
        return m_port[port].cls[prio].ing + m_port[port].cls[prio].hdrm;
    }
    uint64_t TotalUsedBytes() const;

    /// Starts loading what a frame of class \p prio arriving on \p port will read (a hint).
    void PrefetchPort(uint32_t port, uint8_t prio) const
    {
        if (port < m_port.size())
        {
            __builtin_prefetch(&m_port[port].cls[prio & 7]);
            __builtin_prefetch(&m_port[port].alpha);
        }
    }

  private:
    uint64_t SharedPart(uint32_t port, uint8_t prio) const
    {
        uint64_t r = (m_losslessMask & (1u << prio)) ? m_reserve : 0;
        const uint64_t ing = m_port[port].cls[prio].ing;
        return ing > r ? ing - r : 0;
    }

    /// One ingress port's accounting, in two cache lines: a frame's admission and release
    /// read its class's pair and the port's threshold and headroom, nothing else.
    struct alignas(64) PortState
    {
        struct ClassBytes
        {
            uint64_t ing = 0;  ///< bytes in the reserve and the shared pool
            uint64_t hdrm = 0; ///< bytes in the headroom
        };

        std::array<ClassBytes, 8> cls{};
        double alpha = 0;      ///< dynamic-threshold alpha
        uint64_t headroom = 0; ///< headroom bytes of each lossless class
    };

    // What every admission reads first (the attributes after it are read when configuring).
    uint64_t m_sharedPool = 0;
    uint64_t m_sharedUsed = 0;
    uint64_t m_reserve;
    uint64_t m_resumeOffset;
    std::vector<PortState> m_port;
    bool m_pfcEnabled;
    uint8_t m_losslessMask;

    uint64_t m_bufferBytes;
    double m_alphaBase;
    double m_headroomDelayFactor;
    uint32_t m_headroomFrames;
    uint64_t m_headroomOverride;
};

} // namespace ns3

#endif
