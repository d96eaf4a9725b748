// DCQCN: N long flows on one bottleneck converge to fair share with a bounded queue and a
// busy link (reference target 3), in the setting of the DCQCN fluid model: 40G links, the
// paper's parameters (Kmin 5 KB, Kmax 200 KB, Pmax 1%). Flows start staggered so that
// convergence has work to do.
#include "ns3/config.h"
#include "ns3/fabric-topology-helper.h"
#include "ns3/fabric-traffic-helper.h"
#include "ns3/rng-seed-manager.h"
#include "ns3/simulator.h"

#include <gtest/gtest.h>

using namespace ns3;

namespace
{

struct FairnessResult
{
    double jain = 0;
    double utilisation = 0;
    uint64_t maxQueue = 0; ///< max bottleneck queue sampled in the measurement window
    uint64_t drops = 0;
};

FairnessResult
RunBottleneck(uint32_t n, const std::string& cc)
{
    Config::Reset();
    RngSeedManager::SetSeed(7);
    fabricsim::Topology topo;
    topo.type = "single-switch";
    uint32_t sw = topo.AddSwitch("sw0", 0);
    fabricsim::LinkSpec l;
    l.rateBps = 40e9; // 1 us delay
    for (uint32_t h = 0; h <= n; ++h)
    {
        uint32_t id = topo.AddHost("host" + std::to_string(h), h);
        topo.AddLink(id, sw, l);
    }
    FabricTopologyHelper fabric(topo);
    EcnConfig ecn;
    ecn.kminBytes = 5000;
    ecn.kmaxBytes = 200000;
    ecn.pmax = 0.01;
    ecn.refRateBps = 0; // absolute, as in the paper
    fabric.SetEcn(ecn);
    fabric.Install();
    fabric.AssignStreams(1);
    FabricTrafficHelper traffic(fabric);
    ObjectFactory f = CongestionControlFactory::Get(cc);
    for (uint32_t i = 0; i < n; ++i)
    {
        traffic.AddFlow(i, n, 1000000000ULL, MicroSeconds(200 * i), 3, f);
    }
    // Goodput per flow in the window [t1, t2] after every flow started.
    Time t1 = MilliSeconds(12);
    Time t2 = MilliSeconds(20);
    auto rxNic = fabric.GetNic(n);
    std::vector<uint64_t> at1(n), at2(n);
    Simulator::Schedule(t1,
                        [&]()
                        {
                            for (uint32_t i = 0; i < n; ++i)
                                at1[i] = rxNic->GetRxQueuePairs()[i].deliveredBytes;
                        });
    Simulator::Schedule(t2,
                        [&]()
                        {
                            for (uint32_t i = 0; i < n; ++i)
                                at2[i] = rxNic->GetRxQueuePairs()[i].deliveredBytes;
                        });
    auto port = fabric.GetSwitch(0)->GetPort(n);
    uint64_t maxQ = 0;
    for (Time t = t1; t < t2; t += MicroSeconds(10))
    {
        Simulator::Schedule(t, [&]() { maxQ = std::max(maxQ, port->TotalQueueBytes()); });
    }
    Simulator::Stop(t2 + NanoSeconds(1));
    Simulator::Run();
    FairnessResult r;
    double sum = 0, sq = 0;
    for (uint32_t i = 0; i < n; ++i)
    {
        double x = double(at2[i] - at1[i]);
        sum += x;
        sq += x * x;
    }
    r.jain = sum * sum / (n * sq);
    // Payload goodput scaled to wire bytes (1082 wire bytes per 1000-byte payload frame).
    r.utilisation = sum * 1082.0 / 1000.0 * 8.0 / (40e9 * (t2 - t1).GetSeconds());
    r.maxQueue = maxQ;
    for (auto& s : fabric.GetAllSwitches())
        for (uint32_t p = 0; p < s->GetNPorts(); ++p)
            for (auto d : s->GetPort(p)->GetStats().drops)
                r.drops += d;
    Simulator::Destroy();
    return r;
}

} // namespace

class DcqcnFairness : public testing::TestWithParam<uint32_t>
{
};

TEST_P(DcqcnFairness, ConvergesToFairShare)
{
    FairnessResult r = RunBottleneck(GetParam(), "dcqcn-paper");
    std::cout << "flows=" << GetParam() << " jain=" << r.jain << " util=" << r.utilisation
              << " maxq=" << r.maxQueue << "\n";
    EXPECT_GE(r.jain, 0.95);
    EXPECT_GE(r.utilisation, 0.90);
    EXPECT_LT(r.maxQueue, 2u * 200000u); // held near Kmax, far below the PFC threshold
    EXPECT_EQ(r.drops, 0u);
}

INSTANTIATE_TEST_SUITE_P(Flows, DcqcnFairness, testing::Values(2u, 4u, 8u, 16u));
