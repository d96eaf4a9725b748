/*
 * ns-3 Header classes for the RoCEv2 transport headers (BTH, RETH, AETH, CNP payload) and the
 * IEEE 802.1Qbb PFC MAC-control frame, plus the serializer that turns a FabricPacket into the
 * exact frame bytes (Ethernet/IPv4/UDP 4791/BTH/.../ICRC) for pcap capture.
 */
#ifndef FABRICSIM_ROCE_HEADERS_H
#define FABRICSIM_ROCE_HEADERS_H

#include "fabric-packet.h"

#include "ns3/header.h"
#include "ns3/ipv4-address.h"
#include "ns3/mac48-address.h"
#include "ns3/packet.h"

namespace ns3
{

/// InfiniBand Base Transport Header (12 bytes).
class RoceBthHeader : public Header
{
  public:
    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    uint32_t GetSerializedSize() const override;
    void Serialize(Buffer::Iterator start) const override;
    uint32_t Deserialize(Buffer::Iterator start) override;
    void Print(std::ostream& os) const override;

    uint8_t opcode = 0;
    bool solicited = false;
    bool migReq = true;
    uint8_t padCount = 0;
    uint16_t pkey = 0xffff;
    bool fecn = false;
    bool becn = false;
    uint32_t destQp = 0; ///< 24 bits
    bool ackReq = false;
    uint32_t psn = 0; ///< 24 bits
};

/// RDMA Extended Transport Header (16 bytes): first packet of an RDMA WRITE.
class RoceRethHeader : public Header
{
  public:
    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    uint32_t GetSerializedSize() const override;
    void Serialize(Buffer::Iterator start) const override;
    uint32_t Deserialize(Buffer::Iterator start) override;
    void Print(std::ostream& os) const override;

    uint64_t va = 0;
    uint32_t rkey = 0;
    uint32_t dmaLength = 0;
};

/// ACK Extended Transport Header (4 bytes).
class RoceAethHeader : public Header
{
  public:
    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    uint32_t GetSerializedSize() const override;
    void Serialize(Buffer::Iterator start) const override;
    uint32_t Deserialize(Buffer::Iterator start) override;
    void Print(std::ostream& os) const override;

    uint8_t syndrome = 0; ///< 0x00-0x1f ACK (credits), 0x60 NAK PSN sequence error
    uint32_t msn = 0;     ///< 24 bits
};

/// 802.1Qbb PFC frame body after the Ethernet header (EtherType 0x8808).
class PfcHeader : public Header
{
  public:
    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    uint32_t GetSerializedSize() const override;
    void Serialize(Buffer::Iterator start) const override;
    uint32_t Deserialize(Buffer::Iterator start) override;
    void Print(std::ostream& os) const override;

    uint16_t opcode = 0x0101;
    uint8_t classEnable = 0;
    uint16_t quanta[8] = {0, 0, 0, 0, 0, 0, 0, 0};
};

/// Addresses used on the fabric.
Ipv4Address HostIpv4(uint32_t hostIndex);
Mac48Address HostMac(uint32_t hostIndex);

/**
 * \brief Builds the exact frame bytes of a FabricPacket (without FCS, as pcap expects).
 *
 * Only called where a capture is written; the simulation itself never needs the bytes.
 */
class RoceFrameSerializer
{
  public:
    static Ptr<Packet> Serialize(const FabricPacket& p, Mac48Address portMac);
    /// RoCEv2 invariant CRC over the masked IPv4/UDP/BTH headers and payload.
    static uint32_t Icrc(const uint8_t* ipStart, uint32_t len);
};

} // namespace ns3

#endif
