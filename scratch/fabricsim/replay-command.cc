#include "replay-command.h"

#include "chakra-import.h"
#include "cli-options.h"
#include "compressed-file.h"
#include "file-reader.h"
#include "hardware-spec.h"
#include "input-error.h"
#include "kineto-import.h"
#include "output-writer.h"
#include "program-trace-import.h"
#include "schedule-collectives.h"
#include "trace-replay.h"

#include "ns3/collective-measure.h"
#include "ns3/collective-memo.h"
#include "ns3/fabric-backend.h"
#include "ns3/fabric-setup.h"
#include "ns3/run-provenance.h"

#include <cmath>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>

namespace fabricsim
{

namespace
{

const char* kCli = kCommandLineSource;

double
PositiveNumber(const std::string& v, const std::string& opt)
{
    size_t used = 0;
    double x = 0;
    try
    {
        x = std::stod(v, &used);
    }
    catch (const std::exception&)
    {
        used = 0;
    }
    if (used != v.size() || v.empty() || !(x > 0) || !std::isfinite(x) || x > 1e6)
    {
        throw fabricsim::InputError(kCli, opt, "a positive number", "\"" + v + "\"");
    }
    return x;
}

ImportedTrace
Import(const ReplayCommandOptions& opt)
{
    std::string format = opt.format;
    if (format == "auto")
    {
        // The first MiB: a one-line Chrome trace is not read twice to find out.
        const std::string head = ReadFileHead(opt.traces.front(), "trace file", 1 << 20);
        format = LooksLikeProgramTrace(head)                                         ? "program"
                 : IsGzip(head.substr(0, 64)) || LooksLikeKineto(head.substr(0, 64)) ? "kineto"
                                                                                     : "chakra";
    }
    if (format == "program")
    {
        if (opt.traces.size() != 1)
        {
            throw fabricsim::InputError(kCli,
                                        "TRACE",
                                        "one program trace (it holds every rank)",
                                        std::to_string(opt.traces.size()) + " files");
        }
        return ImportProgramTrace(opt.traces.front());
    }
    if (format == "kineto")
    {
        KinetoOptions ko;
        ko.step = opt.step;
        ko.worldSize = opt.worldSize;
        return ImportKineto(opt.traces, ko);
    }
    ChakraImportOptions co;
    co.cpuOps = opt.chakraCpuOps;
    co.worldSize = opt.worldSize;
    return ImportChakra(opt.traces, co);
}

/// A Collective API over the chosen backend on a fresh instance of the scenario's fabric.
class Fabric
{
  public:
    /// With \p memo (the packet backend only), collectives go through a collective memo that
    /// checks every \p verify-th hit (0: none) by simulating it.
    Fabric(const FabricScenario& sc,
           const std::string& backend,
           const std::vector<std::string>& ns3Args,
           bool memo = false,
           uint32_t verify = 0)
        : m_backend(sc, ParseBackendKind(backend, kCli, "--backend"), ns3Args)
    {
        CollectiveOptions co;
        co.m_localSize = ServerLocalSize(sc.topology, int(sc.topology.NumHosts()));
        co.m_probe = AutoProbe(sc);
        m_backend.Collectives().SetCollectiveOptions(co);
        if (memo)
        {
            m_memo = std::make_unique<CollectiveMemo>(m_backend.Collectives().GetCollectiveApi(),
                                                      *m_backend.GetTransport().GetMemoFabric());
            m_memo->SetVerify(verify);
        }
    }

    ReplayRun Replay(const ImportedTrace& trace, const ReplayOptions& opt)
    {
        CollectiveApi& api = m_memo ? static_cast<CollectiveApi&>(*m_memo)
                                    : m_backend.Collectives().GetCollectiveApi();
        return ReplayTrace(trace, opt, api, [this]() { m_backend.Collectives().RunEventLoop(); });
    }

    /// The memo's figures (null without one).
    nlohmann::json MemoFigures() const
    {
        return m_memo ? m_memo->Stats().ToJson() : nlohmann::json();
    }

  private:
    FabricBackend m_backend;
    std::unique_ptr<CollectiveMemo> m_memo; // after the backend: goes before it
};

/// The preset whose name the recorded device names ("NVIDIA A100-PG509-200" -> A100).
std::string
PresetFor(const std::string& device)
{
    std::string best;
    for (const std::string& n : HardwareSpec::PresetNames())
    {
        if (device.find(n) != std::string::npos && n.size() > best.size())
        {
            best = n;
        }
    }
    return best;
}

double
Us(int64_t ps)
{
    return double(ps) * 1e-6;
}

} // namespace

ReplayCommandOptions
ParseReplayArgs(const std::vector<std::string>& a)
{
    ReplayCommandOptions o;
    for (size_t i = 1; i < a.size(); ++i)
    {
        std::string v;
        if (TakeOption(a, i, "--scenario", v))
        {
            o.scenario = v;
        }
        else if (TakeOption(a, i, "--format", v))
        {
            if (v != "auto" && v != "kineto" && v != "chakra" && v != "program")
            {
                throw fabricsim::InputError(
                    kCli, "--format", "auto, kineto, chakra or program", "\"" + v + "\"");
            }
            o.format = v;
        }
        else if (TakeOption(a, i, "--step", v))
        {
            size_t used = 0;
            long long s = -1;
            try
            {
                s = std::stoll(v, &used);
            }
            catch (const std::exception&)
            {
                used = 0;
            }
            if (used != v.size() || s < 0)
            {
                throw fabricsim::InputError(
                    kCli, "--step", "a profiler step number >= 0", "\"" + v + "\"");
            }
            o.step = s;
        }
        else if (TakeOption(a, i, "--backend", v))
        {
            ParseBackendKind(v, kCli, "--backend");
            o.backend = v;
        }
        else if (TakeOption(a, i, "--algo", v))
        {
            o.algorithm = v;
        }
        else if (TakeOption(a, i, "--compute-scale", v))
        {
            o.computeScale = PositiveNumber(v, "--compute-scale");
        }
        else if (TakeOption(a, i, "--hw-from", v))
        {
            o.hwFrom = v;
        }
        else if (TakeOption(a, i, "--hw-to", v))
        {
            o.hwTo = v;
        }
        else if (TakeOption(a, i, "--ranks", v))
        {
            o.worldSize = uint32_t(PositiveNumber(v, "--ranks"));
            if (double(o.worldSize) != std::stod(v))
            {
                throw fabricsim::InputError(
                    kCli, "--ranks", "a whole number of ranks", "\"" + v + "\"");
            }
        }
        else if (a[i] == "--chakra-cpu-ops")
        {
            o.chakraCpuOps = true;
        }
        else if (a[i] == "--export-chakra")
        {
            o.exportChakra = true;
        }
        else if (TakeOption(a, i, "--memo", v))
        {
            ParseMemoOption(v, o.memo, o.memoVerify);
        }
        else if (TakeOption(a, i, "--out", v))
        {
            o.outDir = v;
        }
        else if (TakeOption(a, i, "--set", v))
        {
            o.sets.push_back(v);
        }
        else if (a[i].rfind("--ns3::", 0) == 0)
        {
            o.ns3Args.push_back(a[i]);
        }
        else if (!a[i].empty() && a[i][0] != '-')
        {
            o.traces.push_back(a[i]);
        }
        else
        {
            throw fabricsim::InputError(
                kCli, a[i], "a trace file or an option of 'fabricsim replay'", "\"" + a[i] + "\"");
        }
    }
    if (o.traces.empty())
    {
        throw fabricsim::InputError(
            kCli,
            "TRACE",
            "one or more trace files (fabricsim replay TRACE... --scenario S.json)",
            "nothing");
    }
    if ((o.memo || o.memoVerify > 0) && o.backend != "packet")
    {
        throw fabricsim::InputError(kCli,
                                    "--memo",
                                    "--backend packet (the memo replays packet-level collectives)",
                                    "--backend " + o.backend);
    }
    if (o.scenario.empty())
    {
        throw fabricsim::InputError(
            kCli, "--scenario", "the scenario whose fabric replays the trace", "nothing");
    }
    return o;
}

namespace
{

/**
 * One rank's trace of a multi-rank job (Chakra's chakra.0.et) names no process-group size: its
 * collectives would replay on a group of one and take no time, reported as "change 0.0". Unless
 * --ranks says how many ranks the job had, that is an input error.
 */
void
CheckGroupSizeKnown(const ImportedTrace& trace, const ReplayCommandOptions& opt)
{
    if (opt.worldSize != 0 || trace.worldSize != 1)
    {
        return;
    }
    size_t assumed = 0;
    for (const RankTrace& r : trace.ranks)
    {
        for (const TraceOp& op : r.ops)
        {
            assumed += op.kind == TraceOpKind::kCollective && op.groupAssumed;
        }
    }
    if (assumed > 0)
    {
        throw fabricsim::InputError(
            opt.traces.front(),
            "--ranks",
            "the number of ranks of the traced job (the trace names no process-group size; "
            "replayed on one rank its collectives would take no time)",
            std::to_string(assumed) + " collectives in a 1-rank trace and no --ranks");
    }
}

} // namespace

int
RunReplayCommand(const ReplayCommandOptions& opt, std::ostream& out, std::ostream& err)
{
    // Everything that can be wrong with the input is found before anything is written.
    nlohmann::json doc = LoadScenarioJson(opt.scenario, opt.sets);
    FabricScenario sc = ParseFabricScenario(doc, opt.scenario);
    ConfigureSimulator(sc, opt.ns3Args);
    ImportedTrace trace = Import(opt);
    CheckGroupSizeKnown(trace, opt);
    if (trace.worldSize > sc.topology.NumHosts())
    {
        throw fabricsim::InputError(opt.scenario,
                                    "topology",
                                    "at least the trace's " + std::to_string(trace.worldSize)
                                        + " ranks as hosts",
                                    std::to_string(sc.topology.NumHosts()) + " hosts");
    }
    ReplayOptions scaled;
    scaled.computeScale = opt.computeScale;
    scaled.algorithm = opt.algorithm;
    std::string from = opt.hwFrom;
    if (!opt.hwTo.empty())
    {
        if (from.empty())
        {
            from = PresetFor(trace.ranks.front().device);
            if (from.empty())
            {
                throw fabricsim::InputError(kCli,
                                            "--hw-from",
                                            "the accelerator the trace ran on (its device '"
                                                + trace.ranks.front().device
                                                + "' matches no preset)",
                                            "nothing");
            }
        }
        const HardwareSpec a = HardwareSpec::Preset(from);
        const HardwareSpec b = HardwareSpec::Preset(opt.hwTo);
        // Roofline ratios: math-bound kernels scale with peak 16-bit FLOPs, the rest with HBM
        // bandwidth (the trace's GPU ops are mostly one or the other).
        scaled.classScale[OpClass::kGemm] = a.PeakFlops(DType::Bf16) / b.PeakFlops(DType::Bf16);
        scaled.classScale[OpClass::kMemory] = a.hbmBwBytesPerSec / b.hbmBwBytesPerSec;
    }

    OutputDir dir(opt.outDir);
    // A: the recorded timeline (recorded communication, recorded compute): checks the
    // dependencies the importer inferred. B: compute scaled. C: communication re-simulated.
    ReplayOptions recorded;
    recorded.simulateComm = false;
    ReplayOptions scaledRecorded = scaled;
    scaledRecorded.simulateComm = false;
    ReplayRun a = Fabric(sc, "analytical", opt.ns3Args).Replay(trace, recorded);
    ReplayRun b = Fabric(sc, "analytical", opt.ns3Args).Replay(trace, scaledRecorded);
    Fabric simulated(sc, opt.backend, opt.ns3Args, opt.memo || opt.memoVerify > 0, opt.memoVerify);
    ReplayRun c = simulated.Replay(trace, scaled);
    const nlohmann::json memo = simulated.MemoFigures();

    int64_t recordedPs = -1;
    for (const RankTrace& r : trace.ranks)
    {
        recordedPs = std::max(recordedPs, r.recordedSpanPs);
    }
    uint32_t steps = 1;
    for (const RankTrace& r : trace.ranks)
    {
        steps = std::max(steps, r.steps);
    }
    nlohmann::json rep;
    rep["scenario"] = sc.name;
    rep["backend"] = opt.backend;
    rep["traces"] = opt.traces;
    rep["trace"] = SummarizeTrace(trace);
    rep["steps"] = steps;
    rep["recorded_us"] = recordedPs < 0 ? nlohmann::json() : nlohmann::json(Us(recordedPs));
    rep["baseline_us"] = Us(a.spanPs);
    rep["compute_scaled_us"] = Us(b.spanPs);
    rep["replayed_us"] = Us(c.spanPs);
    rep["replayed_step_us"] = Us(c.spanPs) / steps;
    rep["compute_scale"] = opt.computeScale;
    if (!opt.hwTo.empty())
    {
        rep["hw_from"] = from;
        rep["hw_to"] = opt.hwTo;
        rep["class_scale"] = {{"gemm", scaled.classScale[OpClass::kGemm]},
                              {"memory", scaled.classScale[OpClass::kMemory]}};
    }
    rep["change_us"] = {{"total", Us(c.spanPs - a.spanPs)},
                        {"compute", Us(b.spanPs - a.spanPs)},
                        {"communication", Us(c.spanPs - b.spanPs)}};
    nlohmann::json comms = nlohmann::json::array();
    std::map<std::string, const ReplayedComm*> inB;
    for (const ReplayedComm& x : b.comms)
    {
        inB[x.key] = &x;
    }
    std::ostringstream csv;
    csv << "key,name,collective,bytes,members,simulated,recorded_us,replayed_us,exposed_before_us,"
           "exposed_after_us,exposed_change_us\n";
    for (const ReplayedComm& x : c.comms)
    {
        const double before = inB.count(x.key) ? inB[x.key]->exposedUs : 0;
        comms.push_back({{"key", x.key},
                         {"name", x.name},
                         {"collective", x.collective},
                         {"bytes", x.bytes},
                         {"members", x.members},
                         {"simulated", x.simulated},
                         {"recorded_us", x.recordedUs},
                         {"replayed_us", x.replayedUs},
                         {"exposed_recorded_us", before},
                         {"exposed_replayed_us", x.exposedUs},
                         {"exposed_change_us", x.exposedUs - before}});
        csv << x.key << "," << '"' << x.name << '"' << "," << x.collective << "," << x.bytes << ","
            << x.members << "," << (x.simulated ? 1 : 0) << "," << x.recordedUs << ","
            << x.replayedUs << "," << before << "," << x.exposedUs << "," << x.exposedUs - before
            << "\n";
    }
    rep["communication"] = comms;
    rep["complete"] = c.complete && a.complete && b.complete;
    rep["stuck"] = c.stuck;
    dir.Write("replay.json",
              rep.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    dir.Write("communication.csv", csv.str());
    if (opt.exportChakra)
    {
        for (uint32_t r = 0; r < trace.ranks.size(); ++r)
        {
            dir.Write("trace." + std::to_string(r) + ".et",
                      SerializeChakra(ExportChakra(trace, r)));
        }
    }

    out << std::fixed << std::setprecision(1);
    out << "# fabricsim replay: " << trace.format << " trace, " << trace.worldSize << " ranks, "
        << steps << " step(s), on " << rep["scenario"].get<std::string>() << " (" << opt.backend
        << ")\n";
    for (const std::string& n : trace.notes)
    {
        out << "# note: " << n << "\n";
    }
    out << "# recorded      "
        << (recordedPs < 0 ? std::string("unknown") : std::to_string(int64_t(Us(recordedPs))))
        << " us\n"
        << "# baseline      " << Us(a.spanPs)
        << " us (recorded compute and communication, replayed dependencies)\n"
        << "# compute       " << Us(b.spanPs) << " us (compute scaled, communication as recorded)\n"
        << "# replayed      " << Us(c.spanPs) << " us (" << Us(c.spanPs) / steps
        << " us per step)\n"
        << "# change        " << Us(c.spanPs - a.spanPs) << " us = compute "
        << Us(b.spanPs - a.spanPs) << " + communication " << Us(c.spanPs - b.spanPs) << "\n";
    out << "#\n#  collective          bytes  ranks  recorded_us  replayed_us  exposed_change_us\n";
    for (const nlohmann::json& x : comms)
    {
        out << "  " << std::setw(14) << std::left
            << x["collective"].get<std::string>().substr(0, 14) << std::right << std::setw(14)
            << x["bytes"].get<uint64_t>() << std::setw(7) << x["members"].get<uint32_t>()
            << std::setw(13) << x["recorded_us"].get<double>() << std::setw(13)
            << x["replayed_us"].get<double>() << std::setw(19)
            << x["exposed_change_us"].get<double>()
            << (x["simulated"].get<bool>() ? "" : "  (as recorded)") << "\n";
    }
    if (!c.complete)
    {
        err << "fabricsim: replay did not complete:\n";
        for (const std::string& s : c.stuck)
        {
            err << "  " << s << "\n";
        }
    }
    if (!memo.is_null())
    {
        // Apart from replay.json: the replay's results are byte-identical with the memo off.
        dir.Write("memo.json", memo.dump(2) + "\n");
        out << "# memo          " << memo["hits"].get<uint64_t>() << " of "
            << memo["lookups"].get<uint64_t>() << " collectives replayed (memo.json)\n";
    }
    dir.Write("provenance.json", ProvenanceText(doc, opt.ns3Args));
    dir.Commit();
    if (MemoDisagreed(memo, err))
    {
        return 1;
    }
    return rep["complete"].get<bool>() ? 0 : 1;
}

} // namespace fabricsim
