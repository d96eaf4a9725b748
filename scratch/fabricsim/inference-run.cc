#include "inference-run.h"

#include "cli-options.h"
#include "input-error.h"
#include "output-writer.h"
#include "rank-placement.h"
#include "schedule-collectives.h"
#include "serving-simulation.h"
#include "serving-tables.h"
#include "unit-conversions.h"

#include "ns3/fabric-backend.h"
#include "ns3/fabric-collective-helper.h"
#include "ns3/fabric-inference-helper.h"
#include "ns3/fabric-stats-helper.h"
#include "ns3/simulator.h"

#include <chrono>
#include <iomanip>
#include <iostream>

namespace fabricsim
{

using nlohmann::json;

namespace
{

std::string
Dist(const json& d)
{
    std::ostringstream o;
    o << std::fixed << std::setprecision(2);
    for (const char* k : {"mean", "p50", "p90", "p99"})
    {
        o << std::setw(10) << (d.contains(k) ? d[k].get<double>() : 0.0);
    }
    return o.str();
}

void
PrintTable(const json& s,
           const InferenceScenario& isc,
           const InferenceRunOptions& opt,
           std::ostream& out)
{
    out << "fabricsim: " << s["scenario"].get<std::string>() << "\n";
    out << "  " << s["accelerators"].get<int>() << " x " << isc.hw.name << ", backend "
        << opt.backend << ", fabric " << s["fabric"]["topology"].get<std::string>() << "\n";
    const json& r = s["requests"];
    out << std::fixed << std::setprecision(2);
    out << "  requests completed      " << r["completed"].get<int>() << " / "
        << r["count"].get<int>() << " in " << s["duration_s"].get<double>() << " s simulated ("
        << r["preemptions"].get<int>() << " preemptions)\n";
    if (!s["complete"].get<bool>())
    {
        out << "  INCOMPLETE: the figures below are over the finished requests only\n";
    }
    out << "  latency (ms)                  mean       p50       p90       p99\n";
    out << "    TTFT                  " << Dist(s["ttft_ms"]) << "\n";
    out << "    TPOT                  " << Dist(s["tpot_ms"]) << "\n";
    out << "    ITL                   " << Dist(s["itl_ms"]) << "\n";
    out << "    E2E                   " << Dist(s["e2e_ms"]) << "\n";
    out << "  throughput              " << s["throughput_tokens_per_s"].get<double>()
        << " tokens/s (prompt " << s["prompt_tokens_per_s"].get<double>() << ", generation "
        << s["generation_tokens_per_s"].get<double>() << ")\n";
    if (s.contains("slo"))
    {
        out << "  SLO attainment          " << 100.0 * s["slo"].value("attainment", 0.0) << " %\n";
    }
    out << "  cost per M tokens       $" << s["cost_per_million_tokens"].get<double>() << "\n";
    out << "  MFU / MBU               " << 100.0 * s["mfu"].get<double>() << " % / "
        << 100.0 * s["mbu"].get<double>() << " %\n";
    const json& b = s["breakdown"];
    out << "  step time (ms, sum over " << b["steps"].get<int>() << " steps, mean per rank)\n";
    out << "    compute               " << b["compute_ms"].get<double>() << "\n";
    for (auto it = b["exposed_comm_ms"].begin(); it != b["exposed_comm_ms"].end(); ++it)
    {
        out << "    " << std::left << std::setw(22) << it.key() << std::right
            << it.value().get<double>() << "  (exposed communication)\n";
    }
    out << "    sync wait             " << b["sync_wait_ms"].get<double>() << "\n";
    out << "    idle                  " << b["idle_ms"].get<double>() << "\n";
    if (s["fabric"].contains("drops"))
    {
        const json& f = s["fabric"];
        out << "  fabric                  " << f["drops"]["total"].get<uint64_t>() << " drops, "
            << f["pfc"]["pause_frames_sent"].get<uint64_t>() << " PFC pauses, max queue "
            << f["queue"]["max_bytes"].get<uint64_t>() << " B\n";
    }
    out << "  outputs                 " << opt.run.outDir << "/summary.json\n";
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
    InferenceScenario isc = InferenceScenario::FromJson(doc, file);
    json fabricDoc = FabricPart(doc);
    FabricScenario sc = ParseFabricScenario(fabricDoc, file);
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

int
RunInferenceScenario(const json& doc,
                     const std::string& file,
                     const InferenceRunOptions& opt,
                     std::ostream& out,
                     std::ostream& err)
{
    // The scenario is checked first (InferenceScenario::FromJson) so that bad input leaves no
    // output folder behind; an unwritable --out is found before the run.
    const InferenceScenario checked = InferenceScenario::FromJson(doc, file);
    OutputDir dir(opt.run.outDir);
    // Recorded programs go to disk as each step launches (held, they took gigabytes).
    std::ostream* programs
        = opt.record || checked.record.programs ? &dir.Stream("programs.jsonl") : nullptr;
    InferenceRunResult r = ExecuteInferenceScenario(doc, file, opt, err, programs);
    dir.Write("summary.json", r.summary.dump(2) + "\n");
    dir.Write("requests.csv", RequestsCsv(r.serving));
    dir.Write("steps.csv", StepsCsv(r.serving));
    dir.Write("provenance.json", ProvenanceText(doc, opt.run.ns3Args));
    json timing = {{"wall_s", r.wallS},
                   {"events", r.events},
                   {"events_per_s", r.wallS > 0 ? double(r.events) / r.wallS : 0}};
    if (!r.memo.is_null())
    {
        timing["memo"] = r.memo;
    }
    dir.Write("timing.json", timing.dump(2) + "\n");
    if (r.scenario.record.timeline && r.serving.timeline)
    {
        r.serving.timeline->Write(dir.Stream("timeline.json"));
    }
    dir.Commit();
    PrintTable(r.summary, r.scenario, opt, out);
    out << "  wall                    " << std::setprecision(1) << r.wallS << " s\n";
    if (MemoDisagreed(r.memo, err))
    {
        return 1;
    }
    if (!r.stuck.empty())
    {
        err << "fabricsim: the run could not finish:\n";
        for (auto& line : r.stuck)
        {
            err << "  " << line << "\n";
        }
        return 3;
    }
    return 0;
}

} // namespace fabricsim
