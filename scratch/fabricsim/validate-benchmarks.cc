#include "validate-benchmarks.h"

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

/// A simulated figure by vLLM bench serve's name, from the run's summary.json.
std::optional<double>
SimulatedFigure(const json& summary, const std::string& name)
{
    static const std::map<std::string, std::string> kRates
        = {{"output_throughput", "generation_tokens_per_s"},
           {"request_throughput", "requests_per_s"},
           {"input_throughput", "prompt_tokens_per_s"}};
    if (auto it = kRates.find(name); it != kRates.end())
    {
        return summary.at(it->second).get<double>();
    }
    static const std::regex kLatency("(mean|median|p90|p99)_(ttft|tpot|itl|e2el)_ms");
    std::smatch m;
    if (!std::regex_match(name, m, kLatency))
    {
        return std::nullopt;
    }
    const std::string stat = m[1].str() == "median" ? "p50" : m[1].str();
    const std::string metric = m[2].str() == "e2el" ? "e2e_ms" : m[2].str() + "_ms";
    return summary.at(metric).at(stat).get<double>();
}

double
ErrorPct(double measured, double simulated)
{
    if (measured == 0)
    {
        return simulated == 0 ? 0.0 : INFINITY;
    }
    return (simulated - measured) / measured * 100.0;
}

double
Median(std::vector<double> v)
{
    if (v.empty())
    {
        return NAN;
    }
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/// \p names joined by ", ".
std::string
Joined(const std::vector<std::string>& names)
{
    std::string list;
    for (const std::string& n : names)
    {
        list += (list.empty() ? "" : ", ") + n;
    }
    return list;
}

/// \p path relative to \p dir, where a scenario that names it is written.
std::string
RelativeTo(const std::string& path, const std::string& dir)
{
    return fs::absolute(path)
        .lexically_normal()
        .lexically_relative(fs::absolute(dir).lexically_normal())
        .string();
}

/// The deployment the options state; InputError naming the option.
BenchmarkDeployment
Deployment(const ValidateServingOptions& opt)
{
    if (opt.model.empty() || opt.hardware.empty())
    {
        throw InputError(kCommandLineSource,
                         opt.model.empty() ? "--model" : "--hardware",
                         "--model CONFIG.json|PRESET and --hardware PRESET with benchmark results",
                         "none");
    }
    BenchmarkDeployment dep;
    const std::vector<std::string> presets = ModelSpec::PresetNames();
    if (std::find(presets.begin(), presets.end(), opt.model) != presets.end())
    {
        dep.model = ModelSpec::Preset(opt.model);
        dep.modelField = opt.model;
    }
    else
    {
        if (!IsReadableRegularFile(opt.model))
        {
            throw InputError(kCommandLineSource,
                             "--model",
                             "a model preset (" + Joined(presets) + ") or a readable config.json",
                             "\"" + opt.model + "\"");
        }
        dep.model = ModelSpec::FromFile(opt.model);
        dep.modelField = {{"config", fs::absolute(opt.model).lexically_normal().string()}};
    }
    dep.modelName = opt.model;
    const std::vector<std::string> gpus = HardwareSpec::PresetNames();
    if (std::find(gpus.begin(), gpus.end(), opt.hardware) == gpus.end())
    {
        throw InputError(kCommandLineSource,
                         "--hardware",
                         "a hardware preset (" + Joined(gpus) + ")",
                         "\"" + opt.hardware + "\"");
    }
    dep.hardwarePreset = opt.hardware;
    dep.gpus = opt.gpus;
    if (!opt.parallel.empty())
    {
        dep.parallel = ParseParallelTag(opt.parallel);
        if (!dep.parallel)
        {
            throw InputError(kCommandLineSource,
                             "--parallel",
                             "tp<N>, tep<N>, dep<N> or dp<N>",
                             "\"" + opt.parallel + "\"");
        }
    }
    if (!IsVllmVersion(opt.vllmVersion))
    {
        throw InputError(kCommandLineSource,
                         "--vllm-version",
                         "a vLLM version (0.11.0, v0.24.0rc1) or nightly",
                         "\"" + opt.vllmVersion + "\"");
    }
    dep.vllmVersion = opt.vllmVersion;
    if (opt.warmups >= 0)
    {
        dep.warmups = uint64_t(opt.warmups);
    }
    return dep;
}

/// \p scenario's serving.execution frontend costs set to \p f (seconds, 9 digits).
void
SetFrontendCosts(json& scenario, const FrontendFit& f)
{
    char a[64];
    char b[64];
    std::snprintf(a, sizeof a, "%.9gs", f.requestS);
    std::snprintf(b, sizeof b, "%.9gs", f.perTokenS);
    scenario["serving"]["execution"]["request_overhead"] = a;
    scenario["serving"]["execution"]["prompt_token_overhead"] = b;
}

/// One result and its replay, read and built before anything runs.
struct Point
{
    BenchmarkResult result;
    BenchmarkReplay replay;
    bool fit = false; ///< one of the points the frontend costs are fitted on
    json summary;     ///< the simulated run's summary.json
    bool complete = true;
};

/// Runs \p p's scenario (\p overheads: request and per-token seconds, or none) with the model
/// config and calibration by absolute path; returns its summary.
json
RunPoint(Point& p,
         const ValidateServingOptions& opt,
         const std::string& calibration,
         const OutputDir& dir,
         const FrontendFit* overheads,
         std::ostream& err)
{
    json staged = p.replay.scenario;
    if (!calibration.empty())
    {
        staged["hardware"] = {{"preset", staged["hardware"]}, {"compute_calibration", calibration}};
    }
    if (overheads)
    {
        SetFrontendCosts(staged, *overheads);
    }
    InferenceRunOptions iopt;
    iopt.backend = opt.backend;
    iopt.run.outDir = opt.outDir;
    iopt.run.ns3Args = opt.ns3Args;
    err << "validate-serving: " << p.result.label
        << (!overheads && opt.fitConcurrency > 0 ? " (frontend fit, no overhead)" : "") << "\n";
    InferenceRunResult r
        = ExecuteInferenceScenario(staged, dir.Path(p.result.label + ".scenario.json"), iopt, err);
    p.complete = r.stuck.empty();
    return r.summary;
}

/// The grouping key of a sweep: the points that differ only in concurrency.
std::string
SweepKey(const BenchmarkResult& r)
{
    return (r.parallelTag.empty() ? std::string("-") : r.parallelTag) + " ISL "
           + std::to_string(r.inputTokens) + " OSL " + std::to_string(r.outputTokens);
}

/// Little's law's in-flight count below this fraction of C marks a point's latencies skewed.
constexpr double kSkewedLoop = 0.8;

/// The data's own oddities, counted per sweep (points alike but for C, by rising C): median
/// TPOT or output throughput falling as C rises, the lowest C's median TTFT above the next
/// one's (a cold first run), and skewed latencies: in a closed loop of C, Little's law makes
/// the mean E2E C / request rate, so request rate x median E2E below kSkewedLoop C says the
/// median sits far below the mean. Requests alike in length (a random dataset of one ISL and
/// OSL) are served alike in the model, whose median stays near its mean; such a point cannot
/// have both its throughput and its median E2E within sqrt(C / (rate x median)) - 1.
std::vector<std::string>
Oddities(const std::vector<Point>& points, json& counts)
{
    std::map<std::string, std::vector<const BenchmarkResult*>> sweeps;
    for (const Point& p : points)
    {
        if (p.result.concurrency > 0)
        {
            sweeps[SweepKey(p.result)].push_back(&p.result);
        }
    }
    std::vector<std::string> lines;
    uint64_t tpot = 0;
    uint64_t thr = 0;
    uint64_t cold = 0;
    uint64_t skewed = 0;
    auto fig = [](const BenchmarkResult* r, const std::string& k)
    {
        auto it = r->measured.find(k);
        return it == r->measured.end() ? NAN : it->second;
    };
    for (auto& [key, v] : sweeps)
    {
        std::sort(
            v.begin(), v.end(), [](auto* a, auto* b) { return a->concurrency < b->concurrency; });
        for (size_t i = 1; i < v.size(); ++i)
        {
            const std::string step = "C " + std::to_string(v[i - 1]->concurrency) + " -> "
                                     + std::to_string(v[i]->concurrency);
            if (fig(v[i], "median_tpot_ms") < fig(v[i - 1], "median_tpot_ms"))
            {
                ++tpot;
                lines.push_back(key + ", " + step + ": median TPOT falls "
                                + Fixed(fig(v[i - 1], "median_tpot_ms"), 1) + " -> "
                                + Fixed(fig(v[i], "median_tpot_ms"), 1) + " ms");
            }
            if (fig(v[i], "output_throughput") < fig(v[i - 1], "output_throughput"))
            {
                ++thr;
                lines.push_back(key + ", " + step + ": output throughput falls "
                                + Fixed(fig(v[i - 1], "output_throughput"), 0) + " -> "
                                + Fixed(fig(v[i], "output_throughput"), 0) + " tok/s");
            }
        }
        for (const BenchmarkResult* r : v)
        {
            const double inFlight = fig(r, "request_throughput") * fig(r, "median_e2el_ms") / 1e3;
            if (inFlight < kSkewedLoop * r->concurrency) // false when either figure is missing
            {
                ++skewed;
                lines.push_back(key + ", C " + std::to_string(r->concurrency)
                                + ": request rate x median E2E is " + Fixed(inFlight, 1)
                                + " requests in flight (" + Fixed(inFlight / r->concurrency, 2)
                                + " C): latencies skewed far above the median");
            }
        }
        if (v.size() > 1 && fig(v[0], "median_ttft_ms") > fig(v[1], "median_ttft_ms"))
        {
            ++cold;
            lines.push_back(key + ": median TTFT at C " + std::to_string(v[0]->concurrency) + " ("
                            + Fixed(fig(v[0], "median_ttft_ms"), 0) + " ms) above C "
                            + std::to_string(v[1]->concurrency) + "'s ("
                            + Fixed(fig(v[1], "median_ttft_ms"), 0) + " ms): a cold first run");
        }
    }
    counts = {{"sweeps", sweeps.size()},
              {"tpot_falls_with_c", tpot},
              {"throughput_falls_with_c", thr},
              {"cold_first_point", cold},
              {"skewed_latencies", skewed}};
    return lines;
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

FrontendFit
FitFrontend(const std::vector<double>& x, const std::vector<double>& y)
{
    FrontendFit f;
    const size_t n = x.size();
    if (n == 0)
    {
        return f;
    }
    double mx = 0;
    double my = 0;
    for (size_t i = 0; i < n; ++i)
    {
        mx += x[i] / double(n);
        my += y[i] / double(n);
    }
    double sxx = 0;
    double sxy = 0;
    for (size_t i = 0; i < n; ++i)
    {
        sxx += (x[i] - mx) * (x[i] - mx);
        sxy += (x[i] - mx) * (y[i] - my);
    }
    if (sxx <= 1e-12 * std::max(1.0, mx * mx))
    {
        f.constantOnly = true;
        f.requestS = std::max(0.0, my);
        return f;
    }
    f.perTokenS = sxy / sxx;
    f.requestS = my - f.perTokenS * mx;
    // Costs are not negative: a clamped one leaves the other to the constrained least squares.
    if (f.perTokenS < 0)
    {
        f.perTokenS = 0;
        f.requestS = std::max(0.0, my);
    }
    else if (f.requestS < 0)
    {
        double xx = 0;
        double xy = 0;
        for (size_t i = 0; i < n; ++i)
        {
            xx += x[i] * x[i];
            xy += x[i] * y[i];
        }
        f.requestS = 0;
        f.perTokenS = xx > 0 ? std::max(0.0, xy / xx) : 0.0;
    }
    return f;
}

int
RunValidateBenchmarks(const ValidateServingOptions& opt, std::ostream& out, std::ostream& err)
{
    const BenchmarkDeployment dep = Deployment(opt);
    std::vector<std::string> files;
    for (const std::string& arg : opt.runs)
    {
        if (fs::is_directory(arg))
        {
            for (const std::string& f : BenchmarkResultFiles(arg))
            {
                files.push_back(f);
            }
        }
        else
        {
            files.push_back(arg);
        }
    }
    std::vector<Point> points;
    std::set<std::string> labels;
    for (const std::string& f : files)
    {
        Point p;
        p.result = ReadBenchmarkResult(f);
        if (!labels.insert(p.result.label).second)
        {
            throw InputError(kCommandLineSource,
                             f,
                             "result files with distinct names",
                             "a second \"" + p.result.label + "\"");
        }
        p.replay = BenchmarkReplayScenario(p.result, dep);
        for (const std::string& s : opt.sets)
        {
            ApplySet(p.replay.scenario, s, kCommandLineSource);
        }
        p.fit = (opt.fitConcurrency > 0 && p.result.concurrency == opt.fitConcurrency)
                || std::count(opt.fittedOn.begin(), opt.fittedOn.end(), p.result.concurrency) > 0;
        if (opt.fitConcurrency > 0 && p.replay.scenario["serving"].contains("execution")
            && (p.replay.scenario["serving"]["execution"].contains("request_overhead")
                || p.replay.scenario["serving"]["execution"].contains("prompt_token_overhead")))
        {
            throw InputError(kCommandLineSource,
                             "--fit-frontend",
                             "either --fit-frontend or --set serving.execution.*_overhead",
                             "both");
        }
        points.push_back(std::move(p));
    }
    // Every declared C names points some result was measured at.
    std::vector<uint32_t> declared = opt.fittedOn;
    if (opt.fitConcurrency > 0)
    {
        declared.push_back(opt.fitConcurrency);
    }
    for (uint32_t c : declared)
    {
        if (std::none_of(points.begin(),
                         points.end(),
                         [c](const Point& p) { return p.result.concurrency == c; }))
        {
            throw InputError(kCommandLineSource,
                             opt.fitConcurrency > 0 ? "--fit-frontend" : "--fitted-on",
                             "a concurrency some result was measured at",
                             "conc=" + std::to_string(c));
        }
    }
    const std::string calibration = opt.calibrationPerGpu
                                        ? DefaultComputeCalibrationPath(dep.hardwarePreset)
                                        : opt.computeCalibration;
    const std::string calibrationAbs
        = calibration.empty() ? "" : fs::absolute(calibration).lexically_normal().string();

    OutputDir dir(opt.outDir);
    // Item 5 of the validation: the frontend's costs, fitted on the declared points run without
    // them (TTFT residual = request cost + per-token cost x input length), then every point
    // run with them.
    std::optional<FrontendFit> fit;
    json fitJson = nullptr;
    if (opt.fitConcurrency > 0)
    {
        std::vector<double> x;
        std::vector<double> y;
        json residuals = json::array();
        for (Point& p : points)
        {
            if (!p.fit)
            {
                continue;
            }
            const json s = RunPoint(p, opt, calibrationAbs, dir, nullptr, err);
            const double sim = SimulatedFigure(s, "median_ttft_ms").value();
            const double meas = p.result.measured.at("median_ttft_ms");
            x.push_back(double(p.result.inputTokens));
            y.push_back((meas - sim) / 1e3);
            residuals.push_back({{"file", p.result.label},
                                 {"input_tokens", p.result.inputTokens},
                                 {"measured_median_ttft_ms", meas},
                                 {"simulated_median_ttft_ms_without", sim}});
        }
        fit = FitFrontend(x, y);
        fitJson = {{"points", residuals},
                   {"concurrency", opt.fitConcurrency},
                   {"request_overhead_s", fit->requestS},
                   {"prompt_token_overhead_s", fit->perTokenS},
                   {"constant_only", fit->constantOnly}};
    }

    std::string csv = "file,role,metric,measured,simulated,error_pct\n";
    json report = {{"points", json::array()}};
    std::map<std::string, std::vector<double>> heldOut;
    std::map<std::string, std::vector<double>> all;
    std::ostringstream table;
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
    bool allComplete = true;
    for (Point& p : points)
    {
        const std::string role = p.fit ? "fit" : "held out";
        p.summary = RunPoint(p, opt, calibrationAbs, dir, fit ? &*fit : nullptr, err);
        allComplete = allComplete && p.complete;
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
            const double e = ErrorPct(measured, *sim);
            metrics[name] = {{"measured", measured}, {"fabricsim", *sim}, {"error_pct", e}};
            csv += p.result.label + "," + role + "," + name + "," + Fixed(measured, 4) + ","
                   + Fixed(*sim, 4) + "," + Fixed(e, 2) + "\n";
            all[name].push_back(std::fabs(e));
            if (!p.fit)
            {
                heldOut[name].push_back(std::fabs(e));
            }
        }
        table << "| " << p.result.label << (p.complete ? "" : " (INCOMPLETE)") << " | "
              << p.result.concurrency << " | " << p.result.inputTokens << " | "
              << p.result.outputTokens << " | " << role << " |";
        for (const std::string& k : kHeadline)
        {
            if (!metrics.contains(k))
            {
                table << " - | - | - |";
                continue;
            }
            const int digits = k == "output_throughput" ? 0 : 1;
            table << " " << Fixed(metrics[k]["measured"].get<double>(), digits) << " | "
                  << Fixed(metrics[k]["fabricsim"].get<double>(), digits) << " | "
                  << SignedPercent(metrics[k]["error_pct"].get<double>()) << " |";
        }
        table << "\n";
        report["points"].push_back({{"file", p.result.path},
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

    json medians = {{"held_out", json::object()}, {"all", json::object()}};
    std::ostringstream med;
    med << "| metric | median abs error, held out ("
        << (points.size()
            - size_t(
                std::count_if(points.begin(), points.end(), [](const Point& p) { return p.fit; })))
        << " points) | all (" << points.size() << ") |\n|---|---:|---:|\n";
    for (const auto& [name, v] : all)
    {
        const double h = heldOut.count(name) ? Median(heldOut[name]) : NAN;
        const double a = Median(v);
        if (!std::isnan(h))
        {
            medians["held_out"][name] = h;
        }
        medians["all"][name] = a;
        med << "| " << name << " | " << (std::isnan(h) ? std::string("-") : Fixed(h, 1) + "%")
            << " | " << Fixed(a, 1) << "% |\n";
    }
    json oddCounts;
    const std::vector<std::string> odd = Oddities(points, oddCounts);
    report["medians_abs_error_pct"] = medians;
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

    std::ostringstream md;
    md << "# Serving benchmark results replayed by fabricsim\n\n"
       << "Model " << dep.modelName << " on " << dep.hardwarePreset << ", the " << opt.backend
       << " backend. Error = (fabricsim - measured) / measured; figures in vLLM bench serve's "
          "definitions (TTFT from the client's send, TPOT = (E2E - TTFT) / (output - 1), "
          "throughput over the measured requests' duration).\n\n";
    if (fit)
    {
        md << "Frontend costs fitted on the "
           << std::count_if(points.begin(), points.end(), [](const Point& p) { return p.fit; })
           << " points at C = " << opt.fitConcurrency
           << " (median TTFT residual = request + per-token x ISL"
           << (fit->constantOnly ? ", one input length: request cost only" : "")
           << "): request_overhead " << Fixed(fit->requestS * 1e3, 1)
           << " ms, prompt_token_overhead " << Fixed(fit->perTokenS * 1e6, 2)
           << " us per token.\n\n";
    }
    else if (!opt.fittedOn.empty())
    {
        md << "Costs given by --set were fitted on the "
           << std::count_if(points.begin(), points.end(), [](const Point& p) { return p.fit; })
           << " points at C = " <<
            [&]
        {
            std::vector<std::string> cs;
            for (uint32_t c : opt.fittedOn)
            {
                cs.push_back(std::to_string(c));
            }
            return Joined(cs);
        }() << " (reported as fit, left out of the held-out medians).\n\n";
    }
    md << med.str() << "\n" << table.str() << "\n";
    md << "## The data's oddities (" << odd.size() << ", counted, not fitted)\n\n";
    for (const std::string& l : odd)
    {
        md << "- " << l << "\n";
    }
    dir.Write("comparison.csv", csv);
    dir.Write("validation.md", md.str());
    dir.Write("summary.json", report.dump(2) + "\n");
    json scenarios = json::object();
    for (const Point& p : points)
    {
        scenarios[p.result.label] = p.replay.scenario;
    }
    dir.Write("provenance.json", ProvenanceText(scenarios, opt.ns3Args));
    dir.Commit();
    out << md.str();
    out << "outputs: " << opt.outDir << "/comparison.csv, " << opt.outDir << "/summary.json, "
        << opt.outDir << "/validation.md\n";
    return allComplete ? 0 : 3;
}

} // namespace fabricsim
