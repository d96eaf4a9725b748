// The ideal FCT (base RTT + wire bytes at the bottleneck) against its closed form over the range a
// user can give: flows of 1 B to 1 TB, links of 1 Mb/s to 3.2 Tb/s, MTU 256 B to 9 KB, paths of
// 1 to 8 hops. Where the closed form does not fit int64 ps the helper must throw, never wrap.
#include "unit-conversions.h"

#include "ns3/fabric-topology-helper.h"
#include "ns3/simulator.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

using namespace ns3;
using nlohmann::json;

namespace
{

const double kRates[] = {1e6, 1e9, 100e9, 400e9, 3.2e12};

/// Two hosts joined by a chain of `hops` links (hops - 1 switches); link i runs at rate(i).
fabricsim::Topology
Chain(uint32_t hops)
{
    json nodes
        = json::array({{{"name", "a"}, {"kind", "host"}}, {{"name", "b"}, {"kind", "host"}}});
    json links = json::array();
    std::string prev = "a";
    for (uint32_t i = 0; i < hops; ++i)
    {
        const std::string next = i + 1 == hops ? "b" : "s" + std::to_string(i);
        if (next != "b")
        {
            nodes.push_back({{"name", next}, {"kind", "switch"}});
        }
        links.push_back({{"a", prev},
                         {"b", next},
                         {"rate", kRates[(hops + i) % 5]},
                         {"delay", std::to_string(100 * (i + 1)) + "ns"}});
        prev = next;
    }
    return fabricsim::BuildTopology({{"type", "custom"}, {"nodes", nodes}, {"links", links}},
                                    "chain");
}

/// The closed form, from the frame sizes of reference/: data frame = payload + 62 B, ACK 66 B,
/// 20 B of preamble and gap per frame on the wire, RETH (16 B) once per message.
long double
ClosedFormPs(const fabricsim::Topology& topo, uint32_t mtu, uint64_t bytes)
{
    auto tx = [](long double wire, long double bps)
    {
        return std::floor(wire * 8e12L / bps);
    };
    long double base = 0;
    long double bottleneck = 1e30L;
    for (const auto& l : topo.links)
    {
        const long double r = l.spec.rateBps;
        base += 2.0L * l.spec.delayPs + tx(mtu + 82, r) + tx(66 + 20, r);
        bottleneck = std::min(bottleneck, r);
    }
    const long double packets = std::max<long double>(1, std::ceil((long double)bytes / mtu));
    return base + tx((long double)bytes + packets * 82 + 16, bottleneck);
}

} // namespace

TEST(IdealFct, MatchesClosedFormFromOneByteToOneTerabyte)
{
    const uint64_t sizes[] = {1,
                              255,
                              1000,
                              1001,
                              9000,
                              2305843,
                              2400000,
                              3000000,
                              30000000,
                              1000000000,
                              68719476736,
                              1000000000000};
    const uint32_t mtus[] = {256, 1000, 4096, 9000};
    const long double maxPs = (long double)std::numeric_limits<int64_t>::max();
    int checked = 0;
    int refused = 0;
    for (uint32_t hops = 1; hops <= 8; ++hops)
    {
        const fabricsim::Topology topo = Chain(hops);
        for (uint32_t mtu : mtus)
        {
            FabricTopologyHelper fabric(topo);
            fabric.SetMtu(mtu);
            fabric.Install();
            for (uint64_t bytes : sizes)
            {
                const long double expect = ClosedFormPs(topo, mtu, bytes);
                if (expect > maxPs)
                {
                    EXPECT_THROW(fabric.IdealFct(0, 1, bytes), fabricsim::UnitOverflow);
                    ++refused;
                    continue;
                }
                // Each of the 2 x hops + 1 terms is floored once: exact to the picosecond.
                EXPECT_NEAR(
                    (long double)fabric.IdealFct(0, 1, bytes).GetPicoSeconds(), expect, 0.5L)
                    << bytes << " B, MTU " << mtu << ", " << hops << " hops";
                ++checked;
            }
            Simulator::Destroy();
        }
    }
    EXPECT_GT(checked, 300);
    EXPECT_GT(refused, 0); // 1 TB behind a 1 Mb/s link: 1.3e19 ps with headers
}
