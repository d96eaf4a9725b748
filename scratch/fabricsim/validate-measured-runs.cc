#include "validate-measured-runs.h"

#include "cli-options.h"
#include "fabric-scenario.h"
#include "file-reader.h"
#include "input-error.h"
#include "measured-run-config.h"
#include "measured-run.h"
#include "output-writer.h"
#include "serving-comparison.h"
#include "validate-serving-command.h"

#include "ns3/inference-runner.h"
#include "ns3/run-provenance.h"

#include <filesystem>
#include <map>
#include <set>
#include <sstream>

namespace fabricsim
{

using nlohmann::json;

namespace
{

/// The markdown table of one run.
std::string
RunTable(const MeasuredRunConfig& run,
         const std::string& preset,
         const std::vector<MetricComparison>& rows,
         bool complete)
{
    std::ostringstream o;
    o << "### " << run.label << ": " << run.model << ", " << run.Gpus() << " x " << preset
      << " (tp " << run.tp << ", pp " << run.pp << ", dp " << run.dp
      << (run.expertParallel ? ", expert parallel" : "") << ")\n\n";
    if (!complete)
    {
        o << "INCOMPLETE: the simulated figures are over the finished requests only.\n\n";
    }
    o << "| metric | measured | fabricsim | error | other sim | its error |\n";
    o << "|---|---:|---:|---:|---:|---:|\n";
    for (const MetricComparison& c : rows)
    {
        const int digits = c.name == "Throughput" ? 0 : 1;
        o << "| " << c.name << (c.name == "Throughput" ? " (tok/s)" : " (ms)") << " | "
          << Fixed(c.measured, digits) << " | " << Fixed(c.simulated, digits) << " | "
          << SignedPercent(c.ErrorPct()) << " | " << (c.other ? Fixed(*c.other, digits) : "-")
          << " | " << (c.OtherErrorPct() ? SignedPercent(*c.OtherErrorPct()) : "-") << " |\n";
    }
    return o.str();
}

/// The hardware a scenario names: its preset, also when --set made it an object
/// ({"preset": ..., "compute_calibration": ...}); else the object's name, else "custom".
std::string
HardwareLabel(const json& hw)
{
    if (hw.is_string())
    {
        return hw.get<std::string>();
    }
    for (const char* key : {"preset", "name"})
    {
        if (hw.is_object() && hw.contains(key) && hw[key].is_string())
        {
            return hw[key].get<std::string>();
        }
    }
    return "custom";
}

/// \p word as one shell word.
std::string
ShellWord(const std::string& word)
{
    if (!word.empty()
        && word.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
                                  "_./:=+-,@%")
               == std::string::npos)
    {
        return word;
    }
    std::string q = "'";
    for (char c : word)
    {
        q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    }
    return q + "'";
}

/// The `fabricsim run` command that reproduces a run's simulated figures: its scenario as
/// written, on the backend and with the attribute overrides this command used.
std::string
ReproduceCommand(const ValidateServingOptions& opt, const std::string& label)
{
    std::string cmd = "fabricsim run " + ShellWord(opt.outDir + "/" + label + ".scenario.json")
                      + " --backend " + ShellWord(opt.backend) + " --out "
                      + ShellWord(opt.outDir + "/" + label + ".run");
    for (const std::string& a : opt.ns3Args)
    {
        cmd += " " + ShellWord(a);
    }
    return cmd;
}

} // namespace

int
RunValidateMeasuredRuns(const ValidateServingOptions& opt, std::ostream& out, std::ostream& err)
{
    // Every run is read and its scenario built before anything runs or is written.
    struct Prepared
    {
        MeasuredRunConfig config;
        std::vector<MeasuredRequest> requests;
        std::map<std::string, UpstreamFigure> upstream;
        bool hasUpstream = false;
        json scenario;           ///< as written into DIR (its calibration path relative to DIR)
        std::string calibration; ///< the calibration's absolute path, for the run itself
    };
    std::vector<Prepared> runs;
    std::set<std::string> labels;
    for (const std::string& dir : opt.runs)
    {
        Prepared p;
        p.config = ReadMeasuredRunConfig(dir);
        if (!labels.insert(p.config.label).second)
        {
            throw InputError(kCommandLineSource,
                             dir,
                             "run directories with distinct last components",
                             "a second run named \"" + p.config.label + "\"");
        }
        p.requests = ReadMeasuredRequests(dir + "/vllm/requests.jsonl");
        const std::string summary = dir + "/validation/summary.txt";
        if (IsReadableRegularFile(summary))
        {
            p.upstream = ReadUpstreamSummary(summary);
            p.hasUpstream = true;
        }
        p.scenario = MeasuredRunScenario(p.config, p.config.label + ".requests.jsonl");
        const std::string calibration
            = opt.calibrationPerGpu
                  ? DefaultComputeCalibrationPath(p.scenario["hardware"].get<std::string>())
                  : opt.computeCalibration;
        if (!calibration.empty())
        {
            // Relative to DIR, where the scenario is written, so that it runs from there (an
            // absolute path of this machine would not carry to another's).
            const std::string fromDir
                = std::filesystem::absolute(calibration)
                      .lexically_normal()
                      .lexically_relative(std::filesystem::absolute(opt.outDir).lexically_normal())
                      .string();
            p.scenario["hardware"]
                = {{"preset", p.scenario["hardware"]}, {"compute_calibration", fromDir}};
            p.calibration = std::filesystem::absolute(calibration).lexically_normal().string();
        }
        for (const std::string& s : opt.sets)
        {
            ApplySet(p.scenario, s, "<command line>");
        }
        runs.push_back(std::move(p));
    }

    OutputDir dir(opt.outDir);
    json report = {{"runs", json::array()}};
    std::string tables;
    std::string reproduce;
    bool allComplete = true;
    for (Prepared& p : runs)
    {
        const std::string scenarioName = p.config.label + ".scenario.json";
        dir.Write(p.config.label + ".requests.jsonl", ArrivalTrace(p.requests));
        dir.Write(scenarioName, p.scenario.dump(2) + "\n");
        const std::string command = ReproduceCommand(opt, p.config.label);
        dir.Write(p.config.label + ".command", command + "\n");
        reproduce += "reproduce " + p.config.label + ": " + command + "\n";
        InferenceRunOptions iopt;
        iopt.backend = opt.backend;
        iopt.run.outDir = opt.outDir;
        iopt.run.ns3Args = opt.ns3Args;
        err << "validate-serving: " << p.config.label << " (" << p.requests.size()
            << " requests)\n";
        // Run from the staging folder, where the arrivals are until the commit: the
        // calibration by its absolute path there.
        json staged = p.scenario;
        if (!p.calibration.empty() && staged["hardware"].is_object()
            && staged["hardware"].contains("compute_calibration"))
        {
            staged["hardware"]["compute_calibration"] = p.calibration;
        }
        InferenceRunResult r = ExecuteInferenceScenario(staged, dir.Path(scenarioName), iopt, err);
        const ServingLatencies measured = LatenciesOf(p.requests);
        const ServingLatencies simulated = LatenciesOf(AsMeasuredRequests(r.serving));
        const std::vector<MetricComparison> rows
            = CompareServing(measured, simulated, p.hasUpstream ? &p.upstream : nullptr);
        dir.Write(p.config.label + ".per-request.csv", PerRequestCsv(p.requests, r.serving));
        const bool complete = r.stuck.empty();
        allComplete = allComplete && complete;
        const std::string preset = HardwareLabel(p.scenario["hardware"]);
        tables += RunTable(p.config, preset, rows, complete) + "\n";
        report["runs"].push_back({{"run", p.config.label},
                                  {"dir", p.config.dir},
                                  {"model", p.config.model},
                                  {"vllm_version", p.config.vllmVersion},
                                  {"device", p.config.device},
                                  {"device_source", p.config.deviceSource},
                                  {"hardware_preset", preset},
                                  {"engine_defaults_assumed", p.config.assumed},
                                  {"prefix_caching_measured", p.config.prefixCaching},
                                  {"scenario", scenarioName},
                                  {"requests", p.requests.size()},
                                  {"complete", complete},
                                  {"metrics", ComparisonJson(rows)},
                                  {"simulation", r.summary}});
    }
    const std::string text
        = "# Measured vLLM serving runs replayed by fabricsim\n\n"
          "Error = (fabricsim - measured) / measured; the other simulator's error is against the "
          "measured column of its own summary.txt. Metrics in the runs' definitions: TTFT = "
          "first token - queued, TPOT = (last - first) / (output - 1), E2E = last token - queued, "
          "throughput = output tokens / (last token - first queued).\n\n"
          + tables;
    dir.Write("validation.md", text);
    dir.Write("summary.json", report.dump(2) + "\n");
    json scenarios = json::object();
    for (const Prepared& p : runs)
    {
        scenarios[p.config.label] = p.scenario;
    }
    dir.Write("provenance.json", ProvenanceText(scenarios, opt.ns3Args));
    dir.Commit();
    out << text << reproduce;
    out << "outputs: " << opt.outDir << "/summary.json, " << opt.outDir << "/validation.md\n";
    return allComplete ? 0 : 3;
}

} // namespace fabricsim
