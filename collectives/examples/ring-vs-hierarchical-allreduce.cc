/*
 * Ring vs hierarchical AllReduce on a rail-optimised fabric, on the packet-level RoCEv2 network.
 *
 * The fabric: `servers` servers of `gpus` accelerators each. Accelerator a of every server hangs
 * off rail switch a (its NIC), the rail switches meet at spine switches, and the accelerators of
 * one server share a scale-up (NVLink-like) switch. Hosts are accelerators, numbered
 * server-major: host = server x gpus + local.
 *
 * The ring sends every byte around all ranks, so two of its hops per ring cross the (slower)
 * NICs; the hierarchical algorithm reduce-scatters inside each server over scale-up, all-reduces
 * one shard per rail across servers, and all-gathers inside the server again. Both schedules are
 * generated, proven correct by the validator (#wrong) and timed on the same fabric, one after
 * the other. The output is nccl-tests' table, one line per algorithm.
 *
 * With as many spines as rails, every cross-server transfer has a path of its own. With fewer
 * (--spines=2), ECMP may hash the ring's two cross-server edges (rail 3 -> rail 0 in both
 * servers) onto one spine link: the ring then runs at half the NIC rate or below, as DCQCN
 * reacts to the queue that builds there.
 *
 *   build/bin/ring-vs-hierarchical-allreduce --servers=2 --gpus=4 --size=16M
 *   build/bin/ring-vs-hierarchical-allreduce --nicRate=800Gbps --cc=hpcc --iters=3
 *   build/bin/ring-vs-hierarchical-allreduce --backend=analytical
 *
 * Exit codes: 0 both ran and are correct; 1 a schedule is wrong or a collective did not
 * complete; 2 bad arguments.
 */
#include "analytical-transport.h"
#include "input-error.h"
#include "nccl-report.h"
#include "schedule-validator.h"
#include "topology.h"

#include "ns3/command-line.h"
#include "ns3/fabric-collective-helper.h"
#include "ns3/fabric-topology-helper.h"
#include "ns3/simulator.h"

#include <iomanip>
#include <iostream>
#include <memory>

using namespace ns3;

int
main(int argc, char** argv)
{
    // fabricsim times frames in picoseconds (a 64 B frame at 800G is 0.64 ns): set this first.
    Time::SetResolution(Time::PS);

    uint32_t servers = 2;
    uint32_t gpus = 4;
    uint32_t spines = 4;
    std::string size = "4M";
    std::string nicRate = "400Gbps";
    std::string scaleUpRate = "450GBps";
    std::string cc = "dcqcn";
    std::string backend = "packet";
    int warmup = 0;
    int iters = 1;
    CommandLine cmd(__FILE__);
    cmd.AddValue("servers", "servers (scale-up domains)", servers);
    cmd.AddValue("gpus", "accelerators per server", gpus);
    cmd.AddValue("spines", "spine switches above the rail switches", spines);
    cmd.AddValue("size", "AllReduce buffer size (nccl-tests syntax: 4M, 512K, 1G)", size);
    cmd.AddValue("nicRate", "NIC and rail/spine link rate", nicRate);
    cmd.AddValue("scaleUpRate", "scale-up link rate per accelerator and direction", scaleUpRate);
    cmd.AddValue("cc", "congestion control (dcqcn, hpcc, timely, dctcp, swift)", cc);
    cmd.AddValue("backend", "packet (ns-3 RoCEv2 fabric) or analytical (flow model)", backend);
    cmd.AddValue("warmup", "warm-up iterations per algorithm", warmup);
    cmd.AddValue("iters", "timed iterations per algorithm (the time is their mean)", iters);
    cmd.Parse(argc, argv);

    int rc = 0;
    try
    {
        if (iters < 1 || warmup < 0)
        {
            throw InputError("<command line>", "--iters", "iters >= 1 and warmup >= 0", "other");
        }
        // The topology layer builds the graph from the same JSON a scenario file holds.
        const nlohmann::json spec = {{"type", "rail-optimized"},
                                     {"servers", servers},
                                     {"accels_per_server", gpus},
                                     {"spines", spines},
                                     {"host_link", {{"rate", nicRate}, {"delay", "1us"}}},
                                     {"fabric_link", {{"rate", nicRate}, {"delay", "1us"}}},
                                     {"scale_up", {{"rate", scaleUpRate}, {"delay", "100ns"}}}};
        const fabricsim::Topology topo = fabricsim::BuildTopology(spec, "<command line>");

        // ns-3 nodes: RoCEv2 NICs on the accelerators, shared-buffer switches, routes; then
        // collectives over them, one RDMA queue pair per (src, dst, channel). The analytical
        // backend runs the same schedules over a flow model of the same topology instead.
        FabricTopologyHelper fabric(topo);
        std::unique_ptr<fabricsim::AnalyticalTransport> flowModel;
        std::unique_ptr<FabricCollectiveHelper> helper;
        if (backend == "packet")
        {
            fabric.Install();
            helper = std::make_unique<FabricCollectiveHelper>(fabric);
            helper->SetCongestionControl(cc);
        }
        else if (backend == "analytical")
        {
            flowModel = std::make_unique<fabricsim::AnalyticalTransport>(topo);
            helper = std::make_unique<FabricCollectiveHelper>(*flowModel, &topo);
        }
        else
        {
            throw InputError(
                "<command line>", "--backend", "packet or analytical", "\"" + backend + "\"");
        }
        FabricCollectiveHelper& collectives = *helper;
        const int ranks = int(collectives.GetNRanks());
        const auto kind = fabricsim::CollectiveKind::kAllReduce;
        const uint64_t bytes
            = fabricsim::AlignedSize(kind, fabricsim::ParseNcclSize(size, "--size"), ranks);

        std::cout << "# AllReduce on " << ranks << " ranks: " << servers << " servers x " << gpus
                  << " GPUs, NIC " << nicRate << ", scale-up " << scaleUpRate << ", cc " << cc
                  << ", " << backend << " backend (local size " << collectives.GetLocalSize()
                  << ")\n"
                  << fabricsim::NcclTableHeader();
        std::vector<fabricsim::NcclRow> rows;
        for (const std::string algorithm : {"ring", "hierarchical"})
        {
            // Generate for all ranks; hierarchical reads the ranks per server from the topology.
            const fabricsim::Schedule schedule = collectives.Generate(kind, algorithm);
            const fabricsim::ValidationReport check
                = fabricsim::ValidateSchedule(schedule, kind, ranks);
            CollectiveRunResult r = collectives.Run(schedule, bytes, warmup, iters);
            r.row.m_wrong = int64_t(check.m_problems.size());
            std::cout << "# " << algorithm << ": " << schedule.StepCount() << " steps, "
                      << r.last.m_messages << " messages per iteration\n";
            if (!check.m_valid)
            {
                std::cerr << algorithm
                          << ": the schedule is wrong: " << check.m_problems[0].ToString() << "\n";
                rc = 1;
            }
            if (!r.complete)
            {
                std::cerr << algorithm << ": did not complete:\n" << r.stuckReport;
                rc = 1;
                continue;
            }
            std::cout << fabricsim::NcclTableLine(r.row);
            rows.push_back(r.row);
        }
        if (rows.size() == 2)
        {
            std::cout << std::fixed << std::setprecision(2)
                      << "# hierarchical / ring time: " << rows[1].m_timeUs / rows[0].m_timeUs
                      << "\n";
        }
    }
    catch (const InputError& e)
    {
        std::cerr << "ring-vs-hierarchical-allreduce: " << e.what() << "\n";
        rc = 2;
    }
    Simulator::Destroy();
    return rc;
}
