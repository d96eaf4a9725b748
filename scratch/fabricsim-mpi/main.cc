/*
 * fabricsim-mpi: `fabricsim run` on ns-3's distributed engine, one MPI rank per process.
 *
 *   mpirun -np N fabricsim-mpi run [SCENARIO.json] [--partition auto|FILE]
 *          [--SimulatorImplementationType=KERNEL] [every option of `fabricsim run`]
 *
 * KERNEL: ns3::DistributedSimulatorImpl (granted time windows, the default) or
 * ns3::NullMessageSimulatorImpl. The fabric is cut into N parts (`auto`, or a file naming each
 * node's rank); rank 0 writes the outputs, the same files a run on one process writes, and
 * reports. Options and exit codes are those of `fabricsim run`; a rank other than 0 that fails
 * ends the run with MPI_Abort after saying which rank and why.
 */
#include "cli-main.h"
#include "output-writer.h"

#include "ns3/distributed-engine.h"
#include "ns3/nstime.h"
#include "ns3/run-across-ranks.h"

#include <mpi.h>

#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace
{

/// Takes every `NAME=VALUE` or `NAME VALUE` of \p name out of \p args; the last value wins.
std::string
TakeOption(std::vector<std::string>& args, const std::string& name, std::string value)
{
    for (size_t i = 0; i < args.size(); ++i)
    {
        if (args[i].rfind(name + "=", 0) == 0)
        {
            value = args[i].substr(name.size() + 1);
            args.erase(args.begin() + long(i));
            --i;
        }
        else if (args[i] == name && i + 1 < args.size())
        {
            value = args[i + 1];
            args.erase(args.begin() + long(i), args.begin() + long(i) + 2);
            --i;
        }
    }
    return value;
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
    // ns-3's global value, spelled as ns-3 programs take it; granted time windows by default.
    const std::string kernel = TakeOption(
        args, "--SimulatorImplementationType", fabricsim::DistributedKernels().front());
    const std::string partition = TakeOption(args, "--partition", "auto");
    const bool known = fabricsim::StartDistributedEngine(&argc, &argv, kernel);
    const uint32_t rank = fabricsim::DistributedRank();
    // Rank 0 speaks for the run: the other ranks read the same input and fail the same way, so
    // their words are kept back unless one fails alone.
    std::ostringstream quietOut;
    std::ostringstream quietErr;
    std::streambuf* out = std::cout.rdbuf();
    std::streambuf* err = std::cerr.rdbuf();
    if (rank != 0)
    {
        std::cout.rdbuf(quietOut.rdbuf());
        std::cerr.rdbuf(quietErr.rdbuf());
    }
    int rc = 0;
    const std::string refusal = Refusal(args, known, kernel);
    if (!refusal.empty())
    {
        std::cerr << "fabricsim-mpi: error: " << refusal << "\n";
        rc = 2;
    }
    else
    {
        fabricsim::RunAcrossRanks distribution(partition, kernel);
        fabricsim::SetActiveRunDistribution(&distribution);
        rc = fabricsim::RunCli(args);
        fabricsim::SetActiveRunDistribution(nullptr);
    }
    std::cout.rdbuf(out);
    std::cerr.rdbuf(err);
    if (rank != 0 && rc != 0 && rc != 2)
    {
        std::cerr << "fabricsim-mpi: rank " << rank << " failed (exit " << rc
                  << "): " << quietErr.str() << std::flush;
        MPI_Abort(MPI_COMM_WORLD, rc);
    }
    fabricsim::StopDistributedEngine();
    return rc;
}
