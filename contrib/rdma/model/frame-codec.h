/*
 * A frame as bytes for the trip to another MPI rank (ns-3's distributed engine): every field of
 * a FabricPacket (the payload as its length only) and the channel epoch it was sent in, in an
 * ns3::Packet that ns-3's MpiInterface carries. Not the wire format: the pcap serialiser
 * (roce-headers.h) writes that, one way.
 */
#ifndef FABRICSIM_FRAME_CODEC_H
#define FABRICSIM_FRAME_CODEC_H

#include "fabric-packet.h"

#include "ns3/packet.h"

namespace ns3
{

/// Bytes of a frame's encoding: a fixed part and 28 per INT hop.
uint32_t EncodedFrameBytes(const FabricPacket& p);

/**
 * The most INT hops an encoding carries: ns-3's MPI receive buffers hold 2,000 bytes
 * (MAX_MPI_MSG_SIZE), of which its own fields take 16 and the packet's serialisation a little.
 */
constexpr uint32_t kMaxEncodedIntHops = 64;

/// The largest encoding (kMaxEncodedIntHops INT hops).
uint32_t MaxEncodedFrameBytes();

/// \p p and \p epoch as bytes (a frame with more than kMaxEncodedIntHops INT hops aborts).
Ptr<Packet> EncodeFrame(const FabricPacket& p, uint64_t epoch);

/// The same bytes written to \p out (room for MaxEncodedFrameBytes); returns how many.
uint32_t EncodeFrameTo(const FabricPacket& p, uint64_t epoch, uint8_t* out);

/// The frame EncodeFrame wrote, new and owned by the caller, and its epoch in \p epoch. An
/// encoding it did not write aborts (the bytes come from another rank of this same build).
FabricPacket* DecodeFrame(const Packet& packet, uint64_t* epoch);

/// The same from \p n bytes at \p data.
FabricPacket* DecodeFrameFrom(const uint8_t* data, uint32_t n, uint64_t* epoch);

} // namespace ns3

#endif
