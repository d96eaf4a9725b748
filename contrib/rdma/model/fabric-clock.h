/*
 * The simulation time for the packet hot path. Simulator::Now() looks the simulator up on every
 * call (about 50 instructions, five calls a packet-hop: 9 % of a 1,024-host run's instructions
 * under callgrind); FabricClock::Now() keeps the simulator it found until Simulator::Destroy and
 * asks it directly. Same value, any SimulatorImpl (ns-3's distributed ones included).
 */
#ifndef FABRICSIM_FABRIC_CLOCK_H
#define FABRICSIM_FABRIC_CLOCK_H

#include "ns3/nstime.h"
#include "ns3/simulator-impl.h"

namespace ns3
{

class FabricClock
{
  public:
    static Time Now()
    {
        if (s_impl == nullptr)
        {
            Bind();
        }
        return s_impl->Now();
    }

  private:
    /// Caches the simulator and schedules Unbind as a destroy event: Simulator::Destroy frees
    /// the simulator, and the next run's is looked up again.
    static void Bind();
    static void Unbind();
    static SimulatorImpl* s_impl;
};

} // namespace ns3

#endif
