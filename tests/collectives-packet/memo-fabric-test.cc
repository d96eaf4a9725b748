/*
 * The packet transport's memo interface (memo-fabric.h): the part of the fabric a group
 * reaches is at rest between identical collectives with equal states; a queued frame, a pause
 * or a pending congestion-control timer takes it out of rest; a CNP changes the signal state;
 * and a span recorded once, written in place of simulating it, leaves a fabric on which the
 * next collective runs exactly as on the fabric that simulated it.
 */
#include "packet-test-util.h"
#include "packet-transport.h"

#include "ns3/fabric-setup.h"
#include "ns3/simulator.h"

#include <gtest/gtest.h>

namespace fabricsim
{
namespace
{

using nlohmann::json;

class Fabric
{
  public:
    explicit Fabric(const json& doc)
        : m_sc(test::Scenario(doc))
    {
        ConfigureSimulator(m_sc, {});
        m_fabric = InstallFabric(m_sc);
        PacketTransportOptions o;
        o.m_priority = m_sc.transport.priority;
        m_transport = std::make_unique<PacketTransport>(
            *m_fabric, CcFactory("dcqcn", "test.json", "transport.cc"), o);
    }

    ~Fabric()
    {
        m_transport.reset();
        m_fabric.reset();
        ns3::Simulator::Destroy();
    }

    /// A ring of sends h -> h + 1 among the group, run until every message is delivered and
    /// then 50 us more, so that the last ACKs land; returns the deliveries' times.
    std::vector<int64_t> Ring(uint64_t bytes)
    {
        std::vector<int64_t> at(kGroup.size(), -1);
        for (size_t i = 0; i < kGroup.size(); ++i)
        {
            m_transport->Send(kGroup[i],
                              kGroup[(i + 1) % kGroup.size()],
                              0,
                              bytes,
                              [this, &at, i]() { at[i] = m_transport->NowPs(); });
        }
        m_transport->Run();
        Idle(50000000);
        return at;
    }

    void Idle(int64_t ps)
    {
        m_transport->Schedule(ps, nullptr);
        m_transport->Run();
    }

    const std::vector<uint32_t> kGroup{0, 1, 2, 3};
    FabricScenario m_sc;
    std::unique_ptr<ns3::FabricTopologyHelper> m_fabric;
    std::unique_ptr<PacketTransport> m_transport;
};

const json kDoc = test::SingleSwitchScenario(6, "100Gbps");

TEST(MemoFabric, IdenticalCollectivesOnAnIdleFabricGiveEqualStatesAndSpans)
{
    Fabric f(kDoc);
    const FabricProbe before = f.m_transport->Probe(f.kGroup);
    EXPECT_EQ(before.notAtRest, "");
    f.Ring(200000);
    const FabricProbe p1 = f.m_transport->Probe(f.kGroup);
    const uint64_t s2 = f.m_transport->BeginSpan(f.kGroup);
    f.Ring(200000);
    const FabricSpan span2 = f.m_transport->EndSpan(s2);
    const FabricProbe p2 = f.m_transport->Probe(f.kGroup);
    const uint64_t s3 = f.m_transport->BeginSpan(f.kGroup);
    f.Ring(200000);
    const FabricSpan span3 = f.m_transport->EndSpan(s3);
    const FabricProbe p3 = f.m_transport->Probe(f.kGroup);

    EXPECT_EQ(p1.notAtRest, "");
    EXPECT_EQ(p2.notAtRest, "");
    EXPECT_EQ(p3.notAtRest, "");
    EXPECT_NE(before.state, p1.state); // the first ring opened the queue pairs
    EXPECT_EQ(p1.state, p2.state);
    EXPECT_EQ(p2.state, p3.state);
    EXPECT_EQ(span2.unusable, "");
    EXPECT_FALSE(span2.signalled);
    EXPECT_EQ(span2.delta, span3.delta);
    // A ring of another size leaves another delta (more frames, sequence numbers, bytes).
    const uint64_t s4 = f.m_transport->BeginSpan(f.kGroup);
    f.Ring(300000);
    EXPECT_NE(f.m_transport->EndSpan(s4).delta, span3.delta);
}

TEST(MemoFabric, TheFirstCollectiveOnNewQueuePairsCannotBeReplayed)
{
    Fabric f(kDoc);
    const uint64_t s = f.m_transport->BeginSpan(f.kGroup);
    f.Ring(100000);
    EXPECT_EQ(f.m_transport->EndSpan(s).unusable, "queue pairs opened");
}

TEST(MemoFabric, AQueuedFrameAPauseOrAPendingTimerIsNotRest)
{
    {
        // An incast of three onto host 3: frames wait at the switch port toward it.
        Fabric f(kDoc);
        std::string seen;
        std::string others;
        for (uint32_t src : {0u, 1u, 2u})
        {
            f.m_transport->Send(src, 3, 0, 2000000, nullptr);
        }
        f.m_transport->Schedule(30000000,
                                [&]()
                                {
                                    seen = f.m_transport->Probe(f.kGroup).notAtRest;
                                    others = f.m_transport->Probe({4, 5}).notAtRest;
                                });
        f.m_transport->Run();
        EXPECT_NE(seen.find("its buffer holds"), std::string::npos) << seen;
        // Hosts 4 and 5 send nothing, but through the same switch: its buffer is shared, so
        // their part of the fabric is not at rest either.
        EXPECT_NE(others.find("its buffer holds"), std::string::npos) << others;
        // The incast's CNPs slowed the senders: at rest again once DCQCN is back at line rate.
        f.Idle(100000000000);
        EXPECT_EQ(f.m_transport->Probe({4, 5}).notAtRest, "");
    }
    {
        // The switch pauses host 0's class 3: the port asks, the NIC obeys.
        Fabric f(kDoc);
        f.Ring(10000);
        auto sw = f.m_fabric->GetAllSwitches().at(0);
        ns3::Ptr<ns3::SwitchPort> toHost0;
        for (uint32_t p = 0; p < sw->GetNPorts(); ++p)
        {
            auto peer = sw->GetPort(p)->GetFabricChannel()->GetPeer(PeekPointer(sw->GetPort(p)));
            if (peer == f.m_fabric->GetNic(0))
            {
                toHost0 = sw->GetPort(p);
            }
        }
        ASSERT_TRUE(toHost0);
        toHost0->PausePeer(3);
        std::string asked;
        f.m_transport->Schedule(100000, // 100 ns: the PFC frame is sent and on the wire
                                [&]() { asked = f.m_transport->Probe(f.kGroup).notAtRest; });
        f.m_transport->Run();
        EXPECT_NE(asked.find("pausing its peer on class 3"), std::string::npos) << asked;
        f.Idle(2000000); // the PFC frame crosses the 1 us link
        ns3::MemoProbe nic(ns3::Simulator::Now());
        f.m_fabric->GetNic(0)->ProbeRest(nic);
        EXPECT_NE(nic.Blocker().find("class 3 paused"), std::string::npos) << nic.Blocker();
    }
    {
        // A CNP arms DCQCN's rate-increase timer; once the rate is back at line rate the
        // fabric rests again, with the base state as before but alpha's state changed.
        Fabric f(kDoc);
        f.Ring(10000);
        const FabricProbe rested = f.m_transport->Probe(f.kGroup);
        auto cc = f.m_fabric->GetNic(0)->GetQueuePairs().at(0)->GetCc();
        cc->OnCnp();
        const std::string armed = f.m_transport->Probe(f.kGroup).notAtRest;
        EXPECT_NE(armed.find("rate-increase timer"), std::string::npos) << armed;
        f.Idle(100000000000); // 100 ms: DCQCN recovers line rate long before
        const FabricProbe recovered = f.m_transport->Probe(f.kGroup);
        EXPECT_EQ(recovered.notAtRest, "");
        EXPECT_EQ(cc->GetRateBps(), cc->GetLineRateBps());
        EXPECT_EQ(recovered.state, rested.state);
        EXPECT_NE(recovered.signalState, rested.signalState);
    }
}

TEST(MemoFabric, AnIncastThatMarksFramesIsSignalledAndCannotBeReplayed)
{
    Fabric f(kDoc);
    f.Ring(10000);
    const uint64_t s = f.m_transport->BeginSpan(f.kGroup);
    for (uint32_t src : {0u, 1u, 2u})
    {
        f.m_transport->Send(src, 3, 0, 4000000, nullptr);
    }
    f.m_transport->Run();
    f.Idle(50000000);
    const FabricSpan span = f.m_transport->EndSpan(s);
    EXPECT_TRUE(span.signalled);
    // Marking between Kmin and Kmax draws at random: a replay could not draw alike.
    EXPECT_NE(span.unusable.find("random ECN marking"), std::string::npos) << span.unusable;
}

TEST(MemoFabric, AWrittenSpanLeavesTheFabricAsSimulatingItWould)
{
    // Fabric A simulates rings 1-4; fabric B simulates rings 1-2, writes ring 2's span in
    // place of ring 3 and simulates ring 4. Ring 4 must run alike, to the picosecond.
    std::vector<int64_t> ringA;
    FabricSpan ring4A;
    FabricProbe afterRing3A;
    ns3::FabricDeviceStats statsA;
    {
        Fabric a(kDoc);
        a.Ring(200000);
        a.Ring(200000);
        a.Ring(200000);
        afterRing3A = a.m_transport->Probe(a.kGroup);
        const uint64_t s = a.m_transport->BeginSpan(a.kGroup);
        ringA = a.Ring(200000);
        ring4A = a.m_transport->EndSpan(s);
        statsA = a.m_fabric->GetNic(2)->GetStats();
    }
    Fabric b(kDoc);
    b.Ring(200000);
    const int64_t start2 = b.m_transport->NowPs();
    const uint64_t s2 = b.m_transport->BeginSpan(b.kGroup);
    b.Ring(200000);
    const FabricSpan span2 = b.m_transport->EndSpan(s2);
    const int64_t length = b.m_transport->NowPs() - start2;
    ASSERT_EQ(span2.unusable, "");
    b.m_transport->ApplySpan(b.kGroup, b.m_transport->NowPs(), span2);
    b.Idle(length);
    EXPECT_EQ(b.m_transport->Probe(b.kGroup).state, afterRing3A.state);
    const uint64_t s4 = b.m_transport->BeginSpan(b.kGroup);
    const std::vector<int64_t> ringB = b.Ring(200000);
    EXPECT_EQ(ringB, ringA);
    EXPECT_EQ(b.m_transport->EndSpan(s4).delta, ring4A.delta);
    const ns3::FabricDeviceStats statsB = b.m_fabric->GetNic(2)->GetStats();
    EXPECT_EQ(statsB.txFrames, statsA.txFrames);
    EXPECT_EQ(statsB.rxBytes, statsA.rxBytes);
    EXPECT_EQ(b.m_fabric->GetNic(2)->GetQueuePairs().at(0)->GetRetransmits(), 0u);
}

} // namespace
} // namespace fabricsim
