// The SwitchPort "QueueBytes" trace source, connected by Config path as a scenario program would:
// it follows every change of the egress queues and agrees with the port's own counters.
#include "ns3/config.h"
#include "ns3/fabric-topology-helper.h"
#include "ns3/fabric-traffic-helper.h"
#include "ns3/simulator.h"

#include <gtest/gtest.h>

#include <array>
#include <map>
#include <string>

using namespace ns3;

namespace
{

/// What the trace reported for one switch port.
struct PortTrace
{
    uint64_t events = 0;
    uint64_t maxTotal = 0;
    uint64_t lastTotal = 0;
    std::array<uint64_t, 8> classBytes{};
    uint64_t inconsistencies = 0;   ///< events whose total is not the sum of the class values
    uint64_t counterMismatches = 0; ///< events that disagree with the port's own counters
};

/// Device index in a context such as "/NodeList/3/DeviceList/1/$ns3::SwitchPort/QueueBytes".
uint32_t
DeviceIndex(const std::string& context)
{
    const std::string key = "/DeviceList/";
    auto at = context.find(key);
    return at == std::string::npos ? UINT32_MAX
                                   : uint32_t(std::stoul(context.substr(at + key.size())));
}

struct Recorder
{
    Ptr<Node> node;
    std::map<uint32_t, PortTrace> ports; ///< by device index

    void Trace(std::string context, uint8_t prio, uint64_t classBytes, uint64_t totalBytes)
    {
        uint32_t dev = DeviceIndex(context);
        PortTrace& t = ports[dev];
        t.events++;
        t.classBytes.at(prio) = classBytes;
        uint64_t sum = 0;
        for (uint64_t b : t.classBytes)
        {
            sum += b;
        }
        t.inconsistencies += (sum != totalBytes);
        t.maxTotal = std::max(t.maxTotal, totalBytes);
        t.lastTotal = totalBytes;
        Ptr<SwitchPort> port = DynamicCast<SwitchPort>(node->GetDevice(dev));
        t.counterMismatches += (!port || port->QueueBytes(prio) != classBytes
                                || port->TotalQueueBytes() != totalBytes);
    }
};

} // namespace

TEST(QueueTrace, ConfigPathFollowsEveryEgressQueueChange)
{
    Config::Reset();
    // 3-to-1 incast at line rate without congestion control: the receiver's port must queue.
    fabricsim::Topology topo
        = fabricsim::BuildTopology({{"type", "single-switch"}, {"hosts", 4}}, "test");
    FabricTopologyHelper fabric(topo);
    fabric.Install();
    ASSERT_EQ(fabric.GetAllSwitches().size(), 1u);
    Ptr<FabricSwitch> sw = fabric.GetAllSwitches()[0];
    Recorder rec;
    rec.node = sw->GetObject<Node>();
    ASSERT_TRUE(rec.node);

    // Every device of every node: the $ns3::SwitchPort step keeps only switch ports (NICs lack it).
    Config::Connect("/NodeList/*/DeviceList/*/$ns3::SwitchPort/QueueBytes",
                    MakeCallback(&Recorder::Trace, &rec));

    FabricTrafficHelper traffic(fabric);
    ObjectFactory none = CongestionControlFactory::Get("none");
    for (uint32_t s = 0; s < 3; ++s)
    {
        traffic.AddFlow(s, 3, 300000, Time(0), 3, none);
    }
    Simulator::Stop(MilliSeconds(50));
    Simulator::Run();
    ASSERT_EQ(traffic.CompletedFlows(), 3u);

    ASSERT_FALSE(rec.ports.empty());
    uint64_t peak = 0;
    for (const auto& [dev, t] : rec.ports)
    {
        Ptr<SwitchPort> port = DynamicCast<SwitchPort>(rec.node->GetDevice(dev));
        ASSERT_TRUE(port) << "device " << dev << " traced but is not a switch port";
        EXPECT_EQ(t.inconsistencies, 0u) << "device " << dev;
        EXPECT_EQ(t.counterMismatches, 0u) << "device " << dev;
        // Enqueue and dequeue both report: an even number of events, back to empty at the end.
        EXPECT_EQ(t.events % 2, 0u) << "device " << dev;
        EXPECT_EQ(t.lastTotal, 0u) << "device " << dev;
        EXPECT_EQ(t.maxTotal, port->MaxQueueBytes()) << "device " << dev;
        peak = std::max(peak, t.maxTotal);
    }
    // Three senders at line rate into one port: a queue of well over one frame builds up.
    EXPECT_GT(peak, 10000u);
    // Every port that forwarded anything was traced (data toward the receiver, ACKs back).
    EXPECT_EQ(rec.ports.size(), uint64_t(sw->GetNPorts()));
    Simulator::Destroy();
}

TEST(QueueTrace, DisconnectedSinkHearsNothingMore)
{
    Config::Reset();
    fabricsim::Topology topo
        = fabricsim::BuildTopology({{"type", "single-switch"}, {"hosts", 3}}, "test");
    FabricTopologyHelper fabric(topo);
    fabric.Install();
    Ptr<FabricSwitch> sw = fabric.GetAllSwitches()[0];
    Recorder rec;
    rec.node = sw->GetObject<Node>();
    std::string path = "/NodeList/" + std::to_string(rec.node->GetId())
                       + "/DeviceList/*/$ns3::SwitchPort/QueueBytes";
    auto cb = MakeCallback(&Recorder::Trace, &rec);
    Config::Connect(path, cb);
    FabricTrafficHelper traffic(fabric);
    ObjectFactory none = CongestionControlFactory::Get("none");
    traffic.AddFlow(0, 2, 100000, Time(0), 3, none);
    traffic.AddFlow(1, 2, 100000, MicroSeconds(500), 3, none);
    // Stop listening between the two flows: only the first flow's frames are counted.
    uint64_t before = 0;
    Simulator::Schedule(MicroSeconds(400),
                        [&]()
                        {
                            for (const auto& [dev, t] : rec.ports)
                            {
                                before += t.events;
                            }
                            Config::Disconnect(path, cb);
                        });
    Simulator::Run();
    ASSERT_EQ(traffic.CompletedFlows(), 2u);
    uint64_t after = 0;
    for (const auto& [dev, t] : rec.ports)
    {
        after += t.events;
    }
    EXPECT_GT(before, 0u);
    EXPECT_EQ(after, before);
    Simulator::Destroy();
}
