#include "cli-commands.h"

#include "attribute-doc.h"
#include "calibrate-command.h"
#include "calibration-parameters.h"
#include "cli-options.h"
#include "collective-command.h"
#include "command-usage.h"
#include "fabric-scenario.h"
#include "fit-compute-command.h"
#include "inference-run.h"
#include "input-error.h"
#include "provenance.h"
#include "replay-command.h"
#include "validate-command.h"
#include "validate-serving-command.h"

#include "ns3/fabric-runner.h"
#include "ns3/run-distribution.h"

#include <unistd.h>

#include <iostream>

namespace fabricsim
{

namespace
{

/// `fabricsim validate FILE [--coll C] [--ranks N]`: the schedule validator. 0 valid, 1 invalid,
/// 2 unreadable or bad arguments.
int
RunValidateArgs(const std::vector<std::string>& a, std::ostream& out, std::ostream& err)
{
    std::string file;
    std::string coll;
    int ranks = 0;
    for (size_t i = 1; i < a.size(); ++i)
    {
        std::string v;
        if (TakeOption(a, i, "--coll", v))
        {
            coll = v;
        }
        else if (TakeOption(a, i, "--ranks", v))
        {
            ranks = IntOption(v, "--ranks", 1);
        }
        else if (!a[i].empty() && a[i][0] != '-' && file.empty())
        {
            file = a[i];
        }
        else
        {
            throw fabricsim::InputError(kCommandLineSource,
                                        a[i],
                                        "a schedule file, --coll C or --ranks N",
                                        "\"" + a[i] + "\"");
        }
    }
    if (file.empty())
    {
        throw fabricsim::InputError(
            kCommandLineSource,
            "FILE",
            "a schedule file (fabricsim validate FILE [--coll C] [--ranks N])",
            "nothing");
    }
    return RunValidateCommand(file, coll, ranks, out, err);
}

bool
IsHelp(const std::string& a)
{
    return a == "--help" || a == "-h";
}

int
CmdRun(const std::vector<std::string>& a, std::ostream& out, std::ostream& err)
{
    std::string scenario;
    InferenceRunOptions iopt;
    RunOptions& opt = iopt.run;
    opt.progress = isatty(2);
    std::vector<std::string> sets;
    for (size_t i = 1; i < a.size(); ++i)
    {
        std::string v;
        if (TakeOption(a, i, "--out", v))
        {
            opt.outDir = v;
        }
        else if (TakeOption(a, i, "--set", v))
        {
            sets.push_back(v);
        }
        else if (TakeOption(a, i, "--backend", v))
        {
            iopt.backend = v;
        }
        else if (a[i] == "--trace")
        {
            iopt.timeline = true;
        }
        else if (a[i] == "--record")
        {
            iopt.record = true;
        }
        else if (TakeOption(a, i, "--memo", v))
        {
            ParseMemoOption(v, iopt.memo, iopt.memoVerify);
        }
        else if (a[i].rfind("--ns3::", 0) == 0)
        {
            opt.ns3Args.push_back(a[i]);
        }
        else if (a[i] == "--progress")
        {
            opt.progress = true;
        }
        else if (a[i] == "--no-progress")
        {
            opt.progress = false;
        }
        else if (!a[i].empty() && a[i][0] != '-' && scenario.empty())
        {
            scenario = a[i];
        }
        else
        {
            throw fabricsim::InputError("<command line>",
                                        a[i],
                                        "a scenario path or an option of 'fabricsim run'",
                                        "\"" + a[i] + "\"");
        }
    }
    if (scenario.empty())
    {
        scenario = DefaultScenarioPath();
    }
    nlohmann::json doc = LoadScenarioJson(scenario, sets);
    opt.distribution = ActiveRunDistribution();
    if (IsInferenceScenario(doc) && opt.distribution && opt.distribution->Ranks() > 1)
    {
        throw fabricsim::InputError(scenario,
                                    "serving",
                                    "a fabric scenario (`traffic`) for a run across ranks "
                                    "(serving and replay across ranks: docs/performance.md)",
                                    "an inference scenario");
    }
    if (IsInferenceScenario(doc))
    {
        return RunInferenceScenario(doc, scenario, iopt, out, err);
    }
    if (iopt.timeline || iopt.record || iopt.memo || iopt.memoVerify > 0
        || iopt.backend != "packet")
    {
        throw fabricsim::InputError(scenario,
                                    "serving",
                                    "an inference scenario for --trace, --record, --memo or "
                                    "--backend",
                                    "a fabric scenario");
    }
    FabricScenario sc = ParseFabricScenario(doc, scenario);
    opt.scenario = doc;
    return RunFabricScenario(sc, opt, out);
}

} // namespace

std::string
DefaultScenarioPath()
{
    return std::string(FABRICSIM_SOURCE_DIR) + "/scenarios/default.json";
}

int
Dispatch(const std::vector<std::string>& rawArgs, std::ostream& out, std::ostream& err)
{
    // --overlay FILE becomes the file's --set assignments (calibrated parameters).
    if (!rawArgs.empty() && rawArgs[0] == "help" && rawArgs.size() == 2
        && CommandUsageText(rawArgs[1]))
    {
        out << "usage:\n" << CommandUsageText(rawArgs[1]) << CommonOptionsText();
        return 0;
    }
    if (rawArgs.empty() || rawArgs[0] == "help" || IsHelp(rawArgs[0]))
    {
        (rawArgs.empty() ? err : out) << Usage();
        return rawArgs.empty() ? 2 : 0;
    }
    const char* usage = CommandUsageText(rawArgs[0]);
    if (!usage)
    {
        err << Usage();
        throw fabricsim::InputError("<command line>",
                                    "command",
                                    "one of: run, collective, replay, calibrate, validate, "
                                    "validate-serving, attributes, help",
                                    "\"" + rawArgs[0] + "\"");
    }
    // COMMAND --help (anywhere among its arguments) prints that command's usage and runs nothing.
    for (size_t i = 1; i < rawArgs.size(); ++i)
    {
        if (IsHelp(rawArgs[i]))
        {
            out << "usage:\n" << usage << CommonOptionsText();
            return 0;
        }
    }
    // The command line and every file it reads go into its outputs' provenance.json.
    ProvenanceScope provenance(rawArgs);
    try
    {
        // --overlay FILE becomes the file's --set assignments (calibrated parameters).
        const std::vector<std::string> args = ExpandOverlayArgs(rawArgs);
        if (args[0] == "attributes")
        {
            if (args.size() > 1)
            {
                throw fabricsim::InputError(
                    kCommandLineSource, args[1], "no arguments to 'fabricsim attributes'", args[1]);
            }
            out << AttributeReferenceMarkdown();
            return 0;
        }
        if (args[0] == "run")
        {
            return CmdRun(args, out, err);
        }
        if (args[0] == "collective")
        {
            return RunCollectiveCommand(ParseCollectiveArgs(args), out, err);
        }
        if (args[0] == "replay")
        {
            return RunReplayCommand(ParseReplayArgs(args), out, err);
        }
        if (args[0] == "calibrate")
        {
            return RunCalibrateCommand(ParseCalibrateArgs(args), out, err);
        }
        if (args[0] == "fit-compute")
        {
            return RunFitComputeCommand(ParseFitComputeArgs(args), out, err);
        }
        if (args[0] == "validate-serving")
        {
            return RunValidateServingCommand(ParseValidateServingArgs(args), out, err);
        }
        return RunValidateArgs(args, out, err);
    }
    catch (const fabricsim::InputError& e)
    {
        // A wrong option or argument: the command's usage follows the error naming it.
        if (e.File() == kCommandLineSource)
        {
            err << "usage:\n" << usage;
        }
        throw;
    }
}

} // namespace fabricsim
