/*
 * fabricsim: the command-line face of the simulator.
 *
 *   fabricsim run [SCENARIO.json] [--out DIR] [--set key.path=value ...] [--ns3::Type::Attr=value
 * ...] fabricsim validate FILE [--coll C] [--ranks N]
 *
 * Bad input exits 2 naming the file and field; nothing is written then.
 */
#include "cli-commands.h"
#include "input-error.h"
#include "output-writer.h"

#include "ns3/nstime.h"

#include <cstring>
#include <iostream>

int
main(int argc, char** argv)
{
    // Before any Time exists: a 64 B frame on an 800G link lasts 0.64 ns.
    ns3::Time::SetResolution(ns3::Time::PS);
    // Ctrl-C or a kill mid-run leaves no .partial folder behind (exit 130 / 143).
    fabricsim::RemovePartialOutputOnSignals();
    std::vector<std::string> args(argv + 1, argv + argc);
    try
    {
        return fabricsim::Dispatch(args, std::cout, std::cerr);
    }
    catch (const fabricsim::InputError& e)
    {
        std::cerr << "fabricsim: error: " << e.what() << "\n";
        return 2;
    }
    catch (const std::exception& e)
    {
        std::cerr << "fabricsim: internal error: " << e.what() << "\n";
        return 1;
    }
}
