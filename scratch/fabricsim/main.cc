/*
 * fabricsim: the command-line face of the simulator.
 *
 *   fabricsim run [SCENARIO.json] [--out DIR] [--set key.path=value ...] [--ns3::Type::Attr=value
 * ...] fabricsim validate FILE [--coll C] [--ranks N]
 *
 * Bad input exits 2 naming the file and field; nothing is written then.
 */
#include "cli-main.h"
#include "output-writer.h"

#include "ns3/nstime.h"

int
main(int argc, char** argv)
{
    // Before any Time exists: a 64 B frame on an 800G link lasts 0.64 ns.
    ns3::Time::SetResolution(ns3::Time::PS);
    // Ctrl-C or a kill mid-run leaves no .partial folder behind (exit 130 / 143).
    fabricsim::RemovePartialOutputOnSignals();
    return fabricsim::RunCli(std::vector<std::string>(argv + 1, argv + argc));
}
