/*
 * A scenario file run from C++ (docs/scenario-scripts.md, "A scenario file from C++"): the JSON
 * scenario read with ReadScenario, one ns-3 attribute changed in code, the run done by the
 * fabric runner that `fabricsim run` uses, which writes the outputs and prints the summary.
 *
 *   scripts/ns3-run scenario-from-file
 *   scripts/ns3-run scenario-from-file --rateAi=80Mbps --out=out-ai
 *
 * Exit code: that of `fabricsim run` (0 done, 1 frame conservation failed, 2 bad input, 3 a PFC
 * deadlock stopped the run).
 */
#include "input-error.h"
#include "scenario.h"

#include "ns3/command-line.h"
#include "ns3/fabric-runner.h"

#include <iostream>

int
main(int argc, char** argv)
{
    ns3::Time::SetResolution(ns3::Time::PS);
    std::string file = "scenarios/fabric-incast.json";
    std::string rateAi = "40Mbps"; // DCQCN's additive increase: the paper's, not the default 20
    std::string out = "out-from-file";
    uint64_t stopNs = 0;
    ns3::CommandLine cmd(__FILE__);
    cmd.AddValue("scenario", "the scenario file", file);
    cmd.AddValue("rateAi", "ns3::Dcqcn::RateAI for this run", rateAi);
    cmd.AddValue("out", "output directory", out);
    cmd.AddValue("stopNs", "end of the run in ns (0: the scenario's stop_ns)", stopNs);
    cmd.Parse(argc, argv);
    try
    {
        fabricsim::Scenario s
            = fabricsim::ReadScenario(fabricsim::LoadScenarioJson(file, {}), file);
        s.fabric.attributes.emplace_back("ns3::Dcqcn::RateAI", rateAi); // after the file's: wins
        if (stopNs > 0)
        {
            s.fabric.stopNs = stopNs;
        }
        fabricsim::RunOptions opt;
        opt.outDir = out;
        opt.scenario = s.document; // provenance.json records the file as read
        return fabricsim::RunFabricScenario(s.fabric, opt, std::cout);
    }
    catch (const fabricsim::InputError& e)
    {
        std::cerr << "scenario-from-file: error: " << e.what() << "\n";
        return 2;
    }
}
