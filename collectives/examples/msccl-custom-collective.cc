/*
 * A custom collective from an MSCCL XML file: load it, prove it correct with the validator,
 * and time it on the packet-level fabric next to the ring algorithm for the same collective.
 *
 * The default file, allgather-4rank.xml (next to this source), is a topology-aware AllGather
 * for 4 ranks: each rank swaps its chunk with the rank on the same rail of the other server
 * over the NICs, then passes both chunks to its server neighbour over scale-up. The fabric has
 * 2 servers x 4 GPUs; --hosts places the 4 ranks on accelerators 0 and 1 of each server
 * (hosts 0,1,4,5), which is where the algorithm expects them.
 *
 *   build/bin/msccl-custom-collective --size=8M
 *   build/bin/msccl-custom-collective --xml=collectives/examples/allgather-4rank-broken.xml
 *
 * Exit codes: 0 valid and completed; 1 a collective did not complete; 2 the file is unreadable,
 * malformed or the schedule is wrong (every problem is printed), or bad arguments.
 */
#include "input-error.h"
#include "msccl-xml.h"
#include "nccl-report.h"
#include "schedule-validator.h"
#include "topology.h"

#include "ns3/command-line.h"
#include "ns3/fabric-collective-helper.h"
#include "ns3/fabric-topology-helper.h"
#include "ns3/simulator.h"

#include <iostream>
#include <sstream>

using namespace ns3;

namespace
{

/// "0,1,4,5" -> {0, 1, 4, 5}
std::vector<uint32_t>
ParseHosts(const std::string& text)
{
    std::vector<uint32_t> hosts;
    std::stringstream in(text);
    std::string item;
    while (std::getline(in, item, ','))
    {
        try
        {
            size_t used = 0;
            const unsigned long h = std::stoul(item, &used);
            if (used != item.size())
            {
                throw std::invalid_argument(item);
            }
            hosts.push_back(uint32_t(h));
        }
        catch (const std::exception&)
        {
            throw InputError(
                "<command line>", "--hosts", "comma-separated host indices", "\"" + text + "\"");
        }
    }
    return hosts;
}

} // namespace

int
main(int argc, char** argv)
{
    Time::SetResolution(Time::PS);

    std::string xml = std::string(FABRICSIM_EXAMPLES_DIR) + "/allgather-4rank.xml";
    std::string hostList = "0,1,4,5";
    std::string size = "4M";
    uint32_t servers = 2;
    uint32_t gpus = 4;
    std::string cc = "dcqcn";
    CommandLine cmd(__FILE__);
    cmd.AddValue("xml", "MSCCL XML file (its first <algo> is run)", xml);
    cmd.AddValue("hosts", "host of each rank of the schedule, comma-separated", hostList);
    cmd.AddValue("size", "size in nccl-tests convention (allgather: the total output)", size);
    cmd.AddValue("servers", "servers of the rail-optimised fabric", servers);
    cmd.AddValue("gpus", "accelerators per server", gpus);
    cmd.AddValue("cc", "congestion control", cc);
    cmd.Parse(argc, argv);

    int rc = 0;
    try
    {
        // 1. Load. A file that is unreadable or not MSCCL XML throws InputError (file, line,
        // field).
        const fabricsim::Schedule custom = fabricsim::ReadMscclXml(xml);

        // 2. Prove it correct: symbolic execution, then the collective's post-condition.
        const fabricsim::ValidationReport check = fabricsim::ValidateSchedule(custom);
        std::cout << xml << ": '" << custom.m_name << "' ("
                  << fabricsim::ToString(custom.m_collective) << ", " << custom.m_ranks
                  << " ranks, " << custom.StepCount()
                  << " steps): " << (check.m_valid ? "VALID" : "INVALID") << "\n";
        for (const auto& p : check.m_problems)
        {
            std::cout << "  " << p.ToString() << "\n";
        }
        if (!check.m_valid)
        {
            std::cerr << "msccl-custom-collective: " << xml << " does not compute "
                      << fabricsim::ToString(custom.m_collective) << "; not run\n";
            return 2;
        }

        // 3. The fabric and the rank -> host mapping.
        const nlohmann::json spec = {{"type", "rail-optimized"},
                                     {"servers", servers},
                                     {"accels_per_server", gpus},
                                     {"spines", 2},
                                     {"host_link", {{"rate", "400Gbps"}, {"delay", "1us"}}},
                                     {"fabric_link", {{"rate", "400Gbps"}, {"delay", "1us"}}},
                                     {"scale_up", {{"rate", "450GBps"}, {"delay", "100ns"}}}};
        const fabricsim::Topology topo = fabricsim::BuildTopology(spec, "<command line>");
        const std::vector<uint32_t> hosts = ParseHosts(hostList);
        if (int(hosts.size()) != custom.m_ranks)
        {
            throw InputError("<command line>",
                             "--hosts",
                             std::to_string(custom.m_ranks)
                                 + " hosts, one per rank of the schedule",
                             std::to_string(hosts.size()));
        }
        FabricTopologyHelper fabric(topo);
        fabric.Install();
        FabricCollectiveHelper collectives(fabric);
        collectives.SetCongestionControl(cc);
        collectives.SetRankHosts(hosts); // schedule rank i runs on host hosts[i] (checked by Run)

        // 4. Time it, and the ring for the same collective on the same ranks, nccl-tests style.
        const uint64_t bytes = fabricsim::AlignedSize(
            custom.m_collective, fabricsim::ParseNcclSize(size, "--size"), custom.m_ranks);
        std::cout << "# ranks on hosts " << hostList << "\n" << fabricsim::NcclTableHeader();
        std::vector<fabricsim::Schedule> schedules{custom};
        if (custom.m_collective != fabricsim::CollectiveKind::kCustom)
        {
            schedules.push_back(collectives.Generate(custom.m_collective, "ring"));
        }
        for (const fabricsim::Schedule* s = schedules.data();
             s != schedules.data() + schedules.size();
             ++s)
        {
            CollectiveRunResult r = collectives.Run(*s, bytes);
            r.row.m_wrong = 0; // both proven correct above / by the generator
            std::cout << "# " << s->m_name << "\n";
            if (!r.complete)
            {
                std::cerr << s->m_name << ": did not complete:\n" << r.stuckReport;
                rc = 1;
                continue;
            }
            std::cout << fabricsim::NcclTableLine(r.row);
        }
    }
    catch (const InputError& e)
    {
        std::cerr << "msccl-custom-collective: " << e.what() << "\n";
        rc = 2;
    }
    Simulator::Destroy();
    return rc;
}
