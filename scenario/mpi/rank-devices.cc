#include "rank-devices.h"

#include "ns3/fabric-topology-helper.h"
#include "ns3/mpi-receiver.h"
#include "ns3/node.h"
#include "ns3/simple-net-device.h"

namespace fabricsim
{

using namespace ns3;

std::vector<std::pair<uint32_t, uint32_t>>
AddRankDevices(FabricTopologyHelper& fabric, uint32_t self, Callback<void, Ptr<Packet>> receive)
{
    const uint32_t nodes = uint32_t(fabric.GetTopology().nodes.size());
    uint32_t ranks = 0;
    for (uint32_t n = 0; n < nodes; ++n)
    {
        ranks = std::max(ranks, fabric.GetNode(n)->GetSystemId() + 1);
    }
    std::vector<std::pair<uint32_t, uint32_t>> device(ranks, {UINT32_MAX, 0});
    for (uint32_t n = 0; n < nodes; ++n)
    {
        Ptr<Node> node = fabric.GetNode(n);
        const uint32_t r = node->GetSystemId();
        if (device[r].first != UINT32_MAX)
        {
            continue;
        }
        auto dev = CreateObject<SimpleNetDevice>();
        device[r] = {node->GetId(), node->AddDevice(dev)};
        if (r == self)
        {
            auto receiver = CreateObject<MpiReceiver>();
            receiver->SetReceiveCallback(receive);
            dev->AggregateObject(receiver);
        }
    }
    return device;
}

} // namespace fabricsim
