#include "collective-command.h"

#include "cli-options.h"
#include "executor-attributes.h"
#include "input-error.h"
#include "nccl-report.h"
#include "output-writer.h"
#include "schedule-collectives.h"

#include "ns3/collective-sweep.h"
#include "ns3/fabric-backend.h"
#include "ns3/fabric-setup.h"
#include "ns3/run-provenance.h"

#include <unistd.h>

#include <chrono>
#include <iomanip>
#include <iostream>
#include <memory>

namespace fabricsim
{

namespace
{

const char* kCli = kCommandLineSource;

std::string
Lower(std::string s)
{
    for (char& c : s)
    {
        c = char(std::tolower(static_cast<unsigned char>(c)));
    }
    return s;
}

} // namespace

CollectiveCommandOptions
ParseCollectiveArgs(const std::vector<std::string>& a)
{
    CollectiveCommandOptions o;
    bool haveMin = false;
    bool haveMax = false;
    for (size_t i = 1; i < a.size(); ++i)
    {
        std::string v;
        if (TakeOption(a, i, "--coll", v))
        {
            o.coll = v;
        }
        else if (TakeOption(a, i, "--algo", v))
        {
            o.schedule.algo = v;
        }
        else if (TakeOption(a, i, "--schedule", v))
        {
            o.schedule.scheduleFile = v;
        }
        else if (TakeOption(a, i, "-b", v) || TakeOption(a, i, "--minbytes", v))
        {
            o.minBytes = ParseNcclSize(v, "-b");
            haveMin = true;
        }
        else if (TakeOption(a, i, "-e", v) || TakeOption(a, i, "--maxbytes", v))
        {
            o.maxBytes = ParseNcclSize(v, "-e");
            haveMax = true;
        }
        else if (TakeOption(a, i, "-f", v) || TakeOption(a, i, "--stepfactor", v))
        {
            o.factor = uint64_t(IntOption(v, "-f", 2));
        }
        else if (TakeOption(a, i, "-n", v) || TakeOption(a, i, "--iters", v))
        {
            o.iters = IntOption(v, "-n", 1);
        }
        else if (TakeOption(a, i, "-w", v) || TakeOption(a, i, "--warmup_iters", v))
        {
            o.warmup = IntOption(v, "-w", 0);
        }
        else if (TakeOption(a, i, "--backend", v))
        {
            o.backend = v;
        }
        else if (TakeOption(a, i, "--out", v))
        {
            o.outDir = v;
        }
        else if (TakeOption(a, i, "--channels", v))
        {
            o.schedule.channels = IntOption(v, "--channels", 1);
        }
        else if (TakeOption(a, i, "--chunks", v))
        {
            o.schedule.chunks = IntOption(v, "--chunks", 1);
        }
        else if (TakeOption(a, i, "--proto", v))
        {
            if (!ParseProtocol(v))
            {
                throw fabricsim::InputError(
                    kCli, "--proto", "Simple, LL or LL128", "\"" + v + "\"");
            }
            o.schedule.protocol = v;
        }
        else if (TakeOption(a, i, "--root", v))
        {
            o.schedule.root = uint32_t(IntOption(v, "--root", 0));
        }
        else if (TakeOption(a, i, "--ranks", v))
        {
            o.ranks = IntOption(v, "--ranks", 1);
        }
        else if (TakeOption(a, i, "--local-size", v))
        {
            o.localSize = IntOption(v, "--local-size", 1);
        }
        else if (TakeOption(a, i, "--set", v))
        {
            o.sets.push_back(v);
        }
        else if (a[i].rfind("--ns3::", 0) == 0)
        {
            o.ns3Args.push_back(a[i]);
        }
        else if (!a[i].empty() && a[i][0] != '-' && o.scenario.empty())
        {
            o.scenario = a[i];
        }
        else
        {
            throw fabricsim::InputError(kCli,
                                        a[i],
                                        "a scenario path or an option of 'fabricsim collective'",
                                        "\"" + a[i] + "\"");
        }
    }
    if (o.scenario.empty())
    {
        throw fabricsim::InputError(kCli,
                                    "SCENARIO",
                                    "a scenario file (fabricsim collective SCENARIO.json ...)",
                                    "nothing");
    }
    if (o.coll.empty() || !ParseCollectiveKind(o.coll))
    {
        throw fabricsim::InputError(
            kCli,
            "--coll",
            "one of allreduce, allgather, reducescatter, alltoall, broadcast, reduce",
            o.coll.empty() ? "nothing" : "\"" + o.coll + "\"");
    }
    if (o.schedule.algo.empty() == o.schedule.scheduleFile.empty())
    {
        throw fabricsim::InputError(kCli,
                                    "--algo",
                                    "exactly one of --algo NAME and --schedule FILE",
                                    o.schedule.algo.empty() ? "neither" : "both");
    }
    if (haveMin && !haveMax)
    {
        o.maxBytes = std::max(o.maxBytes, o.minBytes);
    }
    if (haveMax && !haveMin)
    {
        o.minBytes = std::min(o.minBytes, o.maxBytes);
    }
    if (o.minBytes > o.maxBytes)
    {
        throw fabricsim::InputError(kCli,
                                    "-b",
                                    "a minimum size <= the maximum (-e "
                                        + std::to_string(o.maxBytes) + ")",
                                    std::to_string(o.minBytes));
    }
    o.backend = Lower(o.backend);
    ParseBackendKind(o.backend, kCli, "--backend"); // checked before anything runs
    return o;
}

int
RunCollectiveCommand(const CollectiveCommandOptions& opt, std::ostream& out, std::ostream& err)
{
    // Everything that can be wrong with the input is found before anything is written.
    nlohmann::json doc = LoadScenarioJson(opt.scenario, opt.sets);
    FabricScenario sc = ParseFabricScenario(doc, opt.scenario);
    const CollectiveKind kind = *ParseCollectiveKind(opt.coll);
    const int hosts = int(sc.topology.NumHosts());
    const int n = opt.ranks > 0 ? opt.ranks : hosts;
    if (n > hosts)
    {
        throw fabricsim::InputError(kCli,
                                    "--ranks",
                                    "at most the scenario's " + std::to_string(hosts) + " hosts",
                                    std::to_string(n));
    }
    const int localSize = opt.localSize > 0 ? opt.localSize : ServerLocalSize(sc.topology, n);
    ConfigureSimulator(sc, opt.ns3Args); // rejects bad --ns3:: overrides and attributes
    CcFactory(CollectiveCcName(sc), sc.file, "transport.cc");
    ScheduleSource source(
        opt.schedule, kind, n, localSize, AutoProbe(sc), ns3::ExecutorConfigFromAttributes());
    std::vector<uint64_t> sizes;
    for (uint64_t s : SizeSweep(opt.minBytes, opt.maxBytes, opt.factor))
    {
        sizes.push_back(s);
        std::string name;
        source.For(std::max<uint64_t>(AlignedSize(kind, s, n), 1),
                   name); // generate (and check) up front
    }
    // Files only where the user asked for them (--out), as the help says.
    std::unique_ptr<OutputDir> dir;
    if (!opt.outDir.empty())
    {
        dir = std::make_unique<OutputDir>(opt.outDir);
    }

    const std::string scenarioName = sc.name;
    out << "# fabricsim collective: " << ToString(kind) << " on " << n << " ranks, "
        << (opt.schedule.scheduleFile.empty() ? "algorithm " + opt.schedule.algo
                                              : "schedule " + opt.schedule.scheduleFile)
        << ", backend " << opt.backend << "\n"
        << "# scenario " << scenarioName << " (" << sc.topology.type << "), " << opt.warmup
        << " warm-up and " << opt.iters << " timed iteration(s) per size, type float\n"
        << "#\n";
    for (int r = 0; r < n && r < 64; ++r)
    {
        out << "#  Rank " << std::setw(3) << r << " on "
            << sc.topology.nodes[sc.topology.hosts[r]].name << "\n";
    }
    out << NcclTableHeader() << std::flush;

    std::vector<NcclRow> rows;
    nlohmann::json jrows = nlohmann::json::array();
    bool allComplete = true;
    bool stuck = false; // a size that did not complete for a reason other than stop_ns
    const bool progress = isatty(2);
    const auto wall0 = std::chrono::steady_clock::now();
    CollectiveSweepOptions sweep;
    sweep.backend = ParseBackendKind(opt.backend, kCli, "--backend");
    sweep.warmup = opt.warmup;
    sweep.iters = opt.iters;
    sweep.root = opt.schedule.root;
    sweep.ns3Args = opt.ns3Args;
    auto onRow = [&](const CollectiveSweepRow& r)
    {
        if (r.bytes == 0)
        {
            out << "# size " << r.requested << " holds fewer than " << n
                << " elements per rank; skipped\n";
            return;
        }
        rows.push_back(r.row);
        if (r.m.m_complete)
        {
            out << NcclTableLine(r.row);
        }
        else if (r.m.m_reachedStopTime)
        {
            // The user's cap, not a fault: one line (collective.json keeps the whole report).
            allComplete = false;
            out << "# size " << r.bytes << ": stopped at the scenario's stop_ns (" << sc.stopNs
                << " ns) before it completed\n";
        }
        else
        {
            allComplete = false;
            stuck = true;
            out << "# size " << r.bytes << ": collective did not complete (see stderr)\n";
            err << "fabricsim: " << ToString(kind) << " of " << r.bytes
                << " bytes: " << r.m.m_stuckReport;
        }
        out << std::flush; // a killed sweep keeps the rows it measured
        jrows.push_back(r.json);
        if (progress)
        {
            std::fprintf(stderr,
                         "[fabricsim] %llu bytes simulated in %.2f s\n",
                         (unsigned long long)r.bytes,
                         r.wallS);
        }
    };
    MeasureCollectiveSweep(sc, kind, n, source, sizes, sweep, onRow);
    out << "# Out of bounds values : "
        << (allComplete ? "0 OK"
            : stuck     ? "stuck collectives, see stderr"
                        : "sizes stopped at stop_ns")
        << "\n";
    out << NcclAverageLine(rows) << "#\n";

    nlohmann::json summary;
    summary["scenario"] = scenarioName;
    summary["collective"] = ToString(kind);
    summary["ranks"] = n;
    summary["backend"] = opt.backend;
    if (opt.schedule.scheduleFile.empty())
    {
        summary["algorithm"] = opt.schedule.algo;
        summary["channels"] = opt.schedule.channels;
        summary["chunks_per_rank"] = opt.schedule.chunks;
    }
    else
    {
        summary["schedule"] = opt.schedule.scheduleFile;
    }
    summary["local_size"] = localSize;
    summary["type"] = "float";
    summary["warmup_iters"] = opt.warmup;
    summary["iters"] = opt.iters;
    summary["executor"] = ExecutorConfigJson(ns3::ExecutorConfigFromAttributes());
    summary["rows"] = jrows;
    summary["avg_busbw_gbps"] = AverageBusBandwidth(rows);
    summary["complete"] = allComplete;
    if (dir)
    {
        dir->Write("collective.json", summary.dump(2) + "\n");
        dir->Write("collective.csv", NcclRowsCsv(rows));
        const double wall
            = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
        // Wall-clock time lives apart so collective.json is byte-identical for a seed.
        dir->Write("timing.json", nlohmann::json{{"wall_s", wall}}.dump(2) + "\n");
        dir->Write("provenance.json", ProvenanceText(doc, opt.ns3Args));
        dir->Commit();
    }
    if (!stuck && !allComplete)
    {
        err << "fabricsim: sizes stopped at the scenario's stop_ns (" << sc.stopNs
            << " ns); it caps each size's run\n";
    }
    return allComplete ? 0 : stuck ? 1 : 3;
}

} // namespace fabricsim
