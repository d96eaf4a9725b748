#include "frame-codec.h"

#include "ns3/abort.h"

#include <cstring>
#include <type_traits>

namespace ns3
{

namespace
{

// A field added to FabricPacket must be encoded too: this breaks the build until it is (and the
// round trip in frame-codec-test.cc checks every field).
static_assert(sizeof(FabricPacket) == 128 && sizeof(IntHop) == 32,
              "FabricPacket changed: encode the new field in frame-codec.cc");

constexpr uint8_t kVersion = 1;
// version, epoch, five one-byte fields, flags, ports, class enable and a spare, eight uint32
// fields, intBytes, dmaLength, remoteVa, msn, PFC quanta, send time, uid, hop count.
constexpr uint32_t kFixedBytes
    = 1 + 8 + 5 + 1 + 2 + 2 + 1 + 1 + 8 * 4 + 4 + 4 + 8 + 4 + 16 + 8 + 8 + 2;
constexpr uint32_t kHopBytes = 8 + 8 + 8 + 4;

/// Little-endian writer and reader over a byte array (the ranks of one run share a build).
class Writer
{
  public:
    explicit Writer(uint8_t* at)
        : m_at(at)
    {
    }

    template <typename T>
    void Put(T v)
    {
        static_assert(std::is_integral_v<T>);
        for (size_t i = 0; i < sizeof(T); ++i)
        {
            *m_at++ = uint8_t(uint64_t(v) >> (8 * i));
        }
    }

  private:
    uint8_t* m_at;
};

class Reader
{
  public:
    Reader(const uint8_t* at, const uint8_t* end)
        : m_at(at)
        , m_end(end)
    {
    }

    template <typename T>
    T Get()
    {
        static_assert(std::is_integral_v<T>);
        NS_ABORT_MSG_IF(m_end - m_at < long(sizeof(T)), "DecodeFrame: encoding cut short");
        uint64_t v = 0;
        for (size_t i = 0; i < sizeof(T); ++i)
        {
            v |= uint64_t(*m_at++) << (8 * i);
        }
        return T(v);
    }

    bool AtEnd() const
    {
        return m_at == m_end;
    }

  private:
    const uint8_t* m_at;
    const uint8_t* m_end;
};

} // namespace

uint32_t
EncodedFrameBytes(const FabricPacket& p)
{
    return kFixedBytes + kHopBytes * uint32_t(p.intHops.size());
}

uint32_t
MaxEncodedFrameBytes()
{
    return kFixedBytes + kHopBytes * kMaxEncodedIntHops;
}

Ptr<Packet>
EncodeFrame(const FabricPacket& p, uint64_t epoch)
{
    uint8_t buf[kFixedBytes + kHopBytes * kMaxEncodedIntHops];
    const uint32_t n = EncodeFrameTo(p, epoch, buf);
    return Create<Packet>(buf, n);
}

uint32_t
EncodeFrameTo(const FabricPacket& p, uint64_t epoch, uint8_t* buf)
{
    NS_ABORT_MSG_IF(p.intHops.size() > kMaxEncodedIntHops,
                    "EncodeFrame: " << p.intHops.size() << " INT hops, at most "
                                    << kMaxEncodedIntHops << " cross ranks");
    const uint32_t n = EncodedFrameBytes(p);
    Writer w(buf);
    w.Put(kVersion);
    w.Put(epoch);
    w.Put(uint8_t(p.type));
    w.Put(p.priority);
    w.Put(p.opcode);
    w.Put(p.ttl);
    w.Put(p.syndrome);
    w.Put(uint8_t(p.ecnCapable | p.ce << 1 | p.ackReq << 2 | p.ecnEcho << 3 | p.hasSack << 4));
    w.Put(p.sport);
    w.Put(p.dport);
    w.Put(p.pfcClassEnable);
    w.Put(uint8_t(0)); // spare, keeps the fields below in the order of the struct
    for (uint32_t v :
         {p.srcHost, p.dstHost, p.dstQpn, p.psn, p.sackPsn, p.payload, p.frameBytes, p.ingressPort})
    {
        w.Put(v);
    }
    w.Put(p.intBytes);
    w.Put(p.dmaLength);
    w.Put(p.remoteVa);
    w.Put(p.msn);
    for (uint16_t q : p.pfcQuanta)
    {
        w.Put(q);
    }
    w.Put(p.sendTimePs);
    w.Put(p.uid);
    w.Put(uint16_t(p.intHops.size()));
    for (const IntHop& h : p.intHops)
    {
        w.Put(h.rateBps);
        w.Put(h.tsPs);
        w.Put(h.txBytes);
        w.Put(h.qlenBytes);
    }
    return n;
}

FabricPacket*
DecodeFrame(const Packet& packet, uint64_t* epoch)
{
    const uint32_t n = packet.GetSize();
    NS_ABORT_MSG_IF(n < kFixedBytes || n > kFixedBytes + kHopBytes * kMaxEncodedIntHops,
                    "DecodeFrame: " << n << " bytes is no frame encoding");
    uint8_t buf[kFixedBytes + kHopBytes * kMaxEncodedIntHops];
    packet.CopyData(buf, n);
    return DecodeFrameFrom(buf, n, epoch);
}

FabricPacket*
DecodeFrameFrom(const uint8_t* buf, uint32_t n, uint64_t* epoch)
{
    NS_ABORT_MSG_IF(n < kFixedBytes || n > kFixedBytes + kHopBytes * kMaxEncodedIntHops,
                    "DecodeFrame: " << n << " bytes is no frame encoding");
    Reader r(buf, buf + n);
    NS_ABORT_MSG_IF(r.Get<uint8_t>() != kVersion, "DecodeFrame: unknown encoding version");
    *epoch = r.Get<uint64_t>();
    auto* p = new FabricPacket;
    const uint8_t type = r.Get<uint8_t>();
    NS_ABORT_MSG_IF(type > uint8_t(FrameType::Pfc), "DecodeFrame: frame type " << int(type));
    p->type = FrameType(type);
    p->priority = r.Get<uint8_t>();
    p->opcode = r.Get<uint8_t>();
    p->ttl = r.Get<uint8_t>();
    p->syndrome = r.Get<uint8_t>();
    const uint8_t flags = r.Get<uint8_t>();
    p->ecnCapable = flags & 1;
    p->ce = flags & 2;
    p->ackReq = flags & 4;
    p->ecnEcho = flags & 8;
    p->hasSack = flags & 16;
    p->sport = r.Get<uint16_t>();
    p->dport = r.Get<uint16_t>();
    p->pfcClassEnable = r.Get<uint8_t>();
    r.Get<uint8_t>();
    for (uint32_t* v : {&p->srcHost,
                        &p->dstHost,
                        &p->dstQpn,
                        &p->psn,
                        &p->sackPsn,
                        &p->payload,
                        &p->frameBytes,
                        &p->ingressPort})
    {
        *v = r.Get<uint32_t>();
    }
    p->intBytes = r.Get<uint32_t>();
    p->dmaLength = r.Get<uint32_t>();
    p->remoteVa = r.Get<uint64_t>();
    p->msn = r.Get<uint32_t>();
    for (uint16_t& q : p->pfcQuanta)
    {
        q = r.Get<uint16_t>();
    }
    p->sendTimePs = r.Get<int64_t>();
    p->uid = r.Get<uint64_t>();
    const uint16_t hops = r.Get<uint16_t>();
    p->intHops.resize(hops);
    for (IntHop& h : p->intHops)
    {
        h.rateBps = r.Get<uint64_t>();
        h.tsPs = r.Get<uint64_t>();
        h.txBytes = r.Get<uint64_t>();
        h.qlenBytes = r.Get<uint32_t>();
    }
    NS_ABORT_MSG_IF(!r.AtEnd(), "DecodeFrame: " << n << " bytes for " << hops << " INT hops");
    return p;
}

} // namespace ns3
