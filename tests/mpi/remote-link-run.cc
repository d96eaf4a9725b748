// A fabric cut across MPI ranks, frames crossing through ns-3's MPI interface: prints, per
// rank, the FCTs of the flows its hosts send and the counters of its nodes' devices, for
// test_mpi_run.py to compare with the same fabric on one rank. Run under mpirun.
//
//   remote-link-run --split=0|1 [--cc=none|dcqcn] [--kernel=ns3::DistributedSimulatorImpl]
#include "partition.h"

#include "ns3/command-line.h"
#include "ns3/config.h"
#include "ns3/distributed-engine.h"
#include "ns3/fabric-topology-helper.h"
#include "ns3/fabric-traffic-helper.h"
#include "ns3/remote-links.h"
#include "ns3/simulator.h"

#include <cstdio>

using namespace ns3;

int
main(int argc, char** argv)
{
    Time::SetResolution(Time::PS);
    bool split = true;
    std::string cc = "dcqcn";
    std::string kernel = "ns3::DistributedSimulatorImpl";
    for (int i = 1; i < argc; ++i)
    {
        const std::string a = argv[i];
        if (a.rfind("--kernel=", 0) == 0)
        {
            kernel = a.substr(9);
        }
    }
    if (!fabricsim::StartDistributedEngine(&argc, &argv, kernel))
    {
        std::fprintf(stderr, "unknown kernel %s\n", kernel.c_str());
        fabricsim::StopDistributedEngine();
        return 2;
    }
    CommandLine cmd;
    cmd.AddValue("split", "cut the fabric across the ranks (else all on rank 0)", split);
    cmd.AddValue("cc", "congestion control", cc);
    cmd.AddValue("kernel", "ns-3's distributed kernel", kernel);
    cmd.Parse(argc, argv);
    const uint32_t rank = fabricsim::DistributedRank();

    Simulator::SetScheduler(ObjectFactory("ns3::FabricScheduler"));
    fabricsim::Topology topo = fabricsim::BuildTopology(
        {{"type", "leaf-spine"}, {"leaves", 2}, {"spines", 2}, {"hosts_per_leaf", 4}}, "test");
    fabricsim::Partition part
        = fabricsim::AutoPartition(topo, split ? fabricsim::DistributedRanks() : 1, "test");
    FabricTopologyHelper fabric(topo);
    fabric.SetSystemIds(part.rankOf);
    fabric.Install();
    fabric.AssignStreams(1000);
    fabricsim::RemoteLinks remote(fabric, rank);
    const uint32_t wired = remote.Wired();

    FabricTrafficHelper traffic(fabric);
    ObjectFactory f = CongestionControlFactory::Get(cc);
    for (uint32_t s = 1; s < 8; ++s)
    {
        traffic.AddFlow(s, 0, 200000, NanoSeconds(100 * s), 3, f); // incast, across the spines
        traffic.AddFlow(s, (s + 3) % 8, 100000, MicroSeconds(5), 3, f);
    }
    Simulator::Stop(MilliSeconds(5));
    Simulator::Run();

    uint64_t crossed = 0;
    for (uint32_t l = 0; l < topo.links.size(); ++l)
    {
        crossed += fabric.GetLink(l)->RemoteFramesSent();
    }
    std::printf("rank %u wired %u crossed %llu\n", rank, wired, (unsigned long long)crossed);
    for (const auto& fl : traffic.GetFlows())
    {
        if (fabric.GetHostNode(fl.src)->GetSystemId() == rank)
        {
            std::printf("flow %u done %d fct_ps %lld\n",
                        fl.id,
                        int(fl.done),
                        (long long)(fl.finish - fl.start).GetPicoSeconds());
        }
    }
    for (uint32_t v = 0; v < topo.nodes.size(); ++v)
    {
        Ptr<Node> node = fabric.GetNode(v);
        if (node->GetSystemId() != rank)
        {
            continue;
        }
        for (uint32_t d = 0; d < node->GetNDevices(); ++d)
        {
            auto dev = DynamicCast<FabricNetDevice>(node->GetDevice(d));
            if (!dev)
            {
                continue;
            }
            const FabricDeviceStats& st = dev->GetStats();
            std::printf("dev %s/%u %llu %llu %llu %llu %llu %llu\n",
                        topo.nodes[v].name.c_str(),
                        d,
                        (unsigned long long)st.txFrames,
                        (unsigned long long)st.txBytes,
                        (unsigned long long)st.rxFrames,
                        (unsigned long long)st.rxBytes,
                        (unsigned long long)st.txPfcFrames,
                        (unsigned long long)st.rxPfcFrames);
        }
    }
    std::fflush(stdout);
    Simulator::Destroy();
    fabricsim::StopDistributedEngine();
    return 0;
}
