#include "fabric-runner.h"

#include "fabric-setup.h"
#include "input-error.h"
#include "output-writer.h"
#include "run-distribution.h"
#include "run-end.h"
#include "run-provenance.h"

#include "ns3/fabric-stats-helper.h"
#include "ns3/fabric-traffic-helper.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <sstream>

namespace fabricsim
{

using namespace ns3;
using nlohmann::json;

namespace
{

struct ProgressState
{
    std::chrono::steady_clock::time_point start;
    Time stop;
};

void
ProgressTick(ProgressState* st)
{
    double wall
        = std::chrono::duration<double>(std::chrono::steady_clock::now() - st->start).count();
    double frac = Simulator::Now().GetSeconds() / st->stop.GetSeconds();
    double evs = wall > 0 ? double(Simulator::GetEventCount()) / wall : 0;
    double eta = frac > 0 ? wall * (1 - frac) / frac : 0;
    std::fprintf(stderr,
                 "\r[fabricsim] t=%.3f ms (%4.1f%%)  %.2f M events/s  ETA %.0f s   ",
                 Simulator::Now().GetSeconds() * 1e3,
                 100 * frac,
                 evs / 1e6,
                 eta);
    Simulator::Schedule(st->stop / 200, &ProgressTick, st);
}

void
StopOnDeadlock(const DeadlockReport&)
{
    Simulator::Stop();
}

} // namespace

void
StartProgress(Time stop)
{
    static ProgressState st; // one progress line per process
    st.start = std::chrono::steady_clock::now();
    st.stop = stop;
    Simulator::Schedule(stop / 200, &ProgressTick, &st);
}

namespace
{

/// One fabric run, from the installed fabric to its outputs; each phase below fills its part.
struct FabricRun
{
    FabricRun(const FabricScenario& scenario, const RunOptions& options)
        : sc(scenario)
        , opt(options)
    {
    }

    const FabricScenario& sc;
    const RunOptions& opt;
    ObjectFactory defaultCc;
    std::unique_ptr<FabricTopologyHelper> fabric;
    std::vector<FlowSpec> flows;
    std::unique_ptr<OutputDir> dir;
    std::unique_ptr<FabricTrafficHelper> traffic;
    std::unique_ptr<FabricStatsHelper> stats;
    Ptr<DeadlockDetector> detector;
    std::unique_ptr<RunEnd> end;
    /// Rank 0 of a run across ranks writes the outputs; the others keep theirs here.
    bool writer = true;
    std::ostringstream discarded;
    // Set by Simulate.
    double wall = 0;
    uint64_t simNs = 0;
    uint64_t events = 0;
    FabricTotals totals;
    json watchdog; ///< summary.json's pfc_watchdog
    std::vector<DeadlockReport> deadlocks;
    bool deadlockStop = false;
    // Set by WriteOutputs.
    json summary;
};

/// The simulator configured, every congestion-control name resolved, the fabric installed with
/// its route overrides and the traffic expanded: everything that can be wrong with the input
/// is found before the output folder exists.
void
Install(FabricRun& run)
{
    const FabricScenario& sc = run.sc;
    ConfigureSimulator(sc, run.opt.ns3Args);
    run.defaultCc = CcFactory(sc.transport.cc, sc.file, "transport.cc");
    for (auto& [prio, name] : sc.transport.ccPerPriority)
    {
        CcFactory(name, sc.file, "transport.cc_per_priority." + std::to_string(prio));
    }
    for (size_t i = 0; i < sc.flows.size(); ++i)
    {
        if (!sc.flows[i].cc.empty())
        {
            CcFactory(sc.flows[i].cc, sc.file, "traffic.flows[" + std::to_string(i) + "].cc");
        }
    }
    std::vector<uint32_t> ranks;
    if (RunDistribution* dist = run.opt.distribution)
    {
        ranks = dist->Partition(sc);
        run.writer = dist->Rank() == 0;
    }
    run.fabric = InstallFabric(sc, ranks);
    for (const RouteOverride& r : sc.routes)
    {
        for (uint32_t h : r.dstHosts)
        {
            run.fabric->SetRouteOverride(r.node, h, r.ports);
        }
    }
    run.flows = ExpandTraffic(sc, *run.fabric);
}

/// The output folder, pcap captures, and every flow on the traffic helper with its congestion
/// control; the run stops when the last flow is done.
void
AddTraffic(FabricRun& run)
{
    const FabricScenario& sc = run.sc;
    if (run.writer)
    {
        run.dir = std::make_unique<OutputDir>(run.opt.outDir);
    }
    for (uint32_t h : sc.pcapHosts)
    {
        run.fabric->EnablePcapHost(h, run.dir->Path(""));
    }
    for (auto& name : sc.pcapSwitches)
    {
        run.fabric->EnablePcapSwitch(sc.topology.FindNode(name), run.dir->Path(""));
    }
    run.traffic = std::make_unique<FabricTrafficHelper>(*run.fabric);
    std::map<std::string, ObjectFactory> ccByName{{sc.transport.cc, run.defaultCc}};
    for (auto& f : run.flows)
    {
        uint8_t prio = f.priority < 0 ? sc.transport.priority : uint8_t(f.priority);
        // A flow's own cc, else its priority class's, else the transport default.
        std::string cc = f.cc;
        if (cc.empty())
        {
            auto pc = sc.transport.ccPerPriority.find(prio);
            cc = pc != sc.transport.ccPerPriority.end() ? pc->second : sc.transport.cc;
        }
        if (!ccByName.count(cc))
        {
            ccByName[cc] = CcFactory(cc, sc.file, "traffic.flows.cc");
        }
        run.traffic->AddFlow(f.src, f.dst, f.sizeBytes, NanoSeconds(f.startNs), prio, ccByName[cc]);
    }
    uint64_t maxDelayPs = 0;
    for (const TopoLink& l : sc.topology.links)
    {
        maxDelayPs = std::max(maxDelayPs, l.spec.delayPs);
    }
    RunDistribution* dist = run.opt.distribution;
    run.end = std::make_unique<RunEnd>(dist ? dist->Ranks() : 1,
                                       RunEnd::NoticeDelay(PicoSeconds(maxDelayPs)));
    if (dist)
    {
        dist->Connect(*run.fabric, *run.end);
    }
    RunEnd* end = run.end.get();
    run.traffic->SetAllDoneCallback(Callback<void>([end]() { end->LocalDone(); }));
}

/// The PFC log, the monitor series that are on, the deadlock detector and the progress line.
void
AddMonitors(FabricRun& run)
{
    const FabricScenario& sc = run.sc;
    run.stats = std::make_unique<FabricStatsHelper>(*run.fabric);
    run.stats->EnablePfcLog(run.writer ? &run.dir->Stream("pfc.csv") : &run.discarded);
    if (run.opt.distribution)
    {
        run.stats->SetAcrossRanks(); // rows kept, gathered and merged after the run
    }
    // Monitor series: files exist only for the series that are on (nothing is scheduled when off).
    if (sc.monitor.intervalNs > 0)
    {
        MonitorStreams ms;
        auto open = [&run](bool on, const char* name) -> std::ostream*
        {
            return !on ? nullptr : run.writer ? &run.dir->Stream(name) : &run.discarded;
        };
        ms.queues = open(sc.monitor.queues, "queue.csv");
        ms.links = open(sc.monitor.links, "link_util.csv");
        ms.qpRates = open(sc.monitor.qpRates, "qp_rate.csv");
        ms.cnps = open(sc.monitor.cnps, "cnp.csv");
        ms.pauseState = open(sc.monitor.pauseState, "pause.csv");
        uint64_t end = std::min(sc.monitor.endNs, sc.stopNs);
        run.stats->EnableMonitor(ms,
                                 NanoSeconds(sc.monitor.intervalNs),
                                 NanoSeconds(sc.monitor.startNs),
                                 NanoSeconds(end));
    }
    // PFC deadlock detection (lossless fabrics only): it ends the run instead of idling.
    if (sc.transport.pfc && sc.deadlock.checkIntervalNs > 0)
    {
        run.detector = CreateObject<DeadlockDetector>();
        std::vector<Ptr<FabricNetDevice>> nics;
        for (auto& nic : run.fabric->GetAllNics())
        {
            nics.push_back(nic);
        }
        run.detector->Install(run.fabric->GetAllSwitches(), nics);
        // Decided one notice delay after each check, as a run across ranks must (run-end.h).
        if (run.opt.distribution)
        {
            run.opt.distribution->ConnectDetector(*run.detector, run.end->Notice());
        }
        else
        {
            run.detector->SetDecision(run.end->Notice(), 1);
        }
        if (sc.deadlock.stop)
        {
            run.detector->TraceConnectWithoutContext("Deadlock", MakeCallback(&StopOnDeadlock));
        }
    }
    if (run.opt.progress && run.writer)
    {
        StartProgress(NanoSeconds(sc.stopNs));
    }
}

/// A run across ranks: every rank's share of the totals, its side of the flows, its PFC log rows
/// and its event count go to rank 0, which merges them into what one process would have.
void
GatherShares(FabricRun& run)
{
    const json mine = {{"totals", run.stats->CollectPart().ToJson()},
                       {"flows", run.traffic->LocalOutcomes()},
                       {"pfc", run.stats->PfcLogPart()},
                       {"monitor", run.stats->MonitorPart()},
                       {"watchdog", run.stats->WatchdogPart()},
                       {"events", Simulator::GetEventCount()}};
    const std::vector<std::string> all = run.opt.distribution->Gather(mine.dump());
    if (!run.writer)
    {
        return;
    }
    FabricTotalsPart totals;
    std::vector<json> flows;
    std::vector<json> monitor;
    std::vector<json> watchdog;
    run.events = 0;
    for (size_t r = 0; r < all.size(); ++r)
    {
        const json part = json::parse(all[r]);
        totals.Merge(FabricTotalsPart::FromJson(part.at("totals")));
        flows.push_back(part.at("flows"));
        monitor.push_back(part.at("monitor"));
        watchdog.push_back(part.at("watchdog"));
        if (r != 0) // rank 0's rows are already here
        {
            run.stats->AddPfcLogPart(part.at("pfc"));
        }
        run.events += part.at("events").get<uint64_t>();
    }
    run.totals = totals.Finish();
    run.traffic->ApplyOutcomes(flows);
    run.stats->WriteMonitor(monitor);
    run.watchdog = FabricStatsHelper::MergeWatchdog(watchdog);
}

/// Runs until the last flow, the stop time or a deadlock, and collects the fabric's figures.
void
Simulate(FabricRun& run)
{
    auto t0 = std::chrono::steady_clock::now();
    run.end->CapAt(NanoSeconds(run.sc.stopNs));
    if (!run.flows.empty() && run.traffic->LocalFlows() == 0)
    {
        Simulator::ScheduleNow(&RunEnd::LocalDone, run.end.get());
    }
    Simulator::Run();
    run.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (run.opt.progress)
    {
        std::fprintf(stderr, "\n");
    }
    run.stats->FinishMonitor();
    if (run.opt.distribution)
    {
        GatherShares(run);
    }
    else
    {
        run.events = Simulator::GetEventCount();
        run.totals = run.stats->Collect();
        run.watchdog = run.stats->WatchdogJson();
    }
    run.stats->WritePfcLog();
    run.deadlockStop = run.sc.deadlock.stop && run.detector && !run.detector->GetReports().empty();
    // The time the last flow finished, as a run stopped at that event has always reported.
    const Time end
        = run.end->AllDone() && !run.deadlockStop ? run.end->LastDone() : Simulator::Now();
    run.simNs = uint64_t(end.GetNanoSeconds());
    if (run.detector)
    {
        run.deadlocks = run.detector->GetReports();
    }
}

/// summary.json, fct.csv, timing.json and provenance.json, committed with the series.
void
WriteOutputs(FabricRun& run)
{
    const FabricScenario& sc = run.sc;
    FabricTrafficHelper& traffic = *run.traffic;
    const FabricTotals& totals = run.totals;
    const std::vector<DeadlockReport>& deadlocks = run.deadlocks;
    json& summary = run.summary;
    std::ostringstream fct;
    traffic.WriteFctCsv(fct);
    const std::vector<double> slow = traffic.Slowdowns();
    const auto Percentile = &FabricTrafficHelper::Percentile;
    summary["scenario"] = sc.name;
    summary["seed"] = sc.seed;
    uint32_t nsw = 0;
    for (auto& n : sc.topology.nodes)
    {
        nsw += n.kind == NodeKind::Switch;
    }
    summary["topology"] = {{"type", sc.topology.type},
                           {"hosts", sc.topology.NumHosts()},
                           {"switches", nsw},
                           {"links", sc.topology.links.size()}};
    summary["transport"] = {{"cc", sc.transport.cc},
                            {"pfc", sc.transport.pfc},
                            {"mtu_bytes", sc.transport.mtuBytes},
                            {"loss_recovery", sc.transport.lossRecovery}};
    for (auto& [prio, name] : sc.transport.ccPerPriority)
    {
        summary["transport"]["cc_per_priority"][std::to_string(prio)] = name;
    }
    summary["flows"] = traffic.FlowsJson();
    summary["flows_total"] = traffic.GetFlows().size();
    summary["flows_completed"] = traffic.CompletedFlows();
    summary["flows_failed"] = traffic.FailedFlows();
    summary["complete"] = traffic.CompletedFlows() == traffic.GetFlows().size();
    summary["slowdown"] = {{"p50", Percentile(slow, 0.5)},
                           {"p95", Percentile(slow, 0.95)},
                           {"p99", Percentile(slow, 0.99)}};
    json fab = totals.ToJson();
    for (auto it = fab.begin(); it != fab.end(); ++it)
    {
        summary[it.key()] = it.value();
    }
    summary["pfc_watchdog"] = run.watchdog;
    json jdl = {{"enabled", bool(run.detector)},
                {"detected", !deadlocks.empty()},
                {"reports", deadlocks.size()}};
    if (!deadlocks.empty())
    {
        json first = run.stats->DeadlockJson(deadlocks.front());
        for (auto it = first.begin(); it != first.end(); ++it)
        {
            jdl[it.key()] = it.value();
        }
        jdl["run_stopped"] = run.deadlockStop;
    }
    summary["deadlock"] = jdl;
    // Loops a link event created through the route overrides (present only when one did).
    if (!run.fabric->GetForwardingLoops().empty())
    {
        json loops = json::array();
        for (const auto& [at, loop] : run.fabric->GetForwardingLoops())
        {
            loops.push_back({{"at_ns", at.GetNanoSeconds()},
                             {"dst_host", loop.dstHost},
                             {"loop", loop.Describe(sc.topology)}});
        }
        summary["routing_loops"] = loops;
    }
    // Wall-clock figures and the event count live in timing.json, so that summary.json is
    // byte-identical per seed and across engines that reach the same result with other events.
    summary["sim"] = {{"simulated_ns", run.simNs}, {"wall_s_in", "timing.json"}};
    run.dir->Write("summary.json", summary.dump(2) + "\n");
    run.dir->Write("fct.csv", fct.str());
    json timing = {{"wall_s", run.wall},
                   {"events", run.events},
                   {"events_per_s", run.wall > 0 ? double(run.events) / run.wall : 0}};
    run.dir->Write("timing.json", timing.dump(2) + "\n");
    run.dir->Write("provenance.json", ProvenanceText(run.opt.scenario, run.opt.ns3Args));
    Simulator::Destroy();
    run.dir->Commit();
}

/// The human summary on \p out, each unfinished flow and deadlock on stderr; the exit code.
int
Report(FabricRun& run, std::ostream& out)
{
    const FabricScenario& sc = run.sc;
    FabricTrafficHelper& traffic = *run.traffic;
    const FabricTotals& totals = run.totals;
    const json& summary = run.summary;
    const std::vector<DeadlockReport>& deadlocks = run.deadlocks;
    const std::vector<double> slow = traffic.Slowdowns();
    const auto Percentile = &FabricTrafficHelper::Percentile;
    out << "fabricsim: " << summary["scenario"].get<std::string>() << " (" << sc.topology.type
        << ", " << sc.topology.NumHosts() << " hosts, cc " << sc.transport.cc << ", pfc "
        << (sc.transport.pfc ? "on" : "off") << ")\n";
    out << std::fixed << std::setprecision(3);
    out << "  flows completed      " << traffic.CompletedFlows() << " / "
        << traffic.GetFlows().size() << "\n";
    out << "  slowdown p50/p95/p99 " << Percentile(slow, 0.5) << " / " << Percentile(slow, 0.95)
        << " / " << Percentile(slow, 0.99) << "\n";
    out << "  drops                " << totals.dropsTotal << "\n";
    for (const auto& [at, loop] : run.fabric->GetForwardingLoops())
    {
        out << "  routing loop         at " << at.GetNanoSeconds() << " ns toward host "
            << loop.dstHost << ": " << loop.Describe(sc.topology) << " (a route override)\n";
    }
    out << "  PFC pauses sent      " << totals.pfcPauseSent << "\n";
    out << "  queue max / p99      " << totals.maxQueueBytes << " / " << totals.p99QueueBytes
        << " bytes\n";
    out << "  conservation         " << (totals.Conserved() ? "ok" : "VIOLATED") << "\n";
    if (summary["pfc_watchdog"]["enabled"].get<bool>())
    {
        out << "  PFC watchdog         " << summary["pfc_watchdog"]["triggers"] << " triggers ("
            << summary["pfc_watchdog"]["action"].get<std::string>() << ")\n";
    }
    if (!deadlocks.empty())
    {
        out << "  deadlock             " << summary["deadlock"]["kind"].get<std::string>() << " at "
            << double(deadlocks.front().time.GetNanoSeconds()) / 1e6 << " ms"
            << (run.deadlockStop ? ", run stopped" : ", reported") << "\n";
    }
    out << "  simulated            " << double(run.simNs) / 1e6 << " ms, " << run.events
        << " events, " << run.wall << " s wall\n";
    out << "  outputs              " << run.opt.outDir << "/summary.json\n";
    for (const auto& jf : summary["flows"])
    {
        if (!jf["fct_ns"].is_null())
        {
            continue;
        }
        std::cerr << "fabricsim: flow " << jf["id"] << " (" << jf["src"] << " -> " << jf["dst"]
                  << ", " << jf["size_bytes"] << " B) ";
        if (jf.contains("failed"))
        {
            std::cerr << "failed: " << jf["failed"].get<std::string>() << "; "
                      << jf["pending_bytes"] << " bytes unacknowledged\n";
            continue;
        }
        std::cerr << "did not complete "
                  << (run.deadlockStop ? "before the deadlock stopped the run: " : "by stop_ns: ");
        if (jf["start_ns"].get<int64_t>() >= int64_t(run.simNs))
        {
            std::cerr << "it was to start at " << jf["start_ns"] << " ns\n";
        }
        else
        {
            std::cerr << jf["pending_bytes"] << " bytes unacknowledged\n";
        }
    }
    for (const DeadlockReport& r : deadlocks)
    {
        std::cerr << "fabricsim: " << run.stats->DeadlockText(r) << "\n";
    }
    if (!totals.Conserved())
    {
        std::cerr << "fabricsim: frame conservation violated (see summary.json conservation)\n";
        return 1;
    }
    if (run.deadlockStop)
    {
        std::cerr << "fabricsim: run stopped by the deadlock detector (exit 3; summary.json "
                     "\"deadlock\")\n";
        return 3;
    }
    return 0;
}

} // namespace

int
RunFabricScenario(const FabricScenario& sc, const RunOptions& opt, std::ostream& out)
{
    FabricRun run(sc, opt);
    Install(run);
    AddTraffic(run);
    AddMonitors(run);
    Simulate(run);
    if (!run.writer)
    {
        Simulator::Destroy();
        return 0; // rank 0 writes and reports
    }
    WriteOutputs(run);
    return Report(run, out);
}

} // namespace fabricsim
