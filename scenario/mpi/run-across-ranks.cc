#include "run-across-ranks.h"

#include "distributed-engine.h"
#include "file-reader.h"
#include "input-error.h"
#include "json-reader.h"
#include "remote-links.h"

#include "ns3/fabric-topology-helper.h"
#include "ns3/mpi-interface.h"
#include "ns3/mpi-receiver.h"
#include "ns3/node.h"
#include "ns3/packet.h"
#include "ns3/run-end.h"
#include "ns3/simple-net-device.h"
#include "ns3/simulator.h"

#include <mpi.h>

#include <cstring>
#include <set>

namespace fabricsim
{

using namespace ns3;

namespace
{

/// A notice: the time (picoseconds) its rank's flows were done.
Ptr<Packet>
EncodeNotice(Time doneAt)
{
    const int64_t ps = doneAt.GetTimeStep();
    return Create<Packet>(reinterpret_cast<const uint8_t*>(&ps), sizeof(ps));
}

void
ReceiveNotice(RunEnd* end, Ptr<Packet> p)
{
    int64_t ps = 0;
    NS_ABORT_MSG_IF(p->GetSize() != sizeof(ps), "run-across-ranks: a notice of the wrong size");
    p->CopyData(reinterpret_cast<uint8_t*>(&ps), sizeof(ps));
    end->Heard(TimeStep(ps));
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
    if (sc.transport.pfc && sc.deadlock.checkIntervalNs > 0)
    {
        throw InputError(sc.file,
                         "deadlock.check_interval_ns",
                         "0 (the deadlock detector does not see across ranks yet)" + later,
                         std::to_string(sc.deadlock.checkIntervalNs));
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
    // A control device on the first node of every rank, on every rank (the sender addresses it
    // by node and interface index): the notices arrive there.
    std::vector<std::pair<uint32_t, uint32_t>> control(Ranks(), {UINT32_MAX, 0});
    for (uint32_t n = 0; n < m_part.rankOf.size(); ++n)
    {
        const uint32_t r = m_part.rankOf[n];
        if (control[r].first != UINT32_MAX)
        {
            continue;
        }
        Ptr<Node> node = fabric.GetNode(n);
        auto dev = CreateObject<SimpleNetDevice>();
        const uint32_t ifIndex = node->AddDevice(dev);
        control[r] = {node->GetId(), ifIndex};
        if (r == Rank())
        {
            auto receiver = CreateObject<MpiReceiver>();
            receiver->SetReceiveCallback(MakeBoundCallback(&ReceiveNotice, &end));
            dev->AggregateObject(receiver);
        }
    }
    const uint32_t self = Rank();
    const Time notice = end.Notice();
    end.SetBroadcast(
        [control, self, notice](Time doneAt)
        {
            for (uint32_t r = 0; r < control.size(); ++r)
            {
                if (r != self)
                {
                    MpiInterface::SendPacket(
                        EncodeNotice(doneAt), doneAt + notice, control[r].first, control[r].second);
                }
            }
        });
}

std::vector<std::string>
RunAcrossRanks::Gather(const std::string& mine)
{
    const int ranks = int(Ranks());
    const int len = int(mine.size());
    std::vector<int> lens(Rank() == 0 ? ranks : 0);
    MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    std::vector<int> offsets(lens.size(), 0);
    size_t total = 0;
    for (size_t r = 0; r < lens.size(); ++r)
    {
        offsets[r] = int(total);
        total += size_t(lens[r]);
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
