#include "distributed-engine.h"

#include "ns3/global-value.h"
#include "ns3/mpi-interface.h"
#include "ns3/string.h"

#include <algorithm>

namespace fabricsim
{

const std::vector<std::string>&
DistributedKernels()
{
    static const std::vector<std::string> kernels{"ns3::DistributedSimulatorImpl",
                                                  "ns3::NullMessageSimulatorImpl"};
    return kernels;
}

bool
StartDistributedEngine(int* argc, char*** argv, const std::string& kernel)
{
    const auto& k = DistributedKernels();
    const bool known = std::find(k.begin(), k.end(), kernel) != k.end();
    // MpiInterface picks its communication scheme (granted windows or null messages) from this
    // global value, and ns3::Simulator its engine on first use.
    ns3::GlobalValue::Bind("SimulatorImplementationType", ns3::StringValue(known ? kernel : k[0]));
    ns3::MpiInterface::Enable(argc, argv);
    return known;
}

uint32_t
DistributedRank()
{
    return ns3::MpiInterface::GetSystemId();
}

uint32_t
DistributedRanks()
{
    return ns3::MpiInterface::GetSize();
}

void
StopDistributedEngine()
{
    ns3::MpiInterface::Disable();
}

} // namespace fabricsim
