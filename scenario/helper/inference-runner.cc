#include "inference-runner.h"

#include "fabric-backend.h"
#include "input-error.h"
#include "rank-placement.h"
#include "scenario.h"
#include "schedule-collectives.h"
#include "serving-simulation.h"
#include "unit-conversions.h"

#include "ns3/fabric-collective-helper.h"
#include "ns3/fabric-inference-helper.h"
#include "ns3/fabric-stats-helper.h"
#include "ns3/simulator.h"

#include <chrono>

namespace fabricsim
{

using nlohmann::json;

namespace
{

/// The model in the summary: its name, the config keys the reader passed over, and the ops a
/// calibration could not price for want of measured rows.
json
ModelSummary(const InferenceScenario& isc)
{
    json j = {{"name", isc.model.name}, {"ignored_keys", isc.model.ignoredKeys}};
    j["uncalibrated"] = json::array();
    if (isc.hw.computeCalibration && isc.model.NumLayersOf(LayerKind::Sliding) > 0)
    {
        j["uncalibrated"].push_back("sliding-window attention: no measured kernel rows, priced "
                                    "by the roofline at the hardware's efficiencies");
    }
    if (isc.hw.computeCalibration && isc.model.NumLayersOf(LayerKind::Linear) > 0)
    {
        j["uncalibrated"].push_back("linear attention (Gated DeltaNet, lightning): no measured "
                                    "kernel rows, priced by the roofline at the hardware's "
                                    "efficiencies");
    }
    if (j["uncalibrated"].empty())
    {
        j.erase("uncalibrated");
    }
    return j;
}

} // namespace

bool
IsInferenceScenario(const json& doc)
{
    return InferenceScenario::IsInference(doc);
}

InferenceRunResult
ExecuteInferenceScenario(const json& doc,
                         const std::string& file,
                         const InferenceRunOptions& opt,
                         std::ostream& err,
                         std::ostream* programs)
{
    // Parse and check everything before the run starts.
    Scenario read = ReadScenario(doc, file);
    if (!read.inference)
    {
        throw fabricsim::InputError(file, "serving", "a serving block", "nothing");
    }
    InferenceScenario& isc = *read.inference;
    const FabricScenario& sc = read.fabric;
    if (!sc.flows.empty() || !sc.poisson.empty() || !sc.incasts.empty())
    {
        throw fabricsim::InputError(
            file,
            "traffic",
            "no background traffic in an inference scenario (not supported yet)",
            "a traffic block");
    }
    CheckTensorParallelScaleUp(isc, sc.topology);
    const BackendKind kind = ParseBackendKind(opt.backend, "<command line>", "--backend");
    if (opt.timeline && !isc.record.timeline)
    {
        isc.record.timeline = true;
        isc.CheckFitsMemory(); // the timeline it holds, counted before the run
    }
    if (opt.record)
    {
        isc.record.programs = true;
    }

    // The fabric (or the analytical model) and the Collective API over it come from the one
    // backend factory; the serving run from the inference helper, as in scenario programs.
    // Attribute defaults (scenario, then --ns3::) apply to both backends: the executor's and the
    // analytical model's tunables are attributes too. An inference run ends when its workload
    // ends: stop_ns is only the cap a user sets (the backend's watchdog).
    FabricBackend backend(sc, kind, opt.run.ns3Args);
    ns3::FabricCollectiveHelper* collectives = &backend.Collectives();
    ns3::FabricTopologyHelper* fabric = backend.Fabric();
    ns3::FabricInferenceHelper inference(*collectives);
    inference.Place(isc); // too few hosts is bad input, found before the run
    if ((opt.memo || opt.memoVerify > 0) && !inference.EnableMemo())
    {
        throw fabricsim::InputError("<command line>",
                                    "--memo",
                                    "--backend packet (the memo replays packet-level collectives)",
                                    "--backend " + opt.backend);
    }
    if (opt.memoVerify > 0)
    {
        inference.Memo()->SetVerify(opt.memoVerify);
    }
    // Hierarchical algorithms need the scale-up domain size; "auto" times its candidates.
    CollectiveOptions copt;
    copt.m_localSize = ns3::FabricCollectiveHelper::ScaleUpDomainSize(sc.topology);
    copt.m_probe = AutoProbe(sc);
    collectives->SetCollectiveOptions(copt);
    std::unique_ptr<ns3::FabricStatsHelper> stats;
    if (fabric)
    {
        stats = std::make_unique<ns3::FabricStatsHelper>(*fabric);
    }
    InferenceRunResult r;
    r.scenario = isc;
    auto t0 = std::chrono::steady_clock::now();
    // A line on stderr, rewritten at most five times a second: simulated time, steps, requests
    // finished, events/s and the time left at the rate tokens have been generated so far.
    bool printed = false;
    auto last = t0 - std::chrono::seconds(1); // the first step is shown at once
    ServingHooks hooks;
    hooks.programs = programs;
    if (opt.run.progress)
    {
        hooks.progress = [&](const ServingProgress& p)
        {
            const auto now = std::chrono::steady_clock::now();
            if (now - last < std::chrono::milliseconds(200))
            {
                return;
            }
            last = now;
            printed = true;
            const double wall = std::chrono::duration<double>(now - t0).count();
            const double frac = p.tokens > 0 ? double(p.tokensGenerated) / double(p.tokens) : 0;
            char line[256];
            std::snprintf(line,
                          sizeof line,
                          "\r[fabricsim] t=%.3f ms  %llu steps  %llu/%llu requests  %.2f M "
                          "events/s  ETA %.0f s   ",
                          double(p.nowPs) * 1e-9,
                          (unsigned long long)p.steps,
                          (unsigned long long)p.requestsFinished,
                          (unsigned long long)p.requests,
                          wall > 0 ? double(backend.EventCount()) / wall / 1e6 : 0.0,
                          frac > 0 ? wall * (1 - frac) / frac : 0.0);
            err << line << std::flush;
        };
    }
    try
    {
        r.serving = inference.RunServing(isc, hooks);
    }
    catch (const UnitOverflow& e)
    {
        // A step that long comes from the scenario's figures (a peak of a few FLOP/s, a huge
        // overhead): bad input, named as such, not an internal error.
        throw fabricsim::InputError(file,
                                    "model, hardware, serving",
                                    "figures whose step times fit the simulator's 64-bit "
                                    "picosecond clock (about 106 days)",
                                    e.what());
    }
    r.wallS = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (printed)
    {
        err << "\n";
    }

    json& s = r.summary;
    s = r.serving.ToJson(true);
    s["scenario"] = sc.name;
    s["seed"] = isc.seed;
    s["backend"] = opt.backend;
    s["model"] = ModelSummary(isc);
    json fj = {
        {"topology", sc.topology.type}, {"hosts", sc.topology.NumHosts()}, {"cc", sc.transport.cc}};
    if (stats)
    {
        json t = stats->Collect().ToJson();
        for (auto it = t.begin(); it != t.end(); ++it)
        {
            fj[it.key()] = it.value();
        }
        // The event count goes to timing.json: another engine may reach the same result
        // with other events.
        r.events = ns3::Simulator::GetEventCount();
        fj["simulated_ns"] = ns3::Simulator::Now().GetNanoSeconds();
    }
    s["fabric"] = fj;
    if (inference.Memo())
    {
        r.memo = inference.Memo()->Stats().ToJson();
    }
    if (!r.serving.incomplete.empty())
    {
        r.stuck = r.serving.incomplete;
        for (auto& line : inference.StuckReports())
        {
            r.stuck.push_back(line);
        }
        s["stuck"] = r.stuck;
    }
    return r;
}

} // namespace fabricsim
