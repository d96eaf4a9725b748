#include "remote-links.h"

#include "ns3/fabric-channel.h"
#include "ns3/fabric-net-device.h"
#include "ns3/fabric-topology-helper.h"
#include "ns3/mpi-interface.h"
#include "ns3/mpi-receiver.h"
#include "ns3/node.h"

namespace fabricsim
{

namespace
{

void
SendAcross(uint32_t node, uint32_t ifIndex, ns3::Ptr<ns3::Packet> encoded, ns3::Time arrival)
{
    ns3::MpiInterface::SendPacket(encoded, arrival, node, ifIndex);
}

void
ReceiveAcross(ns3::FabricChannel* channel, int end, ns3::Ptr<ns3::Packet> encoded)
{
    channel->ReceiveRemote(end, encoded);
}

} // namespace

uint32_t
InstallRemoteLinks(ns3::FabricTopologyHelper& fabric, uint32_t rank)
{
    uint32_t wired = 0;
    const uint32_t links = uint32_t(fabric.GetTopology().links.size());
    for (uint32_t l = 0; l < links; ++l)
    {
        ns3::Ptr<ns3::FabricChannel> ch = fabric.GetLink(l);
        ns3::Ptr<ns3::NetDevice> dev[2] = {ch->GetDevice(0), ch->GetDevice(1)};
        const uint32_t sys[2]
            = {dev[0]->GetNode()->GetSystemId(), dev[1]->GetNode()->GetSystemId()};
        if (sys[0] == sys[1] || (sys[0] != rank && sys[1] != rank))
        {
            continue;
        }
        const int local = sys[0] == rank ? 0 : 1;
        const int far = 1 - local;
        ch->SetRemoteEnd(far,
                         ns3::MakeBoundCallback(
                             &SendAcross, dev[far]->GetNode()->GetId(), dev[far]->GetIfIndex()));
        auto receiver = ns3::CreateObject<ns3::MpiReceiver>();
        receiver->SetReceiveCallback(
            ns3::MakeBoundCallback(&ReceiveAcross, ns3::PeekPointer(ch), local));
        dev[local]->AggregateObject(receiver);
        ++wired;
    }
    return wired;
}

} // namespace fabricsim
