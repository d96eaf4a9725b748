#include "benchmark-validation.h"

#include "fabric-scenario.h"
#include "file-reader.h"
#include "hardware-spec.h"
#include "inference-runner.h"
#include "input-error.h"
#include "model-spec.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>

namespace fabricsim
{

using nlohmann::json;

namespace
{

/// Errors in the options name the command line, where they come from.
const char* kCli = "<command line>";

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

} // namespace

BenchmarkDeployment
StatedDeployment(const BenchmarkDeploymentArgs& opt)
{
    if (opt.model.empty() || opt.hardware.empty())
    {
        throw InputError(kCli,
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
            throw InputError(kCli,
                             "--model",
                             "a model preset (" + Joined(presets) + ") or a readable config.json",
                             "\"" + opt.model + "\"");
        }
        dep.model = ModelSpec::FromFile(opt.model);
        dep.modelField
            = {{"config", std::filesystem::absolute(opt.model).lexically_normal().string()}};
    }
    dep.modelName = opt.model;
    const std::vector<std::string> gpus = HardwareSpec::PresetNames();
    if (std::find(gpus.begin(), gpus.end(), opt.hardware) == gpus.end())
    {
        throw InputError(kCli,
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
            throw InputError(
                kCli, "--parallel", "tp<N>, tep<N>, dep<N> or dp<N>", "\"" + opt.parallel + "\"");
        }
    }
    if (!IsVllmVersion(opt.vllmVersion))
    {
        throw InputError(kCli,
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

std::vector<BenchmarkPoint>
ReadBenchmarkPoints(const std::vector<std::string>& inputs,
                    const BenchmarkDeployment& dep,
                    const BenchmarkRunOptions& opt)
{
    std::vector<std::string> files;
    for (const std::string& arg : inputs)
    {
        if (std::filesystem::is_directory(arg))
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
    std::vector<BenchmarkPoint> points;
    std::set<std::string> labels;
    for (const std::string& f : files)
    {
        BenchmarkPoint p;
        p.result = ReadBenchmarkResult(f);
        if (!labels.insert(p.result.label).second)
        {
            throw InputError(
                kCli, f, "result files with distinct names", "a second \"" + p.result.label + "\"");
        }
        p.replay = BenchmarkReplayScenario(p.result, dep);
        for (const std::string& s : opt.sets)
        {
            ApplySet(p.replay.scenario, s, kCli);
        }
        p.fit = (opt.fitConcurrency > 0 && p.result.concurrency == opt.fitConcurrency)
                || std::count(opt.fittedOn.begin(), opt.fittedOn.end(), p.result.concurrency) > 0;
        if (opt.fitConcurrency > 0 && p.replay.scenario["serving"].contains("execution")
            && (p.replay.scenario["serving"]["execution"].contains("request_overhead")
                || p.replay.scenario["serving"]["execution"].contains("prompt_token_overhead")))
        {
            throw InputError(kCli,
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
                         [c](const BenchmarkPoint& p) { return p.result.concurrency == c; }))
        {
            throw InputError(kCli,
                             opt.fitConcurrency > 0 ? "--fit-frontend" : "--fitted-on",
                             "a concurrency some result was measured at",
                             "conc=" + std::to_string(c));
        }
    }
    return points;
}

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

json
RunBenchmarkPoint(BenchmarkPoint& p,
                  const BenchmarkRunOptions& opt,
                  const OutputDir& dir,
                  const FrontendFit* overheads,
                  std::ostream& err)
{
    json staged = p.replay.scenario;
    if (!opt.calibration.empty())
    {
        staged["hardware"]
            = {{"preset", staged["hardware"]}, {"compute_calibration", opt.calibration}};
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

std::optional<FrontendFit>
FitFrontendCosts(std::vector<BenchmarkPoint>& points,
                 const BenchmarkRunOptions& opt,
                 const OutputDir& dir,
                 std::ostream& err,
                 json& fitJson)
{
    fitJson = nullptr;
    if (opt.fitConcurrency == 0)
    {
        return std::nullopt;
    }
    std::vector<double> x;
    std::vector<double> y;
    json residuals = json::array();
    for (BenchmarkPoint& p : points)
    {
        if (!p.fit)
        {
            continue;
        }
        const json s = RunBenchmarkPoint(p, opt, dir, nullptr, err);
        const double sim = SimulatedFigure(s, "median_ttft_ms").value();
        const double meas = p.result.measured.at("median_ttft_ms");
        x.push_back(double(p.result.inputTokens));
        y.push_back((meas - sim) / 1e3);
        residuals.push_back({{"file", p.result.label},
                             {"input_tokens", p.result.inputTokens},
                             {"measured_median_ttft_ms", meas},
                             {"simulated_median_ttft_ms_without", sim}});
    }
    const FrontendFit fit = FitFrontend(x, y);
    fitJson = {{"points", residuals},
               {"concurrency", opt.fitConcurrency},
               {"request_overhead_s", fit.requestS},
               {"prompt_token_overhead_s", fit.perTokenS},
               {"constant_only", fit.constantOnly}};
    return fit;
}

} // namespace fabricsim
