// Frames across MPI ranks: every field of every frame kind survives the encoding, the largest
// encoding fits ns-3's MPI receive buffer, and a fabric whose every link sends its frames as
// encodings to the far end's copy (as a partitioned run does, through a loopback here) runs
// exactly as one whose frames stay on the wire.
#include "ns3/config.h"
#include "ns3/fabric-topology-helper.h"
#include "ns3/fabric-traffic-helper.h"
#include "ns3/frame-codec.h"
#include "ns3/node-list.h"
#include "ns3/simulator.h"

#include <gtest/gtest.h>

#include <sstream>

using namespace ns3;

namespace
{

/// A frame of kind \p type with every field set to a value of its own (\p k varies them).
FabricPacket
FullFrame(FrameType type, uint32_t k)
{
    FabricPacket p;
    p.type = type;
    p.priority = uint8_t(3 + k);
    p.opcode = uint8_t(0x81 + k);
    p.ttl = uint8_t(61 - k);
    p.ecnCapable = k % 2;
    p.ce = (k + 1) % 2;
    p.ackReq = k % 2;
    p.ecnEcho = (k + 1) % 2;
    p.hasSack = k % 2;
    p.srcHost = 70000 + k;
    p.dstHost = 80000 + k;
    p.sport = uint16_t(49152 + k);
    p.dport = uint16_t(4791 + k);
    p.dstQpn = 0xabcdef + k;
    p.psn = 0xfffffe + k;
    p.sackPsn = 0x123456 + k;
    p.payload = 4096 - k;
    p.frameBytes = 4158 + k;
    p.ingressPort = 17 + k;
    p.intBytes = 2 + 32 * k;
    p.dmaLength = 1u << 30 | k;
    p.remoteVa = 0x7fff'0000'1234'5678ull + k;
    p.msn = 99991 + k;
    p.syndrome = uint8_t(0x60 + k);
    p.pfcClassEnable = uint8_t(0xa5 ^ k);
    for (int c = 0; c < 8; ++c)
    {
        p.pfcQuanta[c] = uint16_t(0xffff - 7 * c - k);
    }
    p.sendTimePs = -(int64_t(1) << 50) + k;
    p.uid = 0xfedc'ba98'7654'3210ull + k;
    for (uint32_t h = 0; h < k; ++h)
    {
        p.intHops.push_back({400'000'000'000ull + h, (1ull << 45) + h, (1ull << 40) + h, 1000 + h});
    }
    return p;
}

void
ExpectSameFrame(const FabricPacket& a, const FabricPacket& b)
{
    EXPECT_EQ(a.type, b.type);
    EXPECT_EQ(a.priority, b.priority);
    EXPECT_EQ(a.opcode, b.opcode);
    EXPECT_EQ(a.ttl, b.ttl);
    EXPECT_EQ(a.ecnCapable, b.ecnCapable);
    EXPECT_EQ(a.ce, b.ce);
    EXPECT_EQ(a.ackReq, b.ackReq);
    EXPECT_EQ(a.ecnEcho, b.ecnEcho);
    EXPECT_EQ(a.hasSack, b.hasSack);
    EXPECT_EQ(a.srcHost, b.srcHost);
    EXPECT_EQ(a.dstHost, b.dstHost);
    EXPECT_EQ(a.sport, b.sport);
    EXPECT_EQ(a.dport, b.dport);
    EXPECT_EQ(a.dstQpn, b.dstQpn);
    EXPECT_EQ(a.psn, b.psn);
    EXPECT_EQ(a.sackPsn, b.sackPsn);
    EXPECT_EQ(a.payload, b.payload);
    EXPECT_EQ(a.frameBytes, b.frameBytes);
    EXPECT_EQ(a.ingressPort, b.ingressPort);
    EXPECT_EQ(a.intBytes, b.intBytes);
    EXPECT_EQ(a.dmaLength, b.dmaLength);
    EXPECT_EQ(a.remoteVa, b.remoteVa);
    EXPECT_EQ(a.msn, b.msn);
    EXPECT_EQ(a.syndrome, b.syndrome);
    EXPECT_EQ(a.pfcClassEnable, b.pfcClassEnable);
    for (int c = 0; c < 8; ++c)
    {
        EXPECT_EQ(a.pfcQuanta[c], b.pfcQuanta[c]) << "class " << c;
    }
    EXPECT_EQ(a.sendTimePs, b.sendTimePs);
    EXPECT_EQ(a.uid, b.uid);
    ASSERT_EQ(a.intHops.size(), b.intHops.size());
    for (size_t h = 0; h < a.intHops.size(); ++h)
    {
        EXPECT_EQ(a.intHops[h].rateBps, b.intHops[h].rateBps);
        EXPECT_EQ(a.intHops[h].tsPs, b.intHops[h].tsPs);
        EXPECT_EQ(a.intHops[h].txBytes, b.intHops[h].txBytes);
        EXPECT_EQ(a.intHops[h].qlenBytes, b.intHops[h].qlenBytes);
    }
}

} // namespace

TEST(FrameCodec, EveryFieldOfEveryFrameKindRoundTrips)
{
    const FrameType kinds[]
        = {FrameType::Data, FrameType::Ack, FrameType::Nack, FrameType::Cnp, FrameType::Pfc};
    for (FrameType type : kinds)
    {
        for (uint32_t k : {0u, 1u, 5u})
        {
            SCOPED_TRACE("frame type " + std::to_string(int(type)) + ", " + std::to_string(k)
                         + " INT hops");
            const FabricPacket sent = FullFrame(type, k);
            const uint64_t epoch = 0x0123'4567'89ab'cdefull + k;
            Ptr<Packet> bytes = EncodeFrame(sent, epoch);
            EXPECT_EQ(bytes->GetSize(), EncodedFrameBytes(sent));
            uint64_t got = 0;
            FabricPacket* back = DecodeFrame(*bytes, &got);
            EXPECT_EQ(got, epoch);
            ExpectSameFrame(sent, *back);
            delete back;
        }
    }
}

TEST(FrameCodec, TheLargestEncodingFitsNs3MpiBuffers)
{
    // granted-time-window-mpi-interface.cc: a message is the packet's serialisation plus 16
    // bytes (arrival time, node, device) in a MAX_MPI_MSG_SIZE = 2,000 byte buffer.
    const FabricPacket widest = FullFrame(FrameType::Data, kMaxEncodedIntHops);
    Ptr<Packet> bytes = EncodeFrame(widest, 1);
    EXPECT_LE(bytes->GetSerializedSize() + 16, 2000u);
    uint64_t epoch = 0;
    FabricPacket* back = DecodeFrame(*bytes, &epoch);
    ExpectSameFrame(widest, *back);
    delete back;
}

namespace
{

/// The far end of the loopback: the encoding decoded when it arrives.
void
ArriveEncoded(FabricChannel* ch, int end, Ptr<Packet> bytes)
{
    uint64_t epoch = 0;
    FabricPacket* p = DecodeFrame(*bytes, &epoch);
    ch->ReceiveRemote(end, p, epoch);
}

/// What MPI does for a frame to another rank, in one process: the frame's encoding arrives at
/// the far end's channel as a plain event at its arrival time.
void
Loopback(FabricChannel* ch, int end, const FabricPacket& p, uint64_t epoch, Time arrival)
{
    Simulator::Schedule(arrival - Simulator::Now(), &ArriveEncoded, ch, end, EncodeFrame(p, epoch));
}

/// FCTs and every device's counters after an incast plus all-to-all on a leaf-spine with \p cc,
/// PFC on; with \p remote every link's both ends go through the encoding.
std::string
RunFingerprint(const std::string& cc, bool remote, uint64_t* remoteFrames)
{
    Config::Reset();
    // The fabric's event order (what every run uses): arrivals at one time by where they arrive.
    Simulator::SetScheduler(ObjectFactory("ns3::FabricScheduler"));
    nlohmann::json spec
        = {{"type", "leaf-spine"}, {"leaves", 2}, {"spines", 2}, {"hosts_per_leaf", 4}};
    fabricsim::Topology topo = fabricsim::BuildTopology(spec, "test");
    FabricTopologyHelper fabric(topo);
    fabric.Install();
    fabric.AssignStreams(1000); // as every run does: the second run of a process draws the same
    uint64_t links = topo.links.size();
    if (remote)
    {
        for (uint32_t l = 0; l < links; ++l)
        {
            Ptr<FabricChannel> ch = fabric.GetLink(l);
            for (int end = 0; end < 2; ++end)
            {
                ch->SetRemoteEnd(end, MakeBoundCallback(&Loopback, PeekPointer(ch), end));
            }
        }
    }
    FabricTrafficHelper traffic(fabric);
    ObjectFactory f = CongestionControlFactory::Get(cc);
    for (uint32_t s = 1; s < 8; ++s)
    {
        traffic.AddFlow(s, 0, 300000, NanoSeconds(100 * s), 3, f);
        traffic.AddFlow(s, (s + 3) % 8, 100000, MicroSeconds(5), 3, f);
    }
    Simulator::Stop(MilliSeconds(50));
    Simulator::Run();
    std::ostringstream os;
    traffic.WriteFctCsv(os);
    *remoteFrames = 0;
    for (uint32_t l = 0; l < links; ++l)
    {
        Ptr<FabricChannel> ch = fabric.GetLink(l);
        EXPECT_EQ(ch->RemoteFramesSent(), ch->RemoteFramesReceived()) << "link " << l;
        EXPECT_EQ(ch->InFlightFrames(), 0u) << "link " << l;
        *remoteFrames += ch->RemoteFramesReceived();
    }
    for (auto i = NodeList::Begin(); i != NodeList::End(); ++i)
    {
        for (uint32_t d = 0; d < (*i)->GetNDevices(); ++d)
        {
            auto dev = DynamicCast<FabricNetDevice>((*i)->GetDevice(d));
            if (!dev)
            {
                continue;
            }
            const FabricDeviceStats& st = dev->GetStats();
            os << (*i)->GetId() << "/" << d << " " << st.txFrames << " " << st.txBytes << " "
               << st.rxFrames << " " << st.rxBytes << " " << st.rxDataFrames << " "
               << st.txPfcFrames << " " << st.rxPfcFrames;
            for (uint64_t v : st.drops)
            {
                os << " " << v;
            }
            os << "\n";
        }
    }
    EXPECT_EQ(traffic.CompletedFlows(), 14u);
    Simulator::Destroy();
    return os.str();
}

} // namespace

TEST(FrameCodec, LinksThroughTheEncodingRunAsLinksOnTheWire)
{
    // DCQCN (CNPs, ECN echo), HPCC (INT hops stamped and echoed), PFC pauses of the incast.
    for (const std::string cc : {"dcqcn", "hpcc"})
    {
        SCOPED_TRACE(cc);
        uint64_t local = 0, remote = 0;
        const std::string wire = RunFingerprint(cc, false, &local);
        const std::string encoded = RunFingerprint(cc, true, &remote);
        EXPECT_EQ(local, 0u);
        EXPECT_GT(remote, 10000u); // every frame of the run crossed
        EXPECT_EQ(wire, encoded);
    }
}

namespace
{

/// Which of the frames sent toward end 1 of a lossy link are lost, with \p reverse frames sent
/// the other way in between (a link cut between two ranks: each rank's copy delivers one way).
std::vector<uint64_t>
LostTowardEndOne(uint32_t reverse)
{
    Config::Reset();
    Simulator::SetScheduler(ObjectFactory("ns3::FabricScheduler"));
    nlohmann::json spec
        = {{"type", "single-switch"},
           {"hosts", 2},
           {"host_link", {{"rate", "100Gbps"}, {"delay", "1us"}, {"loss_rate", 0.3}}}};
    fabricsim::Topology topo = fabricsim::BuildTopology(spec, "test");
    FabricTopologyHelper fabric(topo);
    fabric.Install();
    fabric.AssignStreams(1000);
    Ptr<FabricChannel> link = fabric.GetLink(0);
    std::vector<uint64_t> lost;
    Ptr<FabricNetDevice> end1 = DynamicCast<FabricNetDevice>(link->GetDevice(1));
    end1->TraceConnectWithoutContext(
        "Drop", MakeCallback(+[](std::vector<uint64_t>* v, const FabricPacket& p, DropReason) {
                    v->push_back(p.uid);
                }).Bind(&lost));
    auto send = [&link](int fromEnd, uint64_t uid, Time at)
    {
        Simulator::Schedule(at,
                            [link, fromEnd, uid]()
                            {
                                auto* p = new FabricPacket;
                                p->type = FrameType::Pfc; // no pause classes: only counted
                                p->frameBytes = RoceSize::kPfcFrame;
                                p->uid = uid;
                                auto* from = static_cast<FabricNetDevice*>(
                                    PeekPointer(link->GetDevice(fromEnd)));
                                link->Transmit(from, p, NanoSeconds(1));
                            });
    };
    for (uint64_t k = 0; k < 300; ++k)
    {
        send(0, k, NanoSeconds(10 * k));
        if (k < reverse)
        {
            send(1, 100000 + k, NanoSeconds(10 * k + 5));
        }
    }
    Simulator::Run();
    Simulator::Destroy();
    return lost;
}

} // namespace

TEST(FrameCodec, EachDirectionOfALossyLinkDrawsItsOwnLosses)
{
    const std::vector<uint64_t> alone = LostTowardEndOne(0);
    EXPECT_GT(alone.size(), 50u);
    EXPECT_LT(alone.size(), 130u);
    EXPECT_EQ(LostTowardEndOne(300), alone);
}
