#include "calibrate-predictor.h"

#include "calibration-parameters.h"
#include "collective-measure.h"
#include "ep-drawn-rows.h"
#include "ep-exchange.h"
#include "executor-attributes.h"
#include "fabric-backend.h"
#include "fabric-setup.h"
#include "generators.h"
#include "hardware-spec.h"
#include "input-error.h"
#include "measured-run-config.h"
#include "nccl-tuner.h"
#include "schedule-collectives.h"
#include "unit-conversions.h"

#include "ns3/nccl-tuner-attributes.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <tuple>

namespace fabricsim
{

namespace
{

/// The hardware preset of the GPU a DeepEP table names (nullopt: none, or no device given).
std::optional<HardwareSpec>
GpuOf(const std::string& device)
{
    const std::optional<std::string> preset = HardwarePresetForDevice(device);
    if (!preset)
    {
        return std::nullopt;
    }
    return HardwareSpec::Preset(*preset);
}

} // namespace

Predictor::Predictor(const PredictorOptions& opt)
    : m_opt(opt)
{
}

std::vector<double>
Predictor::Collectives(const nlohmann::json& doc,
                       const std::vector<MeasuredPoint>& points,
                       std::vector<std::string>* choices)
{
    FabricScenario base = ParseFabricScenario(doc, m_opt.scenario);
    ConfigureSimulator(base, m_opt.ns3Args);
    const TunerConfig tuner = ns3::TunerConfigFromAttributes();
    const double memoryBps = ns3::ExecutorConfigFromAttributes().m_memoryBytesPerSecond;
    const double stepUs = CurrentParameterValue("step_latency", doc);
    const double launchUs = CurrentParameterValue("launch_overhead", doc);
    // One scenario per candidate: the fitted Simple costs scaled to the protocol.
    auto variant = [&](Protocol proto, double launchScale, double rateScale)
    {
        nlohmann::json d = doc;
        d["attributes"]["ns3::CollectiveExecutor::Protocol"] = ToString(proto);
        d["attributes"]["ns3::CollectiveExecutor::StepLatency"]
            = std::to_string(stepUs * tuner.StepScale(proto) * 1e6) + "ps";
        d["attributes"]["ns3::CollectiveExecutor::LaunchLatency"]
            = std::to_string(launchUs * launchScale * 1e6) + "ps";
        // Without explicit link rates there is nothing to scale: LL then keeps only the
        // executor's half payload.
        if (rateScale != 1.0 && HasRatedLinks(d))
        {
            for (const std::string& set :
                 ParameterAssignments({{"link_efficiency", rateScale}}, d, m_opt.scenario))
            {
                ApplySet(d, set, m_opt.scenario);
            }
        }
        return ParseFabricScenario(d, m_opt.scenario);
    };
    // LL's cap is on its bus bandwidth: compared with the links as fitted.
    const double linkBps = SlowestLinkBytesPerSecond(doc, m_opt.scenario);
    // One scenario per (protocol, launch scale, LL all-reduce rate or not), built on first
    // use: the launch scale depends on the collective and GPU count.
    std::map<std::tuple<Protocol, double, bool>, FabricScenario> variants;
    auto candidate = [&](Protocol proto, CollectiveKind kind, int n) -> const FabricScenario&
    {
        const double l = tuner.LaunchScale(proto, kind, n);
        const bool allReduce = kind == CollectiveKind::kAllReduce;
        auto key = std::make_tuple(proto, l, allReduce);
        auto it = variants.find(key);
        if (it == variants.end())
        {
            it = variants.emplace(key, variant(proto, l, tuner.RateScale(proto, kind, linkBps)))
                     .first;
        }
        return it->second;
    };
    // NVLS runs the Simple protocol only, with its own fixed cost.
    const bool anySimple
        = std::find(tuner.protocols.begin(), tuner.protocols.end(), Protocol::kSimple)
          != tuner.protocols.end();
    std::map<int, FabricScenario> nvlsVariants;
    std::vector<double> out;
    for (const MeasuredPoint& p : points)
    {
        const int n = int(p.ranks);
        const uint64_t aligned
            = std::max<uint64_t>(AlignedSize(p.kind, p.bytes, n), uint64_t(4) * n);
        double best = -1;
        std::string choice;
        for (Protocol proto : tuner.protocols)
        {
            const FabricScenario& sc = candidate(proto, p.kind, n);
            std::string algo;
            const Schedule& s = ScheduleFor(sc, p.kind, aligned, n, algo);
            CollectiveMeasurement m
                = MeasureCollective(sc, m_opt.backend, s, aligned, 0, 1, m_opt.ns3Args);
            if (!m.m_complete)
            {
                throw std::runtime_error("simulated " + ToString(p.kind) + " of "
                                         + std::to_string(aligned)
                                         + " bytes did not complete: " + m.m_stuckReport);
            }
            m_runs++;
            if (best < 0 || m.m_timeUs < best)
            {
                best = m.m_timeUs;
                choice = algo + "/" + ToString(proto);
            }
        }
        // The own share's local copy runs on the SMs that drive the ring, after or before
        // it, whatever the protocol.
        best += tuner.OwnShareCopyUs(p.kind, aligned, n, memoryBps);
        if (tuner.inNetworkReduction && anySimple && p.kind == CollectiveKind::kAllReduce && n > 1)
        {
            auto nv = nvlsVariants.find(n);
            if (nv == nvlsVariants.end())
            {
                nv = nvlsVariants
                         .emplace(n,
                                  variant(Protocol::kSimple,
                                          tuner.NvlsLaunchScale(n),
                                          tuner.nvlsBandwidthScale))
                         .first;
            }
            // Same bytes over the same links as the in-switch algorithm: each GPU's link
            // carries S (1 + 1/n) per direction, spread over its n - 1 peers.
            const double t = AllToAllUs(
                nv->second, uint32_t(n), InSwitchAllReduceLinkBytes(aligned, n) / (n - 1), -1, 0);
            if (t < best)
            {
                best = t;
                choice = "nvls/Simple";
            }
        }
        // Whole elements per rank can round the size; time scales with it at these sizes.
        out.push_back(best);
        if (choices)
        {
            choices->push_back(choice);
        }
    }
    return out;
}

std::pair<double, double>
Predictor::Moe(const nlohmann::json& doc, const MoePoint& p)
{
    FabricScenario sc = ParseFabricScenario(doc, m_opt.scenario);
    // The EP group: node_num servers of 8 GPUs, ranks 0..n-1 of the scenario's hosts.
    const uint32_t n = 8 * p.nodes;
    if (sc.topology.NumHosts() < n)
    {
        throw fabricsim::InputError(p.source,
                                    "node_num",
                                    "at most the scenario's "
                                        + std::to_string(sc.topology.NumHosts()) + " hosts / 8",
                                    std::to_string(p.nodes));
    }
    if (p.experts % n != 0)
    {
        throw fabricsim::InputError(p.source,
                                    "num_experts",
                                    "a multiple of the " + std::to_string(n) + " GPUs",
                                    std::to_string(p.experts));
    }
    // The serving loop's model of the exchange (ep-exchange.h): low-latency mode sends one
    // fp8 copy per chosen expert, normal mode one per rank holding any of them (across
    // servers once per server, forwarded inside), in fp8 or bf16 as --deepep-dispatch-dtype
    // says (no column records it); combine in bf16. The kernels' own fixed cost and copying
    // (on the point's SMs) bound it as in a step.
    const EpBackend backend
        = p.mode == "ll" ? EpBackend::DeepEpLowLatency : EpBackend::DeepEpNormal;
    const EpTokenWire wire = EpWireOf(backend, p.hidden, 2);
    const std::vector<double> pi(p.experts, double(p.topk) / p.experts);
    std::vector<uint32_t> nodes(n);
    for (uint32_t r = 0; r < n; ++r)
    {
        nodes[r] = r / 8;
    }
    // DeepEP's internode test routes each token to min(servers, 4) servers: one expert group
    // per server, the token's experts in the best ones by their top expert's score.
    const ExpertGroups groups{p.nodes, std::min<uint32_t>(p.nodes, 4)};
    const double bf16 = wire.combineBytes;
    const double dispatchBytes
        = p.mode == "ll" || m_opt.deepepDispatchDtype == "fp8" ? wire.dispatchBytes : bf16;
    // Across servers the call waits for the most loaded NIC: under the routing DeepEP's tests
    // draw (test_internode.py group-limited, test_low_latency.py plain top-k with 10 slots a
    // rank masked; seeded) it carries about 7 % more than the mean at 128 tokens a rank, and
    // every NIC carries that here (the drawn rows themselves take minutes to simulate at EP 256:
    // their flows end one by one). Inside one server the expectation stays: the kernel costs
    // were fitted on it against tables timed under the same draws, so their imbalance is in
    // them. The draw scores every expert for every token, so it is bounded (kDrawnScores):
    // past that, fewer tokens are drawn and the busiest NIC's excess over the mean is carried
    // as a sum of independent tokens' (it falls as 1 / sqrt(tokens)).
    constexpr double kDrawnScores = 2e7;
    const uint32_t drawnTokens = uint32_t(
        std::clamp(std::floor(kDrawnScores / (double(n) * p.experts)), 1.0, double(p.tokens)));
    std::vector<TokenChoices> drawn;
    if (p.nodes > 1 && p.tokens > 0)
    {
        drawn = DrawDeepEpTestRouting(
            n,
            drawnTokens,
            p.experts,
            p.topk,
            p.mode == "ll" ? ExpertGroups{} : groups,
            p.mode == "ll" ? uint32_t(std::lround(10.0 * drawnTokens / p.tokens)) : 0,
            1);
    }
    auto phase = [&](bool dispatch, double bytesPerCopy)
    {
        std::vector<std::vector<double>> copies(n);
        double sent = 0;
        for (uint32_t i = 0; i < n; ++i)
        {
            copies[i] = EpRowCopies(pi,
                                    n,
                                    p.topk,
                                    wire.perRank,
                                    nodes,
                                    std::vector<double>(n, double(p.tokens)),
                                    i,
                                    dispatch,
                                    groups);
        }
        // Every rank sends alike under uniform routing: rank 0's copies bound the kernels.
        double inServer = 0;
        for (uint32_t j = 1; j < n; ++j)
        {
            sent += copies[0][j];
            inServer += nodes[j] == nodes[0] ? copies[0][j] : 0.0;
        }
        const EpKernelCost k = *EpKernelCostOf(backend, dispatch);
        // The low-latency kernels' SMs and warp groups, and the dispatch's copying, come from
        // the GPU the table names (its preset's SMs and scale-up bandwidth); a GPU without one
        // gets one warp group an SM, no per-SM token term and the fitted copying rate.
        EpKernelWork work;
        work.experts = p.experts;
        const std::optional<HardwareSpec> gpu = GpuOf(p.device);
        work.gpuSms = gpu ? gpu->sms : 0;
        work.scaleUpBytesPerSecond = gpu ? gpu->scaleUpBwBytesPerSec : 0.0;
        work.bytesPerCopy = bytesPerCopy;
        work.copiesPerToken = p.tokens > 0 ? (sent + copies[0][0]) / p.tokens : 0.0;
        const int64_t launch = EpKernelMinPs(k, work);
        work.copies = sent;
        work.scaleUpCopies = inServer;
        work.smBudget = p.sms;
        work.tokens = p.tokens;
        // The kernels' own work as fitted (the expected rows); the NICs as the busiest drawn.
        if (!drawn.empty())
        {
            // The expected rows of the drawn tokens: ours, scaled (uniform routing is linear
            // in the tokens).
            std::vector<std::vector<double>> expected = copies;
            for (std::vector<double>& row : expected)
            {
                for (double& c : row)
                {
                    c *= double(drawnTokens) / p.tokens;
                }
            }
            const double excess
                = EpCrossNodeLoadFactor(
                      EpDrawnRows(drawn, p.experts, wire.perRank, nodes, dispatch), expected, nodes)
                  - 1;
            const double f = 1 + excess * std::sqrt(double(drawnTokens) / p.tokens);
            for (uint32_t i = 0; i < n; ++i)
            {
                for (uint32_t j = 0; j < n; ++j)
                {
                    copies[i][j] *= nodes[i] != nodes[j] ? f : 1.0;
                }
            }
        }
        return AllToAllUs(
            sc, copies, bytesPerCopy, launch, EpKernelMinPs(k, work), EpKernelFillPs(k, work));
    };
    return {phase(true, dispatchBytes), phase(false, bf16)};
}

uint64_t
Predictor::Runs() const
{
    return m_runs;
}

const Schedule&
Predictor::ScheduleFor(
    const FabricScenario& sc, CollectiveKind kind, uint64_t bytes, int n, std::string& algo)
{
    CollectiveOptions co;
    co.m_localSize = ServerLocalSize(sc.topology, n);
    algo = AutoAlgorithm(kind, bytes, n, co);
    auto key = std::make_tuple(int(kind), algo, n, co.m_localSize);
    auto it = m_schedules.find(key);
    if (it == m_schedules.end())
    {
        GeneratorOptions g;
        g.localSize = co.m_localSize;
        it = m_schedules.emplace(key, GenerateSchedule(kind, algo, n, g)).first;
    }
    return it->second;
}

double
Predictor::AllToAllUs(const FabricScenario& sc,
                      uint32_t n,
                      double pairBytes,
                      int64_t kernelLaunchPs,
                      int64_t kernelMinPs)
{
    std::vector<std::vector<double>> copies(n, std::vector<double>(n, 1.0));
    return AllToAllUs(sc, copies, pairBytes, kernelLaunchPs, kernelMinPs);
}

double
Predictor::AllToAllUs(const FabricScenario& sc,
                      const std::vector<std::vector<double>>& copies,
                      double bytesPerCopy,
                      int64_t kernelLaunchPs,
                      int64_t kernelMinPs,
                      int64_t kernelFillPs)
{
    const uint32_t n = uint32_t(copies.size());
    FabricBackend backend(sc, BackendKind::kAnalytical, m_opt.ns3Args);
    backend.Collectives().SetCollectiveOptions(CollectiveOptions{});
    ScheduleCollectives& api = backend.Collectives().GetCollectiveApi();
    Transport& t = backend.GetTransport();
    CollectiveRequest req;
    req.kind = CollectiveKind::kAllToAll;
    for (uint32_t r = 0; r < n; ++r)
    {
        req.ranks.push_back(r);
    }
    req.alltoallBytes.assign(n, std::vector<uint64_t>(n, 0));
    for (uint32_t i = 0; i < n; ++i)
    {
        for (uint32_t j = 0; j < n; ++j)
        {
            const double b = copies[i][j] * bytesPerCopy;
            // Local experts: no transfer; a pair that carries anything carries a byte.
            req.alltoallBytes[i][j]
                = i == j || b <= 0
                      ? 0
                      : std::max<uint64_t>(1, units::RoundCount(b, "all-to-all bytes per pair"));
        }
    }
    req.kernelLaunchPs = kernelLaunchPs;
    req.kernelMinPs = kernelMinPs;
    req.kernelFillPs = kernelFillPs;
    int64_t end = -1;
    api.Start(
        req, [](uint32_t) {}, [&]() { end = t.NowPs(); });
    t.Run();
    m_runs++;
    if (end < 0)
    {
        throw std::runtime_error("simulated all-to-all did not complete");
    }
    return double(end) * 1e-6;
}
} // namespace fabricsim
