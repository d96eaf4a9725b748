#include "replay-runner.h"

#include "chakra-import.h"
#include "collective-measure.h"
#include "compressed-file.h"
#include "fabric-backend.h"
#include "fabric-setup.h"
#include "file-reader.h"
#include "hardware-spec.h"
#include "input-error.h"
#include "kineto-import.h"
#include "program-trace-import.h"
#include "schedule-collectives.h"

#include "ns3/collective-memo.h"

#include <memory>
#include <sstream>

namespace fabricsim
{

namespace
{

/// Errors in the options name the command line, where they come from.
const char* kCli = "<command line>";

ImportedTrace
Import(const ReplayRunOptions& opt)
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

/**
 * One rank's trace of a multi-rank job (Chakra's chakra.0.et) names no process-group size: its
 * collectives would replay on a group of one and take no time, reported as "change 0.0". Unless
 * --ranks says how many ranks the job had, that is an input error.
 */
void
CheckGroupSizeKnown(const ImportedTrace& trace, const ReplayRunOptions& opt)
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

/// replay.json and communication.csv of the three replays in \p r.
void
Report(const ReplayRunOptions& opt, const ReplayInputs& in, ReplayResult& r)
{
    int64_t& recordedPs = r.recordedPs;
    for (const RankTrace& t : in.trace.ranks)
    {
        recordedPs = std::max(recordedPs, t.recordedSpanPs);
    }
    uint32_t& steps = r.steps;
    for (const RankTrace& t : in.trace.ranks)
    {
        steps = std::max(steps, t.steps);
    }
    nlohmann::json& rep = r.report;
    rep["scenario"] = in.sc.name;
    rep["backend"] = opt.backend;
    rep["traces"] = opt.traces;
    rep["trace"] = SummarizeTrace(in.trace);
    rep["steps"] = steps;
    rep["recorded_us"] = recordedPs < 0 ? nlohmann::json() : nlohmann::json(Us(recordedPs));
    rep["baseline_us"] = Us(r.recorded.spanPs);
    rep["compute_scaled_us"] = Us(r.computeScaled.spanPs);
    rep["replayed_us"] = Us(r.replayed.spanPs);
    rep["replayed_step_us"] = Us(r.replayed.spanPs) / steps;
    rep["compute_scale"] = opt.computeScale;
    if (!opt.hwTo.empty())
    {
        rep["hw_from"] = in.hwFrom;
        rep["hw_to"] = opt.hwTo;
        rep["class_scale"] = {{"gemm", in.scaled.classScale.at(OpClass::kGemm)},
                              {"memory", in.scaled.classScale.at(OpClass::kMemory)}};
    }
    rep["change_us"] = {{"total", Us(r.replayed.spanPs - r.recorded.spanPs)},
                        {"compute", Us(r.computeScaled.spanPs - r.recorded.spanPs)},
                        {"communication", Us(r.replayed.spanPs - r.computeScaled.spanPs)}};
    nlohmann::json comms = nlohmann::json::array();
    std::map<std::string, const ReplayedComm*> inB;
    for (const ReplayedComm& x : r.computeScaled.comms)
    {
        inB[x.key] = &x;
    }
    std::ostringstream csv;
    csv << "key,name,collective,bytes,members,simulated,recorded_us,replayed_us,exposed_before_us,"
           "exposed_after_us,exposed_change_us\n";
    for (const ReplayedComm& x : r.replayed.comms)
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
    rep["complete"] = r.replayed.complete && r.recorded.complete && r.computeScaled.complete;
    rep["stuck"] = r.replayed.stuck;
    r.communicationCsv = csv.str();
}

} // namespace

ReplayInputs
ReadReplayInputs(const ReplayRunOptions& opt)
{
    // Everything that can be wrong with the input is found before anything is written.
    ReplayInputs in;
    in.document = LoadScenarioJson(opt.scenario, opt.sets);
    in.sc = ParseFabricScenario(in.document, opt.scenario);
    const FabricScenario& sc = in.sc;
    ConfigureSimulator(sc, opt.ns3Args);
    in.trace = Import(opt);
    const ImportedTrace& trace = in.trace;
    CheckGroupSizeKnown(trace, opt);
    if (trace.worldSize > sc.topology.NumHosts())
    {
        throw fabricsim::InputError(opt.scenario,
                                    "topology",
                                    "at least the trace's " + std::to_string(trace.worldSize)
                                        + " ranks as hosts",
                                    std::to_string(sc.topology.NumHosts()) + " hosts");
    }
    ReplayOptions& scaled = in.scaled;
    scaled.computeScale = opt.computeScale;
    scaled.algorithm = opt.algorithm;
    std::string& from = in.hwFrom;
    from = opt.hwFrom;
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
    return in;
}

ReplayResult
ExecuteReplay(const ReplayRunOptions& opt, const ReplayInputs& in)
{
    const FabricScenario& sc = in.sc;
    const ImportedTrace& trace = in.trace;
    const ReplayOptions& scaled = in.scaled;
    // A: the recorded timeline (recorded communication, recorded compute): checks the
    // dependencies the importer inferred. B: compute scaled. C: communication re-simulated.
    ReplayOptions recorded;
    recorded.simulateComm = false;
    ReplayOptions scaledRecorded = scaled;
    scaledRecorded.simulateComm = false;
    ReplayResult r;
    r.recorded = Fabric(sc, "analytical", opt.ns3Args).Replay(trace, recorded);
    r.computeScaled = Fabric(sc, "analytical", opt.ns3Args).Replay(trace, scaledRecorded);
    Fabric simulated(sc, opt.backend, opt.ns3Args, opt.memo || opt.memoVerify > 0, opt.memoVerify);
    r.replayed = simulated.Replay(trace, scaled);
    r.memo = simulated.MemoFigures();

    Report(opt, in, r);
    return r;
}

} // namespace fabricsim
