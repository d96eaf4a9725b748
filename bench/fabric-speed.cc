// Speed benchmark: the load of bench/stock-ns3 (leaf-spine, every host sending at
// line rate to the host with the same index on the next leaf) carried by fabricsim's RoCE NICs
// and switches; or a k-ary fat-tree with a random permutation at line rate. Prints one JSON line:
// packet-hops (every frame arrival at any device: data, ACK, CNP, PFC), data-frame hops alone,
// wall seconds, rates, peak RSS.
//
//   fabric-speed --topo=leafspine --leaves=4 --spines=4 --hostsPerLeaf=8 --simMs=2
//   fabric-speed --topo=fattree --k=16 --simMs=0.2
#include "ns3/command-line.h"
#include "ns3/fabric-topology-helper.h"
#include "ns3/fabric-traffic-helper.h"
#include "ns3/rng-seed-manager.h"
#include "ns3/simulator.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <numeric>
#include <random>

using namespace ns3;

int
main(int argc, char** argv)
{
    Time::SetResolution(Time::PS);
    std::string topoKind = "leafspine";
    uint32_t leaves = 4, spines = 4, hostsPerLeaf = 8, k = 16;
    double simMs = 2.0;
    std::string rate = "100Gbps";
    uint32_t mtu = 1000;
    CommandLine cmd;
    cmd.AddValue("topo", "leafspine or fattree", topoKind);
    cmd.AddValue("leaves", "leaf switches", leaves);
    cmd.AddValue("spines", "spine switches", spines);
    cmd.AddValue("hostsPerLeaf", "hosts per leaf", hostsPerLeaf);
    cmd.AddValue("k", "fat-tree arity", k);
    cmd.AddValue("simMs", "simulated milliseconds of sending", simMs);
    cmd.AddValue("rate", "link rate", rate);
    cmd.AddValue("mtu", "RDMA payload per frame (the stock load uses 1000 B UDP payloads)", mtu);
    cmd.Parse(argc, argv);
    RngSeedManager::SetSeed(1);
    Simulator::SetScheduler(ObjectFactory("ns3::PriorityQueueScheduler"));

    nlohmann::json spec;
    nlohmann::json link = {{"rate", rate}, {"delay", "1us"}};
    if (topoKind == "fattree")
    {
        spec = {{"type", "fat-tree"}, {"k", k}, {"host_link", link}};
    }
    else
    {
        spec = {{"type", "leaf-spine"},
                {"leaves", leaves},
                {"spines", spines},
                {"hosts_per_leaf", hostsPerLeaf},
                {"host_link", link}};
    }
    auto t0 = std::chrono::steady_clock::now();
    fabricsim::Topology topo = fabricsim::BuildTopology(spec, "bench");
    FabricTopologyHelper fabric(topo);
    fabric.SetMtu(mtu);
    fabric.Install();
    double buildS = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    uint32_t n = topo.NumHosts();
    std::vector<uint32_t> dst(n);
    if (topoKind == "fattree")
    {
        std::iota(dst.begin(), dst.end(), 0);
        std::mt19937 rng(1);
        do
        {
            std::shuffle(dst.begin(), dst.end(), rng);
        } while (std::any_of(
            dst.begin(), dst.end(), [&](uint32_t d) { return d == uint32_t(&d - &dst[0]); }));
        for (uint32_t i = 0; i < n; ++i)
        {
            if (dst[i] == i)
            {
                std::swap(dst[i], dst[(i + 1) % n]);
            }
        }
    }
    else
    {
        for (uint32_t i = 0; i < n; ++i)
        {
            dst[i] = (i + hostsPerLeaf) % n;
        }
    }
    // Enough bytes to keep every sender busy for the whole run: the run is cut at simMs.
    uint64_t bytes = uint64_t(DataRate(rate).GetBitRate() / 8.0 * simMs * 1e-3 * 1.2);
    FabricTrafficHelper traffic(fabric);
    ObjectFactory none = CongestionControlFactory::Get("none");
    for (uint32_t i = 0; i < n; ++i)
    {
        traffic.AddFlow(i, dst[i], bytes, Time(0), 3, none);
    }
    Simulator::Stop(MicroSeconds(uint64_t(simMs * 1000)));
    auto t1 = std::chrono::steady_clock::now();
    Simulator::Run();
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
    uint64_t hops = 0, dataHops = 0;
    for (uint32_t id = 0; id < topo.nodes.size(); ++id)
    {
        Ptr<Node> node = fabric.GetNode(id);
        for (uint32_t d = 0; d < node->GetNDevices(); ++d)
        {
            auto dev = DynamicCast<FabricNetDevice>(node->GetDevice(d));
            hops += dev->GetStats().rxFrames;
            dataHops += dev->GetStats().rxDataFrames;
        }
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    std::cout << "{\"simulator\":\"fabricsim\",\"topology\":\"" << topoKind << "\",\"hosts\":" << n
              << ",\"packet_hops\":" << hops << ",\"data_packet_hops\":" << dataHops
              << ",\"wall_s\":" << wall << ",\"packet_hops_per_s\":" << hops / wall
              << ",\"data_packet_hops_per_s\":" << dataHops / wall
              << ",\"events\":" << Simulator::GetEventCount() << ",\"build_s\":" << buildS
              << ",\"peak_rss_mb\":" << ru.ru_maxrss / 1024.0 << "}" << std::endl;
    Simulator::Destroy();
    return 0;
}
