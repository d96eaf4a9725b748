/*
 * The links a partition cuts, wired through ns-3's MPI interface: frames toward a node of
 * another rank leave through MpiInterface::SendPacket, and an MpiReceiver on each local device
 * of a cut link takes them in (FabricChannel::SetRemoteEnd / ReceiveRemote).
 */
#ifndef FABRICSIM_REMOTE_LINKS_H
#define FABRICSIM_REMOTE_LINKS_H

#include <cstdint>

namespace ns3
{
class FabricTopologyHelper;
}

namespace fabricsim
{

/// For every link of \p fabric (installed, with system ids) whose ends are on different ranks
/// and one of them on \p rank: wires it as above. Returns the number of such links.
uint32_t InstallRemoteLinks(ns3::FabricTopologyHelper& fabric, uint32_t rank);

} // namespace fabricsim

#endif
