#include "run-across-ranks.h"

#include "control-channel.h"
#include "distributed-engine.h"
#include "file-reader.h"
#include "input-error.h"
#include "json-reader.h"
#include "remote-links.h"

#include "ns3/deadlock-detector.h"
#include "ns3/fabric-topology-helper.h"
#include "ns3/node.h"
#include "ns3/run-end.h"
#include "ns3/simulator.h"

#include <mpi.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>

namespace fabricsim
{

using namespace ns3;

namespace
{

/// The kinds of control message.
constexpr uint8_t kNotice = 0;
constexpr uint8_t kSnapshot = 1;

nlohmann::json
SnapshotJson(const DeadlockSnapshot& s)
{
    nlohmann::json paused = nlohmann::json::array();
    for (const DeadlockHop& h : s.paused)
    {
        paused.push_back({h.node,
                          h.port,
                          h.priority,
                          h.peerNode,
                          h.peerPort,
                          h.peerIsSwitch,
                          h.pausedFor.GetTimeStep(),
                          h.queuedBytes,
                          h.queuedFrames});
    }
    nlohmann::json pausing = nlohmann::json::array();
    for (const auto& e : s.pausing)
    {
        pausing.push_back({e.node, e.port, e.priority, e.drains, e.waitPorts});
    }
    return {s.at.GetTimeStep(), s.sent, paused, pausing};
}

DeadlockSnapshot
SnapshotFromJson(const nlohmann::json& j)
{
    DeadlockSnapshot s;
    s.at = TimeStep(j.at(0).get<int64_t>());
    s.sent = j.at(1).get<uint64_t>();
    for (const auto& p : j.at(2))
    {
        DeadlockHop h;
        h.node = p.at(0);
        h.port = p.at(1);
        h.priority = p.at(2);
        h.peerNode = p.at(3);
        h.peerPort = p.at(4);
        h.peerIsSwitch = p.at(5);
        h.pausedFor = TimeStep(p.at(6).get<int64_t>());
        h.queuedBytes = p.at(7);
        h.queuedFrames = p.at(8);
        s.paused.push_back(h);
    }
    for (const auto& p : j.at(3))
    {
        DeadlockSnapshot::Pausing e;
        e.node = p.at(0);
        e.port = p.at(1);
        e.priority = p.at(2);
        e.drains = p.at(3);
        e.waitPorts = p.at(4).get<std::vector<uint32_t>>();
        s.pausing.push_back(std::move(e));
    }
    return s;
}

} // namespace

RunAcrossRanks::RunAcrossRanks(std::string partition, std::string kernel)
    : m_partitionArg(std::move(partition))
    , m_kernel(std::move(kernel))
{
}

uint32_t
RunAcrossRanks::Rank() const
{
    return DistributedRank();
}

uint32_t
RunAcrossRanks::Ranks() const
{
    return DistributedRanks();
}

void
RunAcrossRanks::RefuseWhatRanksLack(const FabricScenario& sc) const
{
    if (Ranks() == 1)
    {
        return;
    }
    const std::string later = " on a run across ranks (not built yet: docs/performance.md)";
    if (!sc.pcapHosts.empty() || !sc.pcapSwitches.empty())
    {
        throw InputError(sc.file, "pcap", "no captures" + later, "captures");
    }
}

void
RunAcrossRanks::CheckNullMessagePairs(const Topology& topo) const
{
    if (m_kernel != "ns3::NullMessageSimulatorImpl")
    {
        return;
    }
    std::set<std::pair<uint32_t, uint32_t>> pairs;
    for (const TopoLink& l : topo.links)
    {
        const uint32_t a = m_part.rankOf[l.a];
        const uint32_t b = m_part.rankOf[l.b];
        if (a != b)
        {
            pairs.insert({std::min(a, b), std::max(a, b)});
        }
    }
    for (uint32_t a = 0; a < Ranks(); ++a)
    {
        for (uint32_t b = a + 1; b < Ranks(); ++b)
        {
            if (!pairs.count({a, b}))
            {
                throw InputError("<command line>",
                                 "--partition",
                                 "a link cut between every pair of ranks (ns-3's null-message "
                                 "engine sends only to ranks it shares a link with; "
                                 "ns3::DistributedSimulatorImpl has no such limit)",
                                 "none between ranks " + std::to_string(a) + " and "
                                     + std::to_string(b));
            }
        }
    }
}

std::vector<uint32_t>
RunAcrossRanks::Partition(const FabricScenario& sc)
{
    RefuseWhatRanksLack(sc);
    if (m_partitionArg == "auto")
    {
        m_part = AutoPartition(sc.topology, Ranks(), "<command line>");
    }
    else
    {
        const std::string text = ReadFileBounded(m_partitionArg,
                                                 "partition file (node name: rank)",
                                                 kConfigFileLimits,
                                                 {"<command line>", "--partition"});
        m_part = PartitionFromJson(
            ParseJson(text, m_partitionArg), sc.topology, Ranks(), m_partitionArg);
    }
    for (uint32_t r = 0; r < Ranks(); ++r)
    {
        if (m_part.load[r] == 0)
        {
            throw InputError(m_partitionArg == "auto" ? "<command line>" : m_partitionArg,
                             "--partition",
                             "at least one node on every rank",
                             "none on rank " + std::to_string(r));
        }
    }
    CheckNullMessagePairs(sc.topology);
    return m_part.rankOf;
}

void
RunAcrossRanks::Connect(FabricTopologyHelper& fabric, RunEnd& end)
{
    m_links = std::make_unique<RemoteLinks>(fabric, Rank());
    m_control = std::make_unique<ControlChannel>(fabric, Rank());
    m_control->OnMessage(kNotice,
                         [&end](const std::string& m)
                         {
                             int64_t ps = 0;
                             NS_ABORT_MSG_IF(m.size() != sizeof(ps), "a notice of the wrong size");
                             std::memcpy(&ps, m.data(), sizeof(ps));
                             end.Heard(TimeStep(ps));
                         });
    ControlChannel* control = m_control.get();
    const Time notice = end.Notice();
    end.SetBroadcast(
        [control, notice](Time doneAt)
        {
            const int64_t ps = doneAt.GetTimeStep();
            control->Broadcast(kNotice,
                               std::string(reinterpret_cast<const char*>(&ps), sizeof(ps)),
                               doneAt + notice);
        });
}

void
RunAcrossRanks::ConnectDetector(DeadlockDetector& detector, Time delay)
{
    ControlChannel* control = m_control.get();
    detector.SetDecision(delay,
                         Ranks(),
                         [control, delay](const DeadlockSnapshot& s)
                         { control->Broadcast(kSnapshot, SnapshotJson(s).dump(), s.at + delay); });
    m_control->OnMessage(kSnapshot,
                         [&detector](const std::string& m)
                         { detector.AddSnapshot(SnapshotFromJson(nlohmann::json::parse(m))); });
}

void
RunAcrossRanks::AbortRun(const std::string& why) const
{
    // stderr itself: fabricsim-mpi keeps the other ranks' std::cerr back.
    std::fprintf(stderr, "fabricsim-mpi: rank %u failed: %s\n", Rank(), why.c_str());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    std::abort(); // MPI_Abort does not return; the compiler does not know it
}

std::vector<std::string>
RunAcrossRanks::Gather(const std::string& mine)
{
    const int ranks = int(Ranks());
    // MPI counts are ints: a share past 2 GiB (a long run's PFC log or monitor rows) would
    // wrap, so the run ends here, saying so, and writes nothing.
    if (mine.size() > size_t(INT_MAX))
    {
        AbortRun("its share of the outputs is " + std::to_string(mine.size())
                 + " bytes, past the 2 GiB MPI_Gatherv carries");
    }
    const int len = int(mine.size());
    std::vector<int> lens(Rank() == 0 ? ranks : 0);
    MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    std::vector<int> offsets(lens.size(), 0);
    size_t total = 0;
    for (size_t r = 0; r < lens.size(); ++r)
    {
        offsets[r] = int(total);
        total += size_t(lens[r]);
        if (total > size_t(INT_MAX))
        {
            AbortRun("the ranks' shares of the outputs pass the 2 GiB MPI_Gatherv carries");
        }
    }
    std::vector<char> buf(total);
    MPI_Gatherv(mine.data(),
                len,
                MPI_CHAR,
                buf.data(),
                lens.data(),
                offsets.data(),
                MPI_CHAR,
                0,
                MPI_COMM_WORLD);
    std::vector<std::string> all;
    for (size_t r = 0; r < lens.size(); ++r)
    {
        all.emplace_back(buf.data() + offsets[r], size_t(lens[r]));
    }
    return all;
}

} // namespace fabricsim
