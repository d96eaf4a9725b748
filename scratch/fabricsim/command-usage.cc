#include "command-usage.h"

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

} // namespace

const char*
CommonOptionsText()
{
    return "  Every command also takes --memory-limit SIZE (default 80% of this machine's memory: "
           "work\n"
           "  estimated past it exits 2 before it starts, and memory it still runs out of exits 2 "
           "too),\n"
           "  --overlay FILE (a calibration overlay's parameters, as --set assignments) and\n"
           "  --SchedulerType=NAME (ns-3's event scheduler; default ns3::FabricScheduler, which\n"
           "  runs simultaneous events in one order whatever order they were scheduled in).\n";
}

std::string
Usage()
{
    std::string u = "usage:\n";
    for (const auto& c : kCommands)
    {
        u += c.text;
    }
    return u + CommonOptionsText();
}

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

} // namespace fabricsim
