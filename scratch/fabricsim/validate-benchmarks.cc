#include "validate-benchmarks.h"

#include "benchmark-comparison.h"
#include "benchmark-replay.h"
#include "benchmark-result.h"
#include "cli-options.h"
#include "fabric-scenario.h"
#include "file-reader.h"
#include "hardware-spec.h"
#include "inference-run.h"
#include "input-error.h"
#include "output-writer.h"
#include "validate-serving-command.h"

#include "ns3/benchmark-validation.h"
#include "ns3/run-provenance.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <ostream>
#include <regex>
#include <set>
#include <sstream>

namespace fabricsim
{

using nlohmann::json;
namespace fs = std::filesystem;

namespace
{

/// The figures every point's table shows and the targets are set on.
const std::vector<std::string> kHeadline
    = {"output_throughput", "median_e2el_ms", "median_tpot_ms", "median_ttft_ms"};

/// \p path relative to \p dir, where a scenario that names it is written.
std::string
RelativeTo(const std::string& path, const std::string& dir)
{
    return fs::absolute(path)
        .lexically_normal()
        .lexically_relative(fs::absolute(dir).lexically_normal())
        .string();
}

/// What the comparison gathers over the points: comparison.csv, the markdown table,
/// summary.json's points and the errors by metric.
struct Comparison
{
    std::string csv = "file,role,metric,measured,simulated,error_pct\n";
    std::ostringstream table;
    json report = {{"points", json::array()}};
    std::map<std::string, std::vector<double>> heldOut; ///< |error| of the held-out points
    std::map<std::string, std::vector<double>> all;     ///< |error| of every point
    bool allComplete = true;

    Comparison()
    {
        table << "| point | C | ISL | OSL | role |";
        for (const std::string& k : kHeadline)
        {
            table << " " << k << " measured | fabricsim | error |";
        }
        table << "\n|---|---:|---:|---:|---|";
        for (size_t i = 0; i < kHeadline.size(); ++i)
        {
            table << "---:|---:|---:|";
        }
        table << "\n";
    }
};

/// Runs \p p (with the fitted frontend costs \p fit), writes the scenario that reproduces it
/// and adds its figures to \p c.
void
ComparePoint(BenchmarkPoint& p,
             const ValidateServingOptions& opt,
             const BenchmarkRunOptions& ropt,
             const std::string& calibration,
             const std::optional<FrontendFit>& fit,
             OutputDir& dir,
             std::ostream& err,
             Comparison& c)
{
    const std::string role = p.fit ? "fit" : "held out";
    p.summary = RunBenchmarkPoint(p, ropt, dir, fit ? &*fit : nullptr, err);
    c.allComplete = c.allComplete && p.complete;
    json scenario = p.replay.scenario;
    if (fit)
    {
        SetFrontendCosts(scenario, *fit);
    }
    if (!calibration.empty())
    {
        scenario["hardware"] = {{"preset", scenario["hardware"]},
                                {"compute_calibration", RelativeTo(calibration, opt.outDir)}};
    }
    if (scenario["model"].is_object() && scenario["model"].contains("config"))
    {
        scenario["model"]["config"]
            = RelativeTo(scenario["model"]["config"].get<std::string>(), opt.outDir);
    }
    const std::string scenarioName = p.result.label + ".scenario.json";
    dir.Write(scenarioName, scenario.dump(2) + "\n");
    json metrics = json::object();
    for (const auto& [name, measured] : p.result.measured)
    {
        const std::optional<double> sim = SimulatedFigure(p.summary, name);
        if (!sim)
        {
            continue;
        }
        const double e = FigureErrorPct(measured, *sim);
        metrics[name] = {{"measured", measured}, {"fabricsim", *sim}, {"error_pct", e}};
        c.csv += p.result.label + "," + role + "," + name + "," + Fixed(measured, 4) + ","
                 + Fixed(*sim, 4) + "," + Fixed(e, 2) + "\n";
        c.all[name].push_back(std::fabs(e));
        if (!p.fit)
        {
            c.heldOut[name].push_back(std::fabs(e));
        }
    }
    c.table << "| " << p.result.label << (p.complete ? "" : " (INCOMPLETE)") << " | "
            << p.result.concurrency << " | " << p.result.inputTokens << " | "
            << p.result.outputTokens << " | " << role << " |";
    for (const std::string& k : kHeadline)
    {
        if (!metrics.contains(k))
        {
            c.table << " - | - | - |";
            continue;
        }
        const int digits = k == "output_throughput" ? 0 : 1;
        c.table << " " << Fixed(metrics[k]["measured"].get<double>(), digits) << " | "
                << Fixed(metrics[k]["fabricsim"].get<double>(), digits) << " | "
                << SignedPercent(metrics[k]["error_pct"].get<double>()) << " |";
    }
    c.table << "\n";
    c.report["points"].push_back({{"file", p.result.path},
                                  {"label", p.result.label},
                                  {"format", p.result.format},
                                  {"role", role},
                                  {"concurrency", p.result.concurrency},
                                  {"input_tokens", p.result.inputTokens},
                                  {"output_tokens", p.result.outputTokens},
                                  {"warmup", p.replay.warmups},
                                  {"assumed", p.replay.assumed},
                                  {"scenario", scenarioName},
                                  {"complete", p.complete},
                                  {"metrics", metrics},
                                  {"simulation", p.summary}});
}

/// The number of \p points a fit used.
size_t
FitPoints(const std::vector<BenchmarkPoint>& points)
{
    return size_t(
        std::count_if(points.begin(), points.end(), [](const BenchmarkPoint& p) { return p.fit; }));
}

/// validation.md's table of median errors; sets summary.json's "medians_abs_error_pct".
std::string
MediansTable(const std::vector<BenchmarkPoint>& points, Comparison& c)
{
    json medians = {{"held_out", json::object()}, {"all", json::object()}};
    std::ostringstream med;
    med << "| metric | median abs error, held out (" << (points.size() - FitPoints(points))
        << " points) | all (" << points.size() << ") |\n|---|---:|---:|\n";
    for (const auto& [name, v] : c.all)
    {
        const double h = c.heldOut.count(name) ? MedianOf(c.heldOut[name]) : NAN;
        const double a = MedianOf(v);
        if (!std::isnan(h))
        {
            medians["held_out"][name] = h;
        }
        medians["all"][name] = a;
        med << "| " << name << " | " << (std::isnan(h) ? std::string("-") : Fixed(h, 1) + "%")
            << " | " << Fixed(a, 1) << "% |\n";
    }
    c.report["medians_abs_error_pct"] = medians;
    return med.str();
}

/// validation.md.
std::string
ValidationMarkdown(const ValidateServingOptions& opt,
                   const BenchmarkDeployment& dep,
                   const std::vector<BenchmarkPoint>& points,
                   const std::optional<FrontendFit>& fit,
                   const std::string& medians,
                   const Comparison& c,
                   const std::vector<std::string>& odd)
{
    std::ostringstream md;
    md << "# Serving benchmark results replayed by fabricsim\n\n"
       << "Model " << dep.modelName << " on " << dep.hardwarePreset << ", the " << opt.backend
       << " backend. Error = (fabricsim - measured) / measured; figures in vLLM bench serve's "
          "definitions (TTFT from the client's send, TPOT = (E2E - TTFT) / (output - 1), "
          "throughput over the measured requests' duration).\n\n";
    if (fit)
    {
        md << "Frontend costs fitted on the " << FitPoints(points)
           << " points at C = " << opt.fitConcurrency
           << " (median TTFT residual = request + per-token x ISL"
           << (fit->constantOnly ? ", one input length: request cost only" : "")
           << "): request_overhead " << Fixed(fit->requestS * 1e3, 1)
           << " ms, prompt_token_overhead " << Fixed(fit->perTokenS * 1e6, 2)
           << " us per token.\n\n";
    }
    else if (!opt.fittedOn.empty())
    {
        md << "Costs given by --set were fitted on the " << FitPoints(points) << " points at C = "
           << [&]
        {
            std::string cs;
            for (uint32_t c : opt.fittedOn)
            {
                cs += (cs.empty() ? "" : ", ") + std::to_string(c);
            }
            return cs;
        }() << " (reported as fit, left out of the held-out medians).\n\n";
    }
    md << medians << "\n" << c.table.str() << "\n";
    md << "## The data's oddities (" << odd.size() << ", counted, not fitted)\n\n";
    for (const std::string& l : odd)
    {
        md << "- " << l << "\n";
    }
    return md.str();
}

} // namespace

bool
IsBenchmarkInput(const std::string& arg)
{
    if (fs::is_directory(arg))
    {
        return !fs::exists(fs::path(arg) / "vllm" / "meta.json");
    }
    return fs::path(arg).extension() == ".json";
}

int
RunValidateBenchmarks(const ValidateServingOptions& opt, std::ostream& out, std::ostream& err)
{
    const BenchmarkDeployment dep = StatedDeployment(opt.deployment);
    BenchmarkRunOptions ropt;
    ropt.sets = opt.sets;
    ropt.fitConcurrency = opt.fitConcurrency;
    ropt.fittedOn = opt.fittedOn;
    ropt.backend = opt.backend;
    ropt.outDir = opt.outDir;
    ropt.ns3Args = opt.ns3Args;
    std::vector<BenchmarkPoint> points = ReadBenchmarkPoints(opt.runs, dep, ropt);
    const std::string calibration = opt.calibrationPerGpu
                                        ? DefaultComputeCalibrationPath(dep.hardwarePreset)
                                        : opt.computeCalibration;
    ropt.calibration
        = calibration.empty() ? "" : fs::absolute(calibration).lexically_normal().string();

    OutputDir dir(opt.outDir);
    json fitJson;
    const std::optional<FrontendFit> fit = FitFrontendCosts(points, ropt, dir, err, fitJson);
    Comparison c;
    for (BenchmarkPoint& p : points)
    {
        ComparePoint(p, opt, ropt, calibration, fit, dir, err, c);
    }
    const std::string medians = MediansTable(points, c);
    json oddCounts;
    std::vector<const BenchmarkResult*> results;
    for (const BenchmarkPoint& p : points)
    {
        results.push_back(&p.result);
    }
    const std::vector<std::string> odd = BenchmarkOddities(results, oddCounts);
    json& report = c.report;
    report["oddities"] = {{"counts", oddCounts}, {"list", odd}};
    report["frontend_fit"] = fitJson;
    report["fitted_on_concurrency"] = opt.fittedOn.empty() ? json(nullptr) : json(opt.fittedOn);
    report["deployment"]
        = {{"model", dep.modelName},
           {"hardware", dep.hardwarePreset},
           {"vllm_version", dep.vllmVersion.empty() ? "newest" : dep.vllmVersion},
           {"backend", opt.backend},
           {"compute_calibration",
            calibration.empty() ? json(nullptr) : json(RelativeTo(calibration, opt.outDir))}};

    const std::string md = ValidationMarkdown(opt, dep, points, fit, medians, c, odd);
    dir.Write("comparison.csv", c.csv);
    dir.Write("validation.md", md);
    dir.Write("summary.json", report.dump(2) + "\n");
    json scenarios = json::object();
    for (const BenchmarkPoint& p : points)
    {
        scenarios[p.result.label] = p.replay.scenario;
    }
    dir.Write("provenance.json", ProvenanceText(scenarios, opt.ns3Args));
    dir.Commit();
    out << md;
    out << "outputs: " << opt.outDir << "/comparison.csv, " << opt.outDir << "/summary.json, "
        << opt.outDir << "/validation.md\n";
    return c.allComplete ? 0 : 3;
}

} // namespace fabricsim
