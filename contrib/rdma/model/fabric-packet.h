/*
 * The frame as it travels the simulated fabric. Headers are parsed once, at creation, into this
 * small struct; switches and NICs read fields, never bytes. The exact on-wire bytes
 * (Ethernet/IPv4/UDP 4791/BTH/RETH/AETH/ICRC, or MAC-control PFC) are produced from it by
 * RoceFrameSerializer only where a pcap is written, so frame sizes and captures are real while
 * the hot path does not serialise per hop.
 */
#ifndef FABRICSIM_FABRIC_PACKET_H
#define FABRICSIM_FABRIC_PACKET_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ns3
{

/// Kind of frame on the fabric.
enum class FrameType : uint8_t
{
    Data, ///< RDMA WRITE (first/middle/last/only)
    Ack,  ///< RC ACK (AETH syndrome ACK)
    Nack, ///< RC NAK, PSN sequence error (go-back-N)
    Cnp,  ///< RoCEv2 congestion notification packet (BTH opcode 0x81)
    Pfc   ///< IEEE 802.1Qbb priority flow control (MAC control 0x8808 / 0x0101)
};

/// IB transport opcodes used (RC).
namespace RoceOpcode
{
constexpr uint8_t kWriteFirst = 0x06;
constexpr uint8_t kWriteMiddle = 0x07;
constexpr uint8_t kWriteLast = 0x08;
constexpr uint8_t kWriteOnly = 0x0a;
constexpr uint8_t kAck = 0x11;
constexpr uint8_t kCnp = 0x81;
} // namespace RoceOpcode

/// Byte sizes of the headers (RoCEv2 over Ethernet, reference sheet "Frame sizes").
namespace RoceSize
{
constexpr uint32_t kEth = 14;
constexpr uint32_t kIpv4 = 20;
constexpr uint32_t kUdp = 8;
constexpr uint32_t kBth = 12;
constexpr uint32_t kReth = 16;
constexpr uint32_t kAeth = 4;
constexpr uint32_t kIcrc = 4;
constexpr uint32_t kFcs = 4;
constexpr uint32_t kCnpReserved = 16;
/// preamble + SFD (8) and inter-frame gap (12): on the wire, not in the frame
constexpr uint32_t kWireOverhead = 20;
constexpr uint32_t kMinFrame = 64;
/// Data frame bytes (incl. FCS) carrying `payload` bytes; `first` adds the RETH.
constexpr uint32_t
DataFrame(uint32_t payload, bool first)
{
    return kEth + kIpv4 + kUdp + kBth + (first ? kReth : 0) + payload + kIcrc + kFcs;
}
constexpr uint32_t kAckFrame = kEth + kIpv4 + kUdp + kBth + kAeth + kIcrc + kFcs;        // 66
constexpr uint32_t kCnpFrame = kEth + kIpv4 + kUdp + kBth + kCnpReserved + kIcrc + kFcs; // 78
constexpr uint32_t kPfcFrame = kMinFrame;                                                // 64
/// INT shim carried by flagged data frames and echoed in their ACKs (hop count, flags), as in HPCC
constexpr uint32_t kIntHeader = 2;
} // namespace RoceSize

/// One hop of in-band telemetry (HPCC): stamped by each switch egress.
struct IntHop
{
    uint64_t rateBps = 0;
    uint64_t tsPs = 0;
    uint64_t txBytes = 0;
    uint32_t qlenBytes = 0;
};

/**
 * \brief A frame in flight: parsed header fields plus bookkeeping.
 *
 * Exactly one owner at a time (a queue, a link, a device); whoever drops or consumes it
 * deletes it.
 */
struct FabricPacket
{
    FrameType type = FrameType::Data;
    uint8_t priority = 0;   ///< 802.1p class (PFC class)
    uint8_t opcode = 0;     ///< BTH opcode
    uint8_t ttl = 64;       ///< IPv4 TTL, decremented per switch hop
    bool ecnCapable = true; ///< ECT(0) set by the sender
    bool ce = false;        ///< ECN congestion experienced
    bool ackReq = false;    ///< BTH A bit
    bool ecnEcho = false;   ///< on ACKs: the acked data frame was CE-marked (DCTCP-style echo)
    /// on a selective-repeat NAK: sackPsn is set (an extension: not in the wire frame)
    bool hasSack = false;

    uint32_t srcHost = 0;    ///< source host index (IPv4 address derived from it)
    uint32_t dstHost = 0;    ///< destination host index
    uint16_t sport = 0;      ///< UDP source port (flow entropy)
    uint16_t dport = 4791;   ///< RoCEv2
    uint32_t dstQpn = 0;     ///< BTH destination QP
    uint32_t psn = 0;        ///< packet sequence number (BTH carries the low 24 bits)
    uint32_t sackPsn = 0;    ///< with hasSack: the out-of-order PSN the receiver now holds
    uint32_t payload = 0;    ///< RDMA payload bytes
    uint32_t frameBytes = 0; ///< L2 frame bytes including FCS, excluding preamble and IFG
    // Switches read only the fields above and the two below: with the frame aligned to a cache
    // line (operator new), a switch hop touches one line of it.
    uint32_t ingressPort = 0; ///< scratch: switch ingress port while queued
    /// INT bytes carried (shim + stamped hops, included in frameBytes); a data frame with
    /// intBytes > 0 asks every switch egress to push one hop record
    uint32_t intBytes = 0;
    uint32_t dmaLength = 0; ///< RETH DMA length

    uint64_t remoteVa = 0; ///< RETH virtual address (first packet of a WRITE)
    uint32_t msn = 0;      ///< AETH message sequence number
    uint8_t syndrome = 0;  ///< AETH syndrome (0x00 ACK credit, 0x60 NAK PSN sequence error)

    uint8_t pfcClassEnable = 0; ///< PFC class-enable vector
    uint16_t pfcQuanta[8] = {0, 0, 0, 0, 0, 0, 0, 0};

    int64_t sendTimePs = 0; ///< sender timestamp echoed in ACKs (RTT samples)
    uint64_t uid = 0;       ///< unique id for tracing

    std::vector<IntHop> intHops; ///< INT stack (empty unless a CC needs it)

    // Frames are created and destroyed once per packet: recycle their memory through a
    // per-thread free list instead of the general-purpose allocator.
    static void* operator new(std::size_t size);
    static void operator delete(void* p) noexcept;

    /// Frame bytes plus preamble/SFD/IFG: what occupies the link.
    uint32_t WireBytes() const
    {
        return frameBytes + RoceSize::kWireOverhead;
    }
};

/// Why a frame did not reach its destination.
enum class DropReason : uint8_t
{
    BufferOverflow = 0,
    LinkDown,
    Corruption,
    TtlExpired,
    NoRoute,
    PfcWatchdog,
    Count
};

const char* DropReasonName(DropReason r);

} // namespace ns3

#endif
