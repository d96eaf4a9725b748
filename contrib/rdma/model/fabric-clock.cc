#include "fabric-clock.h"

#include "ns3/simulator.h"

namespace ns3
{

SimulatorImpl* FabricClock::s_impl = nullptr;

void
FabricClock::Bind()
{
    s_impl = PeekPointer(Simulator::GetImplementation());
    Simulator::ScheduleDestroy(&FabricClock::Unbind);
}

void
FabricClock::Unbind()
{
    s_impl = nullptr;
}

} // namespace ns3
