/*
 * fabricsim-mpi: `fabricsim run` on ns-3's distributed engine, one MPI rank per process.
 *
 *   mpirun -np N fabricsim-mpi run [SCENARIO.json] [--SimulatorImplementationType=KERNEL]
 *          [every option of `fabricsim run`]
 *
 * KERNEL: ns3::DistributedSimulatorImpl (granted time windows, the default) or
 * ns3::NullMessageSimulatorImpl. Outputs, options and exit codes are those of `fabricsim run`.
 */
#include "cli-main.h"
#include "output-writer.h"

#include "ns3/distributed-engine.h"
#include "ns3/nstime.h"

#include <iostream>
#include <string>
#include <vector>

namespace
{

/// Takes --SimulatorImplementationType=NAME out of \p args (ns-3's global value, spelled as ns-3
/// programs take it); the default is granted time windows.
std::string
TakeKernelOption(std::vector<std::string>& args)
{
    const std::string opt = "--SimulatorImplementationType=";
    std::string kernel = fabricsim::DistributedKernels().front();
    for (size_t i = 0; i < args.size(); ++i)
    {
        if (args[i].rfind(opt, 0) == 0)
        {
            kernel = args[i].substr(opt.size());
            args.erase(args.begin() + long(i));
            --i;
        }
    }
    return kernel;
}

/// Why this command line cannot run here, or "" when it can.
std::string
Refusal(const std::vector<std::string>& args, bool kernelKnown, const std::string& kernel)
{
    if (!kernelKnown)
    {
        std::string list;
        for (const auto& k : fabricsim::DistributedKernels())
        {
            list += (list.empty() ? "" : " or ") + k;
        }
        return "<command line>: --SimulatorImplementationType: expected " + list + ", found \""
               + kernel + "\"";
    }
    if (args.empty() || args[0] != "run")
    {
        return "<command line>: command: expected run (fabricsim-mpi runs `fabricsim run` on "
               "ns-3's distributed engine; use fabricsim for the others), found \""
               + (args.empty() ? std::string() : args[0]) + "\"";
    }
    if (fabricsim::DistributedRanks() > 1)
    {
        return "<command line>: mpirun -np: expected 1 rank (runs partitioned across ranks are "
               "not built yet: docs/performance.md), found "
               + std::to_string(fabricsim::DistributedRanks());
    }
    return "";
}

} // namespace

int
main(int argc, char** argv)
{
    // Before any Time exists: a 64 B frame on an 800G link lasts 0.64 ns.
    ns3::Time::SetResolution(ns3::Time::PS);
    fabricsim::RemovePartialOutputOnSignals();
    std::vector<std::string> args(argv + 1, argv + argc);
    const std::string kernel = TakeKernelOption(args);
    const bool known = fabricsim::StartDistributedEngine(&argc, &argv, kernel);
    int rc = 0;
    const std::string refusal = Refusal(args, known, kernel);
    if (!refusal.empty())
    {
        if (fabricsim::DistributedRank() == 0)
        {
            std::cerr << "fabricsim-mpi: error: " << refusal << "\n";
        }
        rc = 2;
    }
    else
    {
        rc = fabricsim::RunCli(args);
    }
    fabricsim::StopDistributedEngine();
    return rc;
}
