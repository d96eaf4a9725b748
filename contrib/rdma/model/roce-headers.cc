#include "roce-headers.h"

#include <array>
#include <vector>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(RoceBthHeader);
NS_OBJECT_ENSURE_REGISTERED(RoceRethHeader);
NS_OBJECT_ENSURE_REGISTERED(RoceAethHeader);
NS_OBJECT_ENSURE_REGISTERED(PfcHeader);

// ---------------- BTH ----------------

TypeId
RoceBthHeader::GetTypeId()
{
    static TypeId tid = TypeId("ns3::RoceBthHeader")
                            .SetParent<Header>()
                            .SetGroupName("Rdma")
                            .AddConstructor<RoceBthHeader>();
    return tid;
}

TypeId
RoceBthHeader::GetInstanceTypeId() const
{
    return GetTypeId();
}

uint32_t
RoceBthHeader::GetSerializedSize() const
{
    return RoceSize::kBth;
}

void
RoceBthHeader::Serialize(Buffer::Iterator i) const
{
    i.WriteU8(opcode);
    i.WriteU8((solicited ? 0x80 : 0) | (migReq ? 0x40 : 0) | ((padCount & 3) << 4)); // TVer 0
    i.WriteHtonU16(pkey);
    i.WriteU8((fecn ? 0x80 : 0) | (becn ? 0x40 : 0));
    i.WriteU8((destQp >> 16) & 0xff);
    i.WriteHtonU16(destQp & 0xffff);
    i.WriteU8(ackReq ? 0x80 : 0);
    i.WriteU8((psn >> 16) & 0xff);
    i.WriteHtonU16(psn & 0xffff);
}

uint32_t
RoceBthHeader::Deserialize(Buffer::Iterator i)
{
    opcode = i.ReadU8();
    uint8_t b = i.ReadU8();
    solicited = b & 0x80;
    migReq = b & 0x40;
    padCount = (b >> 4) & 3;
    pkey = i.ReadNtohU16();
    b = i.ReadU8();
    fecn = b & 0x80;
    becn = b & 0x40;
    destQp = uint32_t(i.ReadU8()) << 16;
    destQp |= i.ReadNtohU16();
    ackReq = i.ReadU8() & 0x80;
    psn = uint32_t(i.ReadU8()) << 16;
    psn |= i.ReadNtohU16();
    return RoceSize::kBth;
}

void
RoceBthHeader::Print(std::ostream& os) const
{
    os << "BTH opcode=0x" << std::hex << int(opcode) << std::dec << " dqp=" << destQp
       << " psn=" << psn << (ackReq ? " A" : "");
}

// ---------------- RETH ----------------

TypeId
RoceRethHeader::GetTypeId()
{
    static TypeId tid = TypeId("ns3::RoceRethHeader")
                            .SetParent<Header>()
                            .SetGroupName("Rdma")
                            .AddConstructor<RoceRethHeader>();
    return tid;
}

TypeId
RoceRethHeader::GetInstanceTypeId() const
{
    return GetTypeId();
}

uint32_t
RoceRethHeader::GetSerializedSize() const
{
    return RoceSize::kReth;
}

void
RoceRethHeader::Serialize(Buffer::Iterator i) const
{
    i.WriteHtonU64(va);
    i.WriteHtonU32(rkey);
    i.WriteHtonU32(dmaLength);
}

uint32_t
RoceRethHeader::Deserialize(Buffer::Iterator i)
{
    va = i.ReadNtohU64();
    rkey = i.ReadNtohU32();
    dmaLength = i.ReadNtohU32();
    return RoceSize::kReth;
}

void
RoceRethHeader::Print(std::ostream& os) const
{
    os << "RETH va=" << va << " len=" << dmaLength;
}

// ---------------- AETH ----------------

TypeId
RoceAethHeader::GetTypeId()
{
    static TypeId tid = TypeId("ns3::RoceAethHeader")
                            .SetParent<Header>()
                            .SetGroupName("Rdma")
                            .AddConstructor<RoceAethHeader>();
    return tid;
}

TypeId
RoceAethHeader::GetInstanceTypeId() const
{
    return GetTypeId();
}

uint32_t
RoceAethHeader::GetSerializedSize() const
{
    return RoceSize::kAeth;
}

void
RoceAethHeader::Serialize(Buffer::Iterator i) const
{
    i.WriteU8(syndrome);
    i.WriteU8((msn >> 16) & 0xff);
    i.WriteHtonU16(msn & 0xffff);
}

uint32_t
RoceAethHeader::Deserialize(Buffer::Iterator i)
{
    syndrome = i.ReadU8();
    msn = uint32_t(i.ReadU8()) << 16;
    msn |= i.ReadNtohU16();
    return RoceSize::kAeth;
}

void
RoceAethHeader::Print(std::ostream& os) const
{
    os << "AETH syndrome=0x" << std::hex << int(syndrome) << std::dec << " msn=" << msn;
}

// ---------------- PFC ----------------

TypeId
PfcHeader::GetTypeId()
{
    static TypeId tid = TypeId("ns3::PfcHeader")
                            .SetParent<Header>()
                            .SetGroupName("Rdma")
                            .AddConstructor<PfcHeader>();
    return tid;
}

TypeId
PfcHeader::GetInstanceTypeId() const
{
    return GetTypeId();
}

uint32_t
PfcHeader::GetSerializedSize() const
{
    return 2 + 2 + 16;
}

void
PfcHeader::Serialize(Buffer::Iterator i) const
{
    i.WriteHtonU16(opcode);
    i.WriteHtonU16(classEnable);
    for (auto q : quanta)
    {
        i.WriteHtonU16(q);
    }
}

uint32_t
PfcHeader::Deserialize(Buffer::Iterator i)
{
    opcode = i.ReadNtohU16();
    classEnable = uint8_t(i.ReadNtohU16());
    for (auto& q : quanta)
    {
        q = i.ReadNtohU16();
    }
    return GetSerializedSize();
}

void
PfcHeader::Print(std::ostream& os) const
{
    os << "PFC cev=0x" << std::hex << int(classEnable) << std::dec;
}

// ---------------- addresses ----------------

Ipv4Address
HostIpv4(uint32_t hostIndex)
{
    return Ipv4Address(0x0a000000u + ((hostIndex + 1) & 0x00ffffffu)); // 10.0.0.1 = host 0
}

Mac48Address
HostMac(uint32_t hostIndex)
{
    uint8_t b[6] = {0x02,
                    0x00,
                    uint8_t(hostIndex >> 24),
                    uint8_t(hostIndex >> 16),
                    uint8_t(hostIndex >> 8),
                    uint8_t(hostIndex)};
    Mac48Address m;
    m.CopyFrom(b);
    return m;
}

// ---------------- serializer ----------------

namespace
{

void
Put16(std::vector<uint8_t>& v, uint16_t x)
{
    v.push_back(uint8_t(x >> 8));
    v.push_back(uint8_t(x));
}

void
Put32(std::vector<uint8_t>& v, uint32_t x)
{
    Put16(v, uint16_t(x >> 16));
    Put16(v, uint16_t(x));
}

void
PutMac(std::vector<uint8_t>& v, Mac48Address m)
{
    uint8_t b[6];
    m.CopyTo(b);
    v.insert(v.end(), b, b + 6);
}

std::array<uint32_t, 256>
MakeCrcTable()
{
    std::array<uint32_t, 256> t{};
    for (uint32_t n = 0; n < 256; ++n)
    {
        uint32_t c = n;
        for (int k = 0; k < 8; ++k)
        {
            c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
        }
        t[n] = c;
    }
    return t;
}

uint32_t
Crc32Update(uint32_t crc, const uint8_t* d, size_t n)
{
    static const std::array<uint32_t, 256> table = MakeCrcTable();
    for (size_t i = 0; i < n; ++i)
    {
        crc = table[(crc ^ d[i]) & 0xff] ^ (crc >> 8);
    }
    return crc;
}

} // namespace

uint32_t
RoceFrameSerializer::Icrc(const uint8_t* ip, uint32_t len)
{
    // RoCEv2 ICRC: CRC32 over 8 bytes of 1s, then IP/UDP/BTH with variant fields masked to 1s.
    std::vector<uint8_t> m(ip, ip + len);
    m[1] = 0xff;          // IPv4 TOS (DSCP + ECN)
    m[8] = 0xff;          // TTL
    m[10] = m[11] = 0xff; // header checksum
    m[26] = m[27] = 0xff; // UDP checksum
    m[28 + 4] = 0xff;     // BTH FECN/BECN/resv
    const uint8_t ones[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    uint32_t crc = Crc32Update(0xffffffffu, ones, 8);
    crc = Crc32Update(crc, m.data(), m.size());
    return ~crc;
}

Ptr<Packet>
RoceFrameSerializer::Serialize(const FabricPacket& p, Mac48Address portMac)
{
    std::vector<uint8_t> v;
    v.reserve(p.frameBytes);
    if (p.type == FrameType::Pfc)
    {
        PutMac(v, Mac48Address("01:80:c2:00:00:01"));
        PutMac(v, portMac);
        Put16(v, 0x8808);
        Put16(v, 0x0101);
        Put16(v, p.pfcClassEnable);
        for (auto q : p.pfcQuanta)
        {
            Put16(v, q);
        }
        v.resize(RoceSize::kMinFrame - RoceSize::kFcs, 0);
        return Create<Packet>(v.data(), v.size());
    }

    // Transport headers through the ns-3 Header classes.
    Ptr<Packet> l4 = Create<Packet>(p.type == FrameType::Data ? p.payload : 0);
    if (p.type == FrameType::Data
        && (p.opcode == RoceOpcode::kWriteFirst || p.opcode == RoceOpcode::kWriteOnly))
    {
        RoceRethHeader r;
        r.va = p.remoteVa;
        r.rkey = 0x1000 + p.dstQpn;
        r.dmaLength = p.dmaLength;
        l4->AddHeader(r);
    }
    if (p.type == FrameType::Ack || p.type == FrameType::Nack)
    {
        RoceAethHeader a;
        a.syndrome = p.syndrome;
        a.msn = p.msn;
        l4->AddHeader(a);
    }
    if (p.type == FrameType::Cnp)
    {
        std::vector<uint8_t> zeros(RoceSize::kCnpReserved, 0);
        l4 = Create<Packet>(zeros.data(), zeros.size());
    }
    RoceBthHeader bth;
    bth.opcode = p.opcode;
    bth.destQp = p.dstQpn & 0xffffff;
    bth.psn = p.psn & 0xffffff;
    bth.ackReq = p.ackReq;
    bth.becn = (p.type == FrameType::Cnp);
    bth.migReq = (p.type != FrameType::Cnp);
    l4->AddHeader(bth);
    std::vector<uint8_t> l4b(l4->GetSize());
    l4->CopyData(l4b.data(), l4b.size());

    PutMac(v, HostMac(p.dstHost));
    PutMac(v, HostMac(p.srcHost));
    Put16(v, 0x0800);
    size_t ipOff = v.size();
    uint16_t ipLen = uint16_t(RoceSize::kIpv4 + RoceSize::kUdp + l4b.size() + RoceSize::kIcrc);
    v.push_back(0x45);
    uint8_t ecn = p.ce ? 3 : (p.ecnCapable ? 2 : 0);
    v.push_back(uint8_t((p.priority << 5) | ecn)); // DSCP = 8 * priority
    Put16(v, ipLen);
    Put16(v, uint16_t(p.uid));
    Put16(v, 0x4000); // DF
    v.push_back(p.ttl);
    v.push_back(17);
    Put16(v, 0);
    Put32(v, HostIpv4(p.srcHost).Get());
    Put32(v, HostIpv4(p.dstHost).Get());
    uint32_t sum = 0;
    for (size_t k = ipOff; k < ipOff + 20; k += 2)
    {
        sum += (uint32_t(v[k]) << 8) | v[k + 1];
    }
    while (sum >> 16)
    {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    v[ipOff + 10] = uint8_t(~sum >> 8);
    v[ipOff + 11] = uint8_t(~sum);
    Put16(v, p.sport);
    Put16(v, p.dport);
    Put16(v, uint16_t(ipLen - RoceSize::kIpv4));
    Put16(v, 0); // RoCEv2 senders leave the UDP checksum zero
    v.insert(v.end(), l4b.begin(), l4b.end());
    uint32_t icrc = Icrc(v.data() + ipOff, uint32_t(v.size() - ipOff));
    for (int k = 0; k < 4; ++k)
    {
        v.push_back(uint8_t(icrc >> (8 * k))); // transmitted least significant byte first
    }
    return Create<Packet>(v.data(), v.size());
}

} // namespace ns3
