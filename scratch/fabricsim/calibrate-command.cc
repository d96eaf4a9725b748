#include "calibrate-command.h"

#include "busbw-plot.h"
#include "calibration-metrics.h"
#include "cli-options.h"
#include "input-error.h"
#include "moe-report.h"
#include "nccl-report.h"
#include "output-writer.h"

#include "ns3/fabric-backend.h"
#include "ns3/run-provenance.h"

#include <chrono>
#include <iomanip>
#include <iostream>
#include <sstream>

namespace fabricsim
{

namespace
{

const char* kCli = kCommandLineSource;

std::vector<std::string>
SplitList(const std::string& v, const std::string& opt)
{
    std::vector<std::string> out;
    std::stringstream ss(v);
    std::string item;
    while (std::getline(ss, item, ','))
    {
        if (item.empty())
        {
            throw fabricsim::InputError(
                kCli, opt, "a comma-separated list without empty items", "\"" + v + "\"");
        }
        out.push_back(item);
    }
    return out;
}

} // namespace

CalibrateCommandOptions
ParseCalibrateArgs(const std::vector<std::string>& a)
{
    CalibrateCommandOptions o;
    for (size_t i = 1; i < a.size(); ++i)
    {
        std::string v;
        if (TakeOption(a, i, "--scenario", v))
        {
            o.scenario = v;
        }
        else if (TakeOption(a, i, "--fit", v))
        {
            o.fit = SplitList(v, "--fit");
        }
        else if (TakeOption(a, i, "--params", v))
        {
            o.params = v;
        }
        else if (TakeOption(a, i, "--out", v))
        {
            o.outDir = v;
        }
        else if (TakeOption(a, i, "--backend", v))
        {
            ParseBackendKind(v, kCli, "--backend");
            o.backend = v;
        }
        else if (TakeOption(a, i, "--coll", v))
        {
            o.filter.collectives = SplitList(v, "--coll");
            for (const std::string& c : o.filter.collectives)
            {
                CollectiveKind k;
                if (!CollectiveOfTestName(c, k))
                {
                    throw fabricsim::InputError(kCli,
                                                "--coll",
                                                "collective names (allreduce, allgather, ...)",
                                                "\"" + c + "\"");
                }
            }
            o.filter.collectiveHint = o.filter.collectives.front();
        }
        else if (TakeOption(a, i, "--ranks", v))
        {
            for (const std::string& r : SplitList(v, "--ranks"))
            {
                o.filter.ranks.push_back(uint32_t(CountOption(r, "--ranks", 1, 1 << 20)));
            }
        }
        else if (TakeOption(a, i, "--dtype", v))
        {
            o.filter.dtype = v;
        }
        else if (TakeOption(a, i, "--min-bytes", v))
        {
            o.filter.minBytes = ParseNcclSize(v, "--min-bytes");
        }
        else if (TakeOption(a, i, "--max-bytes", v))
        {
            o.filter.maxBytes = ParseNcclSize(v, "--max-bytes");
        }
        else if (TakeOption(a, i, "--fit-min-bytes", v))
        {
            o.fitMinBytes = ParseNcclSize(v, "--fit-min-bytes");
        }
        else if (TakeOption(a, i, "--max-evals", v))
        {
            o.maxEvals = int(CountOption(v, "--max-evals", 1, 10000));
        }
        else if (TakeOption(a, i, "--deepep-dispatch-dtype", v))
        {
            if (v != "fp8" && v != "bf16")
            {
                throw fabricsim::InputError(
                    kCli, "--deepep-dispatch-dtype", "fp8 or bf16", "\"" + v + "\"");
            }
            o.deepepDispatchDtype = v;
        }
        else if (TakeOption(a, i, "--deepep-mode", v))
        {
            if (v != "ll" && v != "normal")
            {
                throw fabricsim::InputError(kCli, "--deepep-mode", "ll or normal", "\"" + v + "\"");
            }
            o.filter.deepepMode = v;
        }
        else if (TakeOption(a, i, "--set", v))
        {
            o.sets.push_back(v);
        }
        else if (a[i].rfind("--ns3::", 0) == 0)
        {
            o.ns3Args.push_back(a[i]);
        }
        else if (!a[i].empty() && a[i][0] != '-')
        {
            o.files.push_back(a[i]);
        }
        else
        {
            throw fabricsim::InputError(kCli,
                                        a[i],
                                        "a measurement file or an option of 'fabricsim calibrate'",
                                        "\"" + a[i] + "\"");
        }
    }
    if (o.files.empty())
    {
        throw fabricsim::InputError(
            kCli, "MEASUREMENTS", "measurement files (nccl-tests logs or CSV tables)", "nothing");
    }
    if (o.scenario.empty())
    {
        throw fabricsim::InputError(
            kCli, "--scenario", "the scenario describing the measured system", "nothing");
    }
    if (o.filter.minBytes > o.filter.maxBytes)
    {
        throw fabricsim::InputError(
            kCli, "--min-bytes", "at most --max-bytes", std::to_string(o.filter.minBytes));
    }
    return o;
}

namespace
{

/// One line of the error table: group, points, MAPE and worst point.
void
PrintErrorLine(std::ostream& out, const std::string& name, const nlohmann::json& s)
{
    out << "   " << std::setw(35) << std::left << name << std::right << std::setw(6)
        << s["points"].get<size_t>() << std::setw(9) << s["mape_pct"].get<double>() << std::setw(10)
        << s["worst_pct"].get<double>() << "\n";
}

void
PrintReport(std::ostream& out,
            const CalibrateCommandOptions& opt,
            const CalibrationInputs& in,
            const CalibrationOutcome& o,
            const nlohmann::json& summary)
{
    out << std::fixed << std::setprecision(2);
    out << "# fabricsim calibrate: " << in.points.collectives.size() << " collective points, "
        << in.points.moe.size() << " DeepEP points on " << summary["scenario"].get<std::string>()
        << " (" << opt.backend << ")\n";
    for (const auto& [k, v] : o.fit.fitted)
    {
        out << "# fitted " << k << " = " << v << "\n";
    }
    if (!o.results.empty())
    {
        const nlohmann::json& e = summary["error"];
        out << "#  group                              points   MAPE %   worst %\n";
        PrintErrorLine(out, "all", e["all"]);
        for (auto it = e["by_size"].begin(); it != e["by_size"].end(); ++it)
        {
            PrintErrorLine(out, it.key(), *it);
        }
        for (auto it = e["by_collective"].begin(); it != e["by_collective"].end(); ++it)
        {
            PrintErrorLine(out, it.key(), *it);
        }
    }
    if (summary.contains("moe"))
    {
        for (auto it = summary["moe"].begin(); it != summary["moe"].end(); ++it)
        {
            PrintErrorLine(out, it.key(), *it);
        }
    }
}

std::string
JsonText(const nlohmann::json& j)
{
    return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

} // namespace

int
RunCalibrateCommand(const CalibrateCommandOptions& opt, std::ostream& out, std::ostream& err)
{
    const auto wall0 = std::chrono::steady_clock::now();
    // Inputs first: measurements, scenario, parameters; nothing is written before they check out.
    const CalibrationInputs in = ReadCalibrationInputs(opt);
    OutputDir dir(opt.outDir);
    PredictorOptions popt;
    popt.scenario = opt.scenario;
    popt.backend = ParseBackendKind(opt.backend, kCli, "--backend");
    popt.deepepDispatchDtype = opt.deepepDispatchDtype;
    popt.ns3Args = opt.ns3Args;
    Predictor pred(popt);
    const CalibrationOutcome o = PredictAndFit(opt, in, pred);
    nlohmann::json overlay;
    nlohmann::json summary = CalibrationSummary(opt, in, o, overlay);
    if (!overlay.is_null())
    {
        dir.Write("overlay.json", JsonText(overlay));
    }
    if (!o.results.empty())
    {
        dir.Write("points.csv", PointsCsv(o.results));
        dir.Write("busbw.svg", BusBwPlotSvg(o.results, "fabricsim calibrate: " + in.name));
    }
    if (!in.points.moe.empty())
    {
        dir.Write("moe.csv", MoeCsv(in.points.moe, o.moe));
    }
    summary["simulations"] = pred.Runs();
    dir.Write("summary.json", JsonText(summary));
    const double wall
        = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    dir.Write("timing.json", JsonText(nlohmann::json{{"wall_s", wall}}));
    PrintReport(out, opt, in, o, summary);
    (void)err;
    dir.Write("provenance.json",
              ProvenanceText(LoadScenarioJson(opt.scenario, opt.sets), opt.ns3Args));
    dir.Commit();
    return 0;
}

} // namespace fabricsim
