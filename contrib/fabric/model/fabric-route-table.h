/*
 * What a switch asks to forward: the next-hop ports of a node toward a destination host.
 * The topology layer implements it (BFS next-hop sets); the switch never searches.
 */
#ifndef FABRICSIM_FABRIC_ROUTE_TABLE_H
#define FABRICSIM_FABRIC_ROUTE_TABLE_H

#include "ns3/simple-ref-count.h"

#include <cstdint>
#include <vector>

namespace ns3
{

class FabricRouteTable : public SimpleRefCount<FabricRouteTable>
{
  public:
    virtual ~FabricRouteTable() = default;
    /// Equal-cost next-hop ports of topology node `node` toward host `dstHost` (may be empty).
    virtual const std::vector<uint16_t>& NextHops(uint32_t node, uint32_t dstHost) const = 0;
};

} // namespace ns3

#endif
