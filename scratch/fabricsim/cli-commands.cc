#include "cli-commands.h"

#include "attribute-doc.h"
#include "calibrate-command.h"
#include "calibration-parameters.h"
#include "cli-options.h"
#include "collective-command.h"
#include "fabric-scenario.h"
#include "fit-compute-command.h"
#include "inference-run.h"
#include "input-error.h"
#include "provenance.h"
#include "replay-command.h"
#include "validate-serving-command.h"

#include "ns3/fabric-runner.h"

#include <unistd.h>

#include <iostream>

namespace fabricsim
{

namespace
{

/// One command's usage: the synopsis lines and what it does.
struct CommandUsage
{
    const char* name;
    const char* text;
};

const CommandUsage kCommands[] = {
    {"run",
     "  fabricsim run [SCENARIO.json] [--out DIR] [--set key.path=value ...] "
     "[--ns3::Type::Attr=value ...]\n"
     "                [--progress | --no-progress] [--backend packet|analytical] [--trace] "
     "[--record]\n"
     "                [--memo on|off|verify[=N]]\n"
     "      Run a fabric or inference scenario (default: scenarios/default.json); write "
     "DIR/summary.json\n"
     "      and CSVs (DIR default ./out). Inference: --trace writes a Perfetto timeline, --record "
     "the\n"
     "      replayable programs (programs.jsonl); --backend analytical runs the flow model; "
     "--memo on\n"
     "      simulates each repeated collective once and replays it (same results; packet "
     "backend);\n"
     "      --memo verify[=N] simulates every Nth hit (10) instead and compares it with what "
     "would replay.\n"},
    {"collective",
     "  fabricsim collective SCENARIO.json --coll C (--algo A | --schedule FILE) [-b MIN] [-e "
     "MAX] [-f FACTOR]\n"
     "                [-n ITERS] [-w WARMUP] [--backend packet|analytical] [--out DIR] "
     "[--channels N]\n"
     "                [--chunks N] [--proto Simple|LL|LL128] [--root R] [--ranks N] [--local-size "
     "L]\n"
     "                [--set key.path=value ...] [--ns3::Type::Attr=value ...]\n"
     "      nccl-tests-style sweep of one collective on the scenario's fabric (ranks = its hosts "
     "in order;\n"
     "      sizes take K/M/G suffixes); prints the nccl-tests table, a row as each size is "
     "measured; with\n"
     "      --out writes DIR/collective.json and .csv. The scenario's stop_ns caps each size's "
     "run.\n"
     "      C: allreduce, allgather, reducescatter, alltoall, broadcast, reduce.\n"
     "      A: auto (the fastest candidate, timed), ring, tree, rhd, rd, direct, pairwise, "
     "bruck,\n"
     "         hierarchical (not every one for every collective).\n"
     "      nccl-tests' long names work too: --minbytes, --maxbytes, --stepfactor, --iters, "
     "--warmup_iters.\n"},
    {"replay",
     "  fabricsim replay TRACE... --scenario S.json [--format auto|kineto|chakra|program] [--step "
     "N] [--ranks N]\n"
     "                [--algo A] [--compute-scale F] [--hw-to GPU [--hw-from GPU]] "
     "[--chakra-cpu-ops]\n"
     "                [--backend analytical|packet] [--export-chakra] [--out DIR] [--set "
     "key.path=value ...]\n"
     "                [--memo on|off|verify[=N]] [--ns3::Type::Attr=value ...]\n"
     "      Replay PyTorch profiler (.json / .json.gz), Chakra (.et) or recorded program traces "
     "(programs.jsonl\n"
     "      of 'run --record'; detected) on the scenario's fabric; writes DIR/replay.json "
     "(recorded vs\n"
     "      replayed step time, change per collective) and communication.csv. --ranks: the "
     "traced job's\n"
     "      ranks where the trace names none; --algo: the collectives' algorithm (default "
     "auto); --memo: as\n"
     "      for run (packet backend; figures in DIR/memo.json).\n"},
    {"calibrate",
     "  fabricsim calibrate MEASUREMENTS... --scenario S.json [--fit p1,p2,...] [--params "
     "OVERLAY] [--out DIR]\n"
     "                [--coll C,...] [--ranks 2,4,8] [--dtype T] [--min-bytes N] [--max-bytes N] "
     "[--fit-min-bytes N]\n"
     "                [--max-evals N] [--backend B] [--deepep-mode ll|normal] "
     "[--deepep-dispatch-dtype fp8|bf16]\n"
     "                [--set key.path=value ...] [--ns3::Type::Attr=value ...]\n"
     "      Run measured points (nccl-tests logs, corpus CSV, DeepEP tables) on the scenario; "
     "writes per-point\n"
     "      and aggregate error, busbw.svg and, with --fit, overlay.json (parameters: "
     "link_efficiency,\n"
     "      hop_latency, launch_overhead, step_latency, message_overhead, local_copy_efficiency; "
     "at most\n"
     "      --max-evals model runs); scripts/plot-run DIR draws busbw.png beside busbw.svg.\n"},
    {"validate-serving",
     "  fabricsim validate-serving RUN_DIR... [--out DIR] [--backend analytical|packet] [--set "
     "key.path=value ...]\n"
     "                [--compute-calibration FILE|none] [--ns3::Type::Attr=value ...]\n"
     "      Replay measured vLLM serving runs (RUN/vllm/meta.json, requests.jsonl; "
     "validation/summary.txt\n"
     "      where present) and report the error of TTFT, TPOT, E2E and throughput; writes "
     "DIR/summary.json,\n"
     "      DIR/validation.md, each run's scenario and the command that reproduces its figures "
     "(RUN.command),\n"
     "      and RUN.per-request.csv (each request measured beside simulated).\n"
     "  fabricsim validate-serving RESULTS... --model CONFIG.json|PRESET --hardware GPU [--gpus "
     "N]\n"
     "                [--parallel tp8|tep8|dep8] [--vllm-version V] [--warmups N] "
     "[--fit-frontend conc=C | --fitted-on conc=C[,C...]] [--out DIR] ...\n"
     "      Replay serving benchmark results (files or folders of vLLM bench serve "
     "--save-result JSONs or\n"
     "      InferenceX's <model>_vllm_<tag>_isl<I>_osl<O>_conc<C>.json) with the closed-loop "
     "client; writes\n"
     "      DIR/comparison.csv (file, metric, measured, simulated, error), validation.md and "
     "summary.json.\n"
     "      --fit-frontend fits the request and per-prompt-token frontend costs on the points "
     "at C and scores\n"
     "      the others; --fitted-on marks the points at C as those the --set costs were fitted "
     "on\n"
     "      (scripts/fit-benchmark-overheads).\n"},
    {"fit-compute",
     "  fabricsim fit-compute TABLE... --hardware GPU [--held-out TABLE... --held-out-hardware "
     "GPU] [--rows half|all]\n"
     "                [--gemm-size m,n|m] [--moe-size tokens,width|tokens] [--base CALIBRATION] "
     "[--out DIR]\n"
     "      Fit the compute calibration on measured kernel tables (GEMM, attention, MoE CSVs) of "
     "one GPU\n"
     "      (default: on a fixed half of the rows, the rest reported as left out); writes "
     "DIR/calibration.json\n"
     "      (for hardware.compute_calibration), errors.json and errors.md. --base keeps that "
     "file's curves\n"
     "      for the classes the tables have no rows of. --gemm-size m fits GEMM by m alone "
     "(default m,n:\n"
     "      one line of m per power-of-two level of n); --moe-size tokens fits MoE by tokens "
     "alone\n"
     "      (default tokens,width: a line per level of the per-expert width inter / tp).\n"},
    {"validate",
     "  fabricsim validate FILE [--coll C] [--ranks N]\n"
     "      Check a schedule (MSCCL XML or JSON IR): exit 0 valid, 1 invalid, 2 unreadable.\n"},
    {"attributes",
     "  fabricsim attributes\n"
     "      Print every fabricsim ns-3 attribute and trace source (markdown).\n"},
    {"help", "  fabricsim help [COMMAND]   (or fabricsim COMMAND --help)\n"},
};

/// What Dispatch takes for every command, printed after each command's usage.
const char* kCommonOptions
    = "  Every command also takes --memory-limit SIZE (default 80% of this machine's memory: work\n"
      "  estimated past it exits 2 before it starts, and memory it still runs out of exits 2 too)\n"
      "  and --overlay FILE (a calibration overlay's parameters, as --set assignments).\n";

/// The usage of every command.
std::string
Usage()
{
    std::string u = "usage:\n";
    for (const auto& c : kCommands)
    {
        u += c.text;
    }
    return u + kCommonOptions;
}

/// The usage of \p command, or nullptr when there is no such command.
const char*
CommandUsageText(const std::string& command)
{
    for (const auto& c : kCommands)
    {
        if (command == c.name)
        {
            return c.text;
        }
    }
    return nullptr;
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
        out << "usage:\n" << CommandUsageText(rawArgs[1]) << kCommonOptions;
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
            out << "usage:\n" << usage << kCommonOptions;
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
