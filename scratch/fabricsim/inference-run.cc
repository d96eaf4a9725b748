#include "inference-run.h"

#include "cli-options.h"
#include "output-writer.h"
#include "serving-tables.h"

#include "ns3/run-provenance.h"

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
    const json& ignored = s["model"]["ignored_keys"];
    out << "  model                   " << s["model"]["name"].get<std::string>();
    if (!ignored.empty())
    {
        out << " (" << ignored.size() << " config keys not read: model.ignored_keys)";
    }
    out << "\n";
    for (const auto& note : s["model"].value("uncalibrated", json::array()))
    {
        out << "  uncalibrated            " << note.get<std::string>() << "\n";
    }
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
