// Speed benchmark. Loads: the one of bench/stock-ns3 (leaf-spine, every host sending at line
// rate to the host with the same index on the next leaf); a k-ary fat-tree with a seeded
// permutation at line rate, cut at --simMs; or a permutation of finite flows run to completion
// (--flowBytes, or an htsim connection matrix with --matrix: "Nodes N", "Connections M", then
// "SRC->DST id I start PS size BYTES" lines). No congestion control. Prints one JSON line:
// packet-hops (every frame arrival at any device: data, ACK, CNP, PFC), data-frame hops alone,
// wall seconds, rates, peak RSS, and for finite flows how many completed and when the last did.
//
//   fabric-speed --topo=leafspine --leaves=4 --spines=4 --hostsPerLeaf=8 --simMs=2
//   fabric-speed --topo=fattree --k=16 --simMs=0.2
//   fabric-speed --topo=fattree --k=16 --flowBytes=2000000 --mtu=4000 --simMs=0
//   fabric-speed --topo=fattree --k=16 --matrix=perm_1024n_1024c_2MB.cm --mtu=1000 --simMs=0
// The event scheduler is fabricsim's (ns3::FabricScheduler) unless --SchedulerType names another.
//
// fabric-speed-mpi (the MPI build) is the same load on ns-3's distributed engine, the fabric cut
// by AutoPartition into the mpirun ranks; line rate cut at --simMs only (a rank does not know
// when the other ranks' flows are done). Rank 0 prints the JSON line: hops summed over ranks,
// the slowest rank's wall time, the cut links and the lookahead.
//   mpirun -np 2 fabric-speed-mpi --topo=fattree --k=16 --simMs=0.2
#include "ns3/command-line.h"
#include "ns3/fabric-scheduler.h"
#include "ns3/fabric-topology-helper.h"
#include "ns3/fabric-traffic-helper.h"
#include "ns3/global-value.h"
#include "ns3/map-scheduler.h"
#include "ns3/rng-seed-manager.h"
#include "ns3/simulator.h"

#ifdef FABRICSIM_BENCH_MPI
#include "partition.h"

#include "ns3/distributed-engine.h"
#include "ns3/remote-links.h"

#include <mpi.h>
#endif

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <numeric>
#include <random>
#include <sstream>

using namespace ns3;

namespace
{

struct Flow
{
    uint32_t src;
    uint32_t dst;
    uint64_t startPs;
    uint64_t bytes;
};

/// The flows of an htsim connection matrix; exits 2 naming the line on anything else.
std::vector<Flow>
ReadMatrix(const std::string& path, uint32_t hosts)
{
    std::ifstream in(path);
    if (!in)
    {
        std::cerr << "fabric-speed: cannot read " << path << "\n";
        std::exit(2);
    }
    std::vector<Flow> flows;
    std::string line;
    for (uint64_t n = 1; std::getline(in, line); ++n)
    {
        std::istringstream ls(line);
        std::string first;
        if (!(ls >> first) || first == "Nodes" || first == "Connections")
        {
            continue;
        }
        Flow f{0, 0, 0, 0};
        const size_t arrow = first.find("->");
        std::string key;
        uint64_t value = 0;
        bool ok = arrow != std::string::npos;
        if (ok)
        {
            f.src = uint32_t(std::stoul(first.substr(0, arrow)));
            f.dst = uint32_t(std::stoul(first.substr(arrow + 2)));
        }
        while (ok && ls >> key >> value)
        {
            f.startPs = key == "start" ? value : f.startPs;
            f.bytes = key == "size" ? value : f.bytes;
        }
        if (!ok || f.src >= hosts || f.dst >= hosts || f.src == f.dst || f.bytes == 0)
        {
            std::cerr << "fabric-speed: " << path << " line " << n
                      << ": expected \"SRC->DST id I start PS size BYTES\" between hosts of the "
                      << hosts << ", found \"" << line << "\"\n";
            std::exit(2);
        }
        flows.push_back(f);
    }
    return flows;
}

/// A permutation of \p n hosts with no host sending to itself, from \p seed.
std::vector<uint32_t>
Derangement(uint32_t n, uint32_t seed)
{
    std::vector<uint32_t> dst(n);
    std::iota(dst.begin(), dst.end(), 0);
    std::mt19937 rng(seed);
    std::shuffle(dst.begin(), dst.end(), rng);
    for (uint32_t i = 0; i < n; ++i)
    {
        if (dst[i] == i)
        {
            std::swap(dst[i], dst[(i + 1) % n]);
        }
    }
    return dst;
}

/// Host i sends \p bytes to dst[i], all at time 0.
std::vector<Flow>
Permutation(const std::vector<uint32_t>& dst, uint64_t bytes)
{
    std::vector<Flow> flows;
    for (uint32_t i = 0; i < dst.size(); ++i)
    {
        flows.push_back({i, dst[i], 0, bytes});
    }
    return flows;
}

/// The stock load's pattern: each host to the host with its index on the next leaf.
std::vector<uint32_t>
NextLeaf(uint32_t n, uint32_t hostsPerLeaf)
{
    std::vector<uint32_t> dst(n);
    for (uint32_t i = 0; i < n; ++i)
    {
        dst[i] = (i + hostsPerLeaf) % n;
    }
    return dst;
}

/// Frame arrivals (all, and data frames) at the devices of the nodes this rank simulates.
void
CountHops(const FabricTopologyHelper& fabric, uint64_t& hops, uint64_t& dataHops)
{
    for (uint32_t id = 0; id < fabric.GetTopology().nodes.size(); ++id)
    {
        Ptr<Node> node = fabric.GetNode(id);
        if (node->GetSystemId() != Simulator::GetSystemId())
        {
            continue; // simulated by another rank
        }
        for (uint32_t d = 0; d < node->GetNDevices(); ++d)
        {
            auto dev = DynamicCast<FabricNetDevice>(node->GetDevice(d));
            if (!dev)
            {
                continue; // a run across ranks' batch device
            }
            hops += dev->GetStats().rxFrames;
            dataHops += dev->GetStats().rxDataFrames;
        }
    }
}

void
StopNow()
{
    Simulator::Stop();
}

#ifdef FABRICSIM_BENCH_MPI
/// Starts MPI with the kernel of --SimulatorImplementationType= (it picks MpiInterface's scheme
/// too, so it is read before MPI starts); false, MPI stopped, for an unknown one.
bool
StartMpi(int* argc, char*** argv)
{
    std::string kernel = fabricsim::DistributedKernels().front();
    const std::string opt = "--SimulatorImplementationType=";
    for (int i = 1; i < *argc; ++i)
    {
        if (std::string((*argv)[i]).rfind(opt, 0) == 0)
        {
            kernel = (*argv)[i] + opt.size();
        }
    }
    if (!fabricsim::StartDistributedEngine(argc, argv, kernel))
    {
        std::cerr << "fabric-speed-mpi: unknown kernel " << kernel << "\n";
        fabricsim::StopDistributedEngine();
        return false;
    }
    return true;
}
#endif

} // namespace

int
main(int argc, char** argv)
{
    Time::SetResolution(Time::PS);
#ifdef FABRICSIM_BENCH_MPI
    if (!StartMpi(&argc, &argv))
    {
        return 2;
    }
    const uint32_t rank = fabricsim::DistributedRank();
#endif
    std::string topoKind = "leafspine";
    uint32_t leaves = 4, spines = 4, hostsPerLeaf = 8, k = 16, seed = 1;
    double simMs = 2.0;
    std::string rate = "100Gbps";
    uint32_t mtu = 1000;
    uint64_t flowBytes = 0;
    std::string matrix;
    CommandLine cmd;
    cmd.AddValue("topo", "leafspine or fattree", topoKind);
    cmd.AddValue("leaves", "leaf switches", leaves);
    cmd.AddValue("spines", "spine switches", spines);
    cmd.AddValue("hostsPerLeaf", "hosts per leaf", hostsPerLeaf);
    cmd.AddValue("k", "fat-tree arity", k);
    cmd.AddValue("simMs", "simulated milliseconds (0: until every flow completed)", simMs);
    cmd.AddValue("rate", "link rate", rate);
    cmd.AddValue("mtu", "RDMA payload per frame (the stock load uses 1000 B UDP payloads)", mtu);
    cmd.AddValue("flowBytes", "bytes per permutation flow (0: line rate until simMs)", flowBytes);
    cmd.AddValue("seed", "seed of the fat-tree permutation", seed);
    cmd.AddValue("matrix", "an htsim connection matrix instead of the seeded permutation", matrix);
    cmd.Parse(argc, argv);
    RngSeedManager::SetSeed(1);
    TypeIdValue chosen;
    GlobalValue::GetValueByName("SchedulerType", chosen);
    Simulator::SetScheduler(ObjectFactory(chosen.Get() == MapScheduler::GetTypeId()
                                              ? FabricScheduler::GetTypeId().GetName()
                                              : chosen.Get().GetName()));
    if (simMs <= 0 && flowBytes == 0 && matrix.empty())
    {
        std::cerr << "fabric-speed: --simMs=0 (to completion) needs --flowBytes or --matrix\n";
        return 2;
    }

    const nlohmann::json link = {{"rate", rate}, {"delay", "1us"}};
    const nlohmann::json spec
        = topoKind == "fattree"
              ? nlohmann::json{{"type", "fat-tree"}, {"k", k}, {"host_link", link}}
              : nlohmann::json{{"type", "leaf-spine"},
                               {"leaves", leaves},
                               {"spines", spines},
                               {"hosts_per_leaf", hostsPerLeaf},
                               {"host_link", link}};
    auto t0 = std::chrono::steady_clock::now();
    fabricsim::Topology topo = fabricsim::BuildTopology(spec, "bench");
    FabricTopologyHelper fabric(topo);
    fabric.SetMtu(mtu);
#ifdef FABRICSIM_BENCH_MPI
    if (simMs <= 0)
    {
        std::cerr << "fabric-speed-mpi: runs line rate cut at --simMs only\n";
        fabricsim::StopDistributedEngine();
        return 2;
    }
    const auto part = fabricsim::AutoPartition(topo, fabricsim::DistributedRanks(), "bench");
    fabric.SetSystemIds(part.rankOf);
    fabric.Install();
    fabricsim::RemoteLinks remote(fabric, rank);
#else
    fabric.Install();
#endif
    double buildS = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    uint32_t n = topo.NumHosts();
    // Line rate: enough bytes to keep every sender busy until the cut at simMs.
    const uint64_t bytes = flowBytes > 0
                               ? flowBytes
                               : uint64_t(DataRate(rate).GetBitRate() / 8.0 * simMs * 1e-3 * 1.2);
    const std::vector<Flow> flows = !matrix.empty() ? ReadMatrix(matrix, n)
                                    : topoKind == "fattree"
                                        ? Permutation(Derangement(n, seed), bytes)
                                        : Permutation(NextLeaf(n, hostsPerLeaf), bytes);
    FabricTrafficHelper traffic(fabric);
    ObjectFactory none = CongestionControlFactory::Get("none");
    for (const Flow& f : flows)
    {
        traffic.AddFlow(f.src, f.dst, f.bytes, PicoSeconds(f.startPs), 3, none);
    }
    if (simMs > 0)
    {
        Simulator::Stop(MicroSeconds(uint64_t(simMs * 1000)));
    }
    traffic.SetAllDoneCallback(MakeCallback(&StopNow)); // idle timers do not count
    auto t1 = std::chrono::steady_clock::now();
    Simulator::Run();
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
    uint64_t hops = 0, dataHops = 0;
    CountHops(fabric, hops, dataHops);
    uint64_t completed = 0;
    Time last;
    for (const FlowRecord& r : traffic.GetFlows())
    {
        completed += r.done;
        last = std::max(last, r.finish);
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    uint64_t events = Simulator::GetEventCount();
#ifdef FABRICSIM_BENCH_MPI
    // Sums over the ranks (the slowest rank's wall time): one line, from rank 0.
    uint64_t crossed = 0; // frames sent to another rank
    for (uint32_t l = 0; l < topo.links.size(); ++l)
    {
        crossed += fabric.GetLink(l)->RemoteFramesSent();
    }
    uint64_t local[5] = {hops, dataHops, events, crossed, remote.MessagesSent()};
    uint64_t total[5] = {0, 0, 0, 0, 0};
    MPI_Reduce(local, total, 5, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    double slowest = 0;
    MPI_Reduce(&wall, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    hops = total[0];
    dataHops = total[1];
    events = total[2];
    wall = slowest;
    if (rank == 0)
    {
        std::cout << "{\"ranks\":" << part.ranks << ",\"cut_links\":" << part.cutLinks
                  << ",\"lookahead_ns\":" << part.lookaheadPs / 1000
                  << ",\"cross_rank_frames\":" << total[3] << ",\"mpi_messages\":" << total[4]
                  << ",";
    }
    else
    {
        Simulator::Destroy();
        fabricsim::StopDistributedEngine();
        return 0;
    }
#else
    std::cout << "{";
#endif
    std::cout << "\"simulator\":\"fabricsim\",\"topology\":\"" << topoKind << "\",\"hosts\":" << n
              << ",\"mtu\":" << mtu << ",\"flows\":" << flows.size()
              << ",\"flows_completed\":" << completed
              << ",\"last_finish_us\":" << last.GetMicroSeconds()
              << ",\"simulated_us\":" << Simulator::Now().GetMicroSeconds()
              << ",\"packet_hops\":" << hops << ",\"data_packet_hops\":" << dataHops
              << ",\"wall_s\":" << wall << ",\"packet_hops_per_s\":" << hops / wall
              << ",\"data_packet_hops_per_s\":" << dataHops / wall << ",\"events\":" << events
              << ",\"build_s\":" << buildS << ",\"peak_rss_mb\":" << ru.ru_maxrss / 1024.0 << "}"
              << std::endl;
    Simulator::Destroy();
#ifdef FABRICSIM_BENCH_MPI
    fabricsim::StopDistributedEngine();
#endif
    return 0;
}
