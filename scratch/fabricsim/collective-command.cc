#include "collective-command.h"

#include "cli-options.h"
#include "executor-attributes.h"
#include "generators.h"
#include "input-error.h"
#include "nccl-report.h"
#include "output-writer.h"
#include "schedule-collectives.h"
#include "schedule-loader.h"
#include "schedule-validator.h"
#include "validate-command.h"

#include "ns3/fabric-backend.h"
#include "ns3/fabric-setup.h"
#include "ns3/run-provenance.h"

#include <unistd.h>

#include <chrono>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <numeric>
#include <sstream>

namespace fabricsim
{

namespace
{

const char* kCli = kCommandLineSource;

int
ToInt(const std::string& v, const std::string& opt, int min)
{
    size_t used = 0;
    long x = 0;
    try
    {
        x = std::stol(v, &used);
    }
    catch (const std::exception&)
    {
        used = 0;
    }
    if (used != v.size() || v.empty() || x < min || x > 1000000)
    {
        throw fabricsim::InputError(
            kCli, opt, "an integer >= " + std::to_string(min), "\"" + v + "\"");
    }
    return int(x);
}

std::string
Lower(std::string s)
{
    for (char& c : s)
    {
        c = char(std::tolower(static_cast<unsigned char>(c)));
    }
    return s;
}

/// A schedule per size: the file's (matching collective, ranks and size range) or generated.
class ScheduleSource
{
  public:
    /// "auto" times its candidates on a transport from \p probe (an idle copy of the fabric)
    /// with \p config.
    ScheduleSource(const CollectiveCommandOptions& opt,
                   CollectiveKind kind,
                   int ranks,
                   int localSize,
                   std::function<std::unique_ptr<Transport>()> probe,
                   const ExecutorConfig& config)
        : m_opt(opt)
        , m_kind(kind)
        , m_ranks(ranks)
        , m_config(config)
    {
        m_gen.channels = opt.channels;
        m_gen.chunksPerRank = opt.chunks;
        m_gen.root = opt.root;
        m_gen.localSize = localSize;
        if (!opt.protocol.empty())
        {
            m_gen.protocol = *ParseProtocol(opt.protocol);
        }
        m_auto.m_channels = opt.channels;
        m_auto.m_chunksPerRank = opt.chunks;
        m_auto.m_localSize = localSize;
        m_auto.m_protocol = m_gen.protocol;
        m_auto.m_probe = std::move(probe);
        if (!opt.scheduleFile.empty())
        {
            LoadFile();
        }
    }

    /// The schedule for \p bytes and a name for it.
    const Schedule& For(uint64_t bytes, std::string& name)
    {
        if (!m_file.empty())
        {
            for (const Schedule& s : m_file)
            {
                uint64_t lo = 0;
                uint64_t hi = 0;
                auto a = s.m_attributes.find("minBytes");
                auto b = s.m_attributes.find("maxBytes");
                try
                {
                    lo = a == s.m_attributes.end() ? 0 : std::stoull(a->second);
                    hi = b == s.m_attributes.end() ? 0 : std::stoull(b->second);
                }
                catch (const std::exception&)
                {
                    lo = hi = 0;
                }
                if (bytes >= lo && (hi == 0 || bytes < hi))
                {
                    name = s.m_name;
                    return s;
                }
            }
            name = m_file.front().m_name;
            return m_file.front(); // outside every declared range: the first one still runs
        }
        const std::string algo = m_opt.algo == "auto" ? Auto(bytes) : m_opt.algo;
        name = algo;
        auto it = m_generated.find(algo);
        if (it == m_generated.end())
        {
            try
            {
                it = m_generated.emplace(algo, GenerateSchedule(m_kind, algo, m_ranks, m_gen))
                         .first;
            }
            catch (const fabricsim::InputError& e)
            {
                throw fabricsim::InputError(kCli,
                                            "--algo",
                                            "an algorithm that runs " + ToString(m_kind) + " on "
                                                + std::to_string(m_ranks)
                                                + " ranks with these options",
                                            "\"" + algo + "\" (" + e.what() + ")");
            }
        }
        return it->second;
    }

    /// nccl-tests' #wrong: problems the validator finds (0 = provably correct); -1 = N/A.
    int64_t Wrong(const Schedule& s)
    {
        if (s.m_collective == CollectiveKind::kCustom)
        {
            return -1;
        }
        auto it = m_wrong.find(&s);
        if (it == m_wrong.end())
        {
            it = m_wrong.emplace(&s, int64_t(ValidateSchedule(s).m_problems.size())).first;
        }
        return it->second;
    }

  private:
    /// What "auto" takes for \p bytes: the fastest candidate on an idle copy of the fabric.
    std::string Auto(uint64_t bytes)
    {
        auto it = m_tuned.find(bytes);
        if (it == m_tuned.end())
        {
            if (!m_probe)
            {
                m_probe = m_auto.m_probe();
            }
            std::vector<uint32_t> ranks(m_ranks);
            std::iota(ranks.begin(), ranks.end(), 0u);
            it = m_tuned
                     .emplace(bytes,
                              FastestAlgorithm(
                                  m_kind, bytes, ranks, m_gen, m_auto, m_config, m_probe.get()))
                     .first;
        }
        return it->second;
    }

    void LoadFile()
    {
        MscclDocument doc = LoadScheduleFile(m_opt.scheduleFile);
        std::string found;
        for (Schedule& s : doc.m_schedules)
        {
            found += (found.empty() ? "" : ", ") + ToString(s.m_collective) + " on "
                     + std::to_string(s.m_ranks);
            if (s.m_collective == m_kind && s.m_ranks == m_ranks)
            {
                if (!m_opt.protocol.empty())
                {
                    s.m_protocol = *ParseProtocol(m_opt.protocol);
                }
                m_file.push_back(s);
            }
        }
        if (m_file.empty())
        {
            throw fabricsim::InputError(m_opt.scheduleFile,
                                        "algo",
                                        "a " + ToString(m_kind) + " schedule for "
                                            + std::to_string(m_ranks)
                                            + " ranks (--coll, the scenario's hosts or --ranks)",
                                        found);
        }
    }

    const CollectiveCommandOptions& m_opt;
    CollectiveKind m_kind;
    int m_ranks;
    GeneratorOptions m_gen;
    CollectiveOptions m_auto;
    ExecutorConfig m_config;
    std::unique_ptr<Transport> m_probe;
    std::map<uint64_t, std::string> m_tuned;
    std::vector<Schedule> m_file;
    std::map<std::string, Schedule> m_generated;
    std::map<const Schedule*, int64_t> m_wrong;
};

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
            o.algo = v;
        }
        else if (TakeOption(a, i, "--schedule", v))
        {
            o.scheduleFile = v;
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
            o.factor = uint64_t(ToInt(v, "-f", 2));
        }
        else if (TakeOption(a, i, "-n", v) || TakeOption(a, i, "--iters", v))
        {
            o.iters = ToInt(v, "-n", 1);
        }
        else if (TakeOption(a, i, "-w", v) || TakeOption(a, i, "--warmup_iters", v))
        {
            o.warmup = ToInt(v, "-w", 0);
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
            o.channels = ToInt(v, "--channels", 1);
        }
        else if (TakeOption(a, i, "--chunks", v))
        {
            o.chunks = ToInt(v, "--chunks", 1);
        }
        else if (TakeOption(a, i, "--proto", v))
        {
            if (!ParseProtocol(v))
            {
                throw fabricsim::InputError(
                    kCli, "--proto", "Simple, LL or LL128", "\"" + v + "\"");
            }
            o.protocol = v;
        }
        else if (TakeOption(a, i, "--root", v))
        {
            o.root = uint32_t(ToInt(v, "--root", 0));
        }
        else if (TakeOption(a, i, "--ranks", v))
        {
            o.ranks = ToInt(v, "--ranks", 1);
        }
        else if (TakeOption(a, i, "--local-size", v))
        {
            o.localSize = ToInt(v, "--local-size", 1);
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
    if (o.algo.empty() == o.scheduleFile.empty())
    {
        throw fabricsim::InputError(kCli,
                                    "--algo",
                                    "exactly one of --algo NAME and --schedule FILE",
                                    o.algo.empty() ? "neither" : "both");
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
    FabricScenario sc = ParseScenarioFabric(doc, opt.scenario);
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
        opt, kind, n, localSize, AutoProbe(sc), ns3::ExecutorConfigFromAttributes());
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
        << (opt.scheduleFile.empty() ? "algorithm " + opt.algo : "schedule " + opt.scheduleFile)
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
    for (uint64_t requested : sizes)
    {
        const uint64_t bytes = AlignedSize(kind, requested, n);
        if (bytes == 0)
        {
            out << "# size " << requested << " holds fewer than " << n
                << " elements per rank; skipped\n";
            continue;
        }
        std::string name;
        const Schedule& s = source.For(bytes, name);
        const auto t0 = std::chrono::steady_clock::now();
        CollectiveMeasurement m
            = MeasureCollective(sc,
                                ParseBackendKind(opt.backend, kCli, "--backend"),
                                s,
                                bytes,
                                opt.warmup,
                                opt.iters,
                                opt.ns3Args);
        const double wall
            = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        NcclRow row = MakeNcclRow(kind, n, bytes, m.m_timeUs, source.Wrong(s), int(opt.root));
        row.m_complete = m.m_complete;
        rows.push_back(row);
        nlohmann::json jr = NcclRowsJson({row})[0];
        jr["algorithm"] = name;
        jr["protocol"] = ToString(m.m_last.m_protocol);
        jr["iterations_us"] = m.m_iterationUs;
        jr["tiles"] = m.m_last.m_tiles;
        jr["slice_bytes"] = m.m_last.m_sliceBytes;
        jr["messages_per_iteration"] = m.m_last.m_messages;
        jr["transfer_bytes_per_iteration"] = m.m_last.m_transferBytes;
        if (!m.m_fabric.is_null())
        {
            jr["fabric"] = m.m_fabric;
        }
        if (m.m_complete)
        {
            out << NcclTableLine(row);
        }
        else if (m.m_reachedStopTime)
        {
            // The user's cap, not a fault: one line (collective.json keeps the whole report).
            allComplete = false;
            jr["stuck"] = m.m_stuckReport;
            jr["stopped_at_stop_ns"] = true;
            out << "# size " << bytes << ": stopped at the scenario's stop_ns (" << sc.stopNs
                << " ns) before it completed\n";
        }
        else
        {
            allComplete = false;
            stuck = true;
            jr["stuck"] = m.m_stuckReport;
            out << "# size " << bytes << ": collective did not complete (see stderr)\n";
            err << "fabricsim: " << ToString(kind) << " of " << bytes
                << " bytes: " << m.m_stuckReport;
        }
        out << std::flush; // a killed sweep keeps the rows it measured
        jrows.push_back(jr);
        if (progress)
        {
            std::fprintf(stderr,
                         "[fabricsim] %llu bytes simulated in %.2f s\n",
                         (unsigned long long)bytes,
                         wall);
        }
    }
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
    if (opt.scheduleFile.empty())
    {
        summary["algorithm"] = opt.algo;
        summary["channels"] = opt.channels;
        summary["chunks_per_rank"] = opt.chunks;
    }
    else
    {
        summary["schedule"] = opt.scheduleFile;
    }
    summary["local_size"] = localSize;
    summary["type"] = "float";
    summary["warmup_iters"] = opt.warmup;
    summary["iters"] = opt.iters;
    const ExecutorConfig cfg = ns3::ExecutorConfigFromAttributes();
    summary["executor"] = {{"max_chunk_bytes", cfg.m_maxChunkBytes},
                           {"slice_bytes", cfg.m_sliceBytes},
                           {"slots", cfg.m_slots},
                           {"step_latency_ns", double(cfg.m_stepLatencyPs) / 1000},
                           {"launch_latency_ns", double(cfg.m_launchLatencyPs) / 1000},
                           {"memory_bandwidth_gbps", cfg.m_memoryBytesPerSecond / 1e9}};
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
            ranks = ToInt(v, "--ranks", 1);
        }
        else if (!a[i].empty() && a[i][0] != '-' && file.empty())
        {
            file = a[i];
        }
        else
        {
            throw fabricsim::InputError(
                kCli, a[i], "a schedule file, --coll C or --ranks N", "\"" + a[i] + "\"");
        }
    }
    if (file.empty())
    {
        throw fabricsim::InputError(
            kCli,
            "FILE",
            "a schedule file (fabricsim validate FILE [--coll C] [--ranks N])",
            "nothing");
    }
    return RunValidateCommand(file, coll, ranks, out, err);
}

} // namespace fabricsim
