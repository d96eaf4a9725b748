#include "calibrate-command.h"

#include "busbw-plot.h"
#include "calibrate-predictor.h"
#include "calibration-metrics.h"
#include "calibration-parameters.h"
#include "cli-options.h"
#include "executor-attributes.h"
#include "input-error.h"
#include "measurement-reader.h"
#include "nccl-report.h"
#include "nccl-tuner.h"
#include "nelder-mead.h"
#include "output-writer.h"
#include "unit-conversions.h"

#include "ns3/collective-measure.h"
#include "ns3/fabric-backend.h"
#include "ns3/fabric-setup.h"
#include "ns3/nccl-tuner-attributes.h"
#include "ns3/run-provenance.h"

#include <chrono>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>
#include <tuple>

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

nlohmann::json
WithParameters(nlohmann::json doc,
               const std::map<std::string, double>& values,
               const std::string& file)
{
    for (const std::string& s : ParameterAssignments(values, doc, file))
    {
        ApplySet(doc, s, file);
    }
    return doc;
}

double
Mape(const std::vector<MeasuredPoint>& pts, const std::vector<double>& pred, uint64_t minBytes)
{
    double sum = 0;
    size_t n = 0;
    for (size_t i = 0; i < pts.size(); ++i)
    {
        if (pts[i].bytes >= minBytes)
        {
            sum += std::fabs(pred[i] - pts[i].timeUs) / pts[i].timeUs;
            ++n;
        }
    }
    return n ? sum / double(n) * 100.0 : 0;
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
            o.colls = SplitList(v, "--coll");
            for (const std::string& c : o.colls)
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
            o.coll = o.colls.front();
        }
        else if (TakeOption(a, i, "--ranks", v))
        {
            for (const std::string& r : SplitList(v, "--ranks"))
            {
                o.ranks.push_back(uint32_t(CountOption(r, "--ranks", 1, 1 << 20)));
            }
        }
        else if (TakeOption(a, i, "--dtype", v))
        {
            o.dtype = v;
        }
        else if (TakeOption(a, i, "--min-bytes", v))
        {
            o.minBytes = ParseNcclSize(v, "--min-bytes");
        }
        else if (TakeOption(a, i, "--max-bytes", v))
        {
            o.maxBytes = ParseNcclSize(v, "--max-bytes");
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
            o.deepepMode = v;
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
    if (o.minBytes > o.maxBytes)
    {
        throw fabricsim::InputError(
            kCli, "--min-bytes", "at most --max-bytes", std::to_string(o.minBytes));
    }
    return o;
}

int
RunCalibrateCommand(const CalibrateCommandOptions& opt, std::ostream& out, std::ostream& err)
{
    const auto wall0 = std::chrono::steady_clock::now();
    // Inputs first: measurements, scenario, parameters; nothing is written before they check out.
    std::vector<MeasuredPoint> points;
    std::vector<MoePoint> moe;
    for (const std::string& f : opt.files)
    {
        MeasurementSet s = ReadMeasurements(f, opt.coll);
        for (const MeasuredPoint& p : s.collectives)
        {
            bool keep = p.bytes >= opt.minBytes && p.bytes <= opt.maxBytes
                        && (opt.dtype.empty() || p.dtype == opt.dtype);
            if (!opt.colls.empty())
            {
                bool any = false;
                for (const std::string& c : opt.colls)
                {
                    CollectiveKind k;
                    any = any || (CollectiveOfTestName(c, k) && k == p.kind);
                }
                keep = keep && any;
            }
            if (!opt.ranks.empty())
            {
                keep = keep
                       && std::find(opt.ranks.begin(), opt.ranks.end(), p.ranks) != opt.ranks.end();
            }
            if (keep)
            {
                points.push_back(p);
            }
        }
        for (const MoePoint& p : s.moe)
        {
            if (opt.deepepMode.empty() || p.mode == opt.deepepMode)
            {
                moe.push_back(p);
            }
        }
    }
    if (points.empty() && moe.empty())
    {
        throw fabricsim::InputError(
            kCli, "MEASUREMENTS", "at least one point left after the filters", "none");
    }
    nlohmann::json doc = LoadScenarioJson(opt.scenario, opt.sets);
    ConfigureSimulator(ParseFabricScenario(doc, opt.scenario), opt.ns3Args);
    const TunerConfig tuner = ns3::TunerConfigFromAttributes();
    std::map<std::string, double> applied;
    std::map<std::string, double> carried;
    double fromMhz = 0;
    if (!opt.params.empty())
    {
        applied = ReadOverlayParameters(opt.params);
        // GPU-side latencies were fitted in the other system's SM cycles.
        fromMhz = ReadOverlayGpuClock(opt.params);
        carried = CarryAcrossClocks(applied, fromMhz, tuner.gpuClockMhz);
        doc = WithParameters(doc, carried, opt.params);
    }
    FabricScenario sc = ParseFabricScenario(doc, opt.scenario);
    ConfigureSimulator(sc, opt.ns3Args);
    for (const MeasuredPoint& p : points)
    {
        if (p.ranks > sc.topology.NumHosts() || p.ranks < 2)
        {
            throw fabricsim::InputError(p.source,
                                        "ranks",
                                        "2 to the scenario's "
                                            + std::to_string(sc.topology.NumHosts()) + " hosts",
                                        std::to_string(p.ranks));
        }
    }
    if (!moe.empty() && sc.topology.NumHosts() < 8)
    {
        throw fabricsim::InputError(opt.scenario,
                                    "topology",
                                    "8 hosts for the DeepEP points (one node of 8 GPUs)",
                                    std::to_string(sc.topology.NumHosts()));
    }
    std::vector<FitDimension> dims;
    for (const std::string& name : opt.fit)
    {
        dims.push_back(CalibrationDimension(name, doc, "--fit"));
    }
    if (!dims.empty() && points.empty())
    {
        throw fabricsim::InputError(
            kCli, "--fit", "collective points to fit on", "only DeepEP points");
    }
    OutputDir dir(opt.outDir);

    Predictor pred(opt);
    std::map<std::string, double> fitted;
    FitResult fit;
    if (!dims.empty())
    {
        // Only the points the objective counts are simulated during the fit.
        std::vector<MeasuredPoint> fitPoints;
        for (const MeasuredPoint& p : points)
        {
            if (p.bytes >= opt.fitMinBytes)
            {
                fitPoints.push_back(p);
            }
        }
        if (fitPoints.empty())
        {
            throw fabricsim::InputError(
                kCli, "--fit-min-bytes", "collective points at or above it to fit on", "none");
        }
        fit = NelderMead(
            dims,
            [&](const std::vector<double>& x)
            {
                std::map<std::string, double> v;
                for (size_t i = 0; i < dims.size(); ++i)
                {
                    v[dims[i].name] = x[i];
                }
                return Mape(fitPoints,
                            pred.Collectives(WithParameters(doc, v, opt.scenario), fitPoints),
                            opt.fitMinBytes);
            },
            opt.maxEvals);
        for (size_t i = 0; i < dims.size(); ++i)
        {
            fitted[dims[i].name] = fit.best[i];
        }
        doc = WithParameters(doc, fitted, opt.scenario);
    }
    std::vector<PredictedPoint> results;
    std::map<std::string, size_t> chosen;
    if (!points.empty())
    {
        std::vector<std::string> choices;
        const std::vector<double> t = pred.Collectives(doc, points, &choices);
        for (size_t i = 0; i < points.size(); ++i)
        {
            results.push_back({points[i], t[i], choices[i]});
            chosen[choices[i]]++;
        }
    }

    nlohmann::json summary;
    summary["scenario"] = sc.name;
    summary["backend"] = opt.backend;
    summary["measurements"] = opt.files;
    summary["points"] = points.size();
    if (!applied.empty())
    {
        summary["applied_parameters"] = applied;
        if (carried != applied)
        {
            summary["carried_parameters"] = carried;
            summary["carried_clock_mhz"] = {{"from", fromMhz}, {"to", tuner.gpuClockMhz}};
        }
    }
    {
        std::vector<std::string> protos;
        for (Protocol p : tuner.protocols)
        {
            protos.push_back(ToString(p));
        }
        summary["tuner"]
            = {{"protocols", protos},
               {"in_network_reduction", tuner.inNetworkReduction},
               {"gpu_clock_mhz", tuner.gpuClockMhz},
               // the value the points ran with (fitted or carried)
               {"local_copy_efficiency", CurrentParameterValue("local_copy_efficiency", doc)},
               {"chosen", chosen}};
    }
    if (!results.empty())
    {
        summary["error"] = ErrorReport(results);
    }
    if (!fitted.empty())
    {
        std::map<std::string, double> start;
        for (const FitDimension& d : dims)
        {
            start[d.name] = d.start;
        }
        summary["fit"] = {{"parameters", fitted},
                          {"start", start},
                          {"objective_mape_pct", fit.value},
                          {"fit_min_bytes", opt.fitMinBytes},
                          {"evaluations", fit.evaluations}};
        nlohmann::json provenance = {{"scenario", opt.scenario},
                                     {"measurements", opt.files},
                                     {"points", points.size()},
                                     {"mape_pct", fit.value}};
        // The overlay's assignments act on the scenario as given (before the fit).
        nlohmann::json base = LoadScenarioJson(opt.scenario, opt.sets);
        if (!carried.empty())
        {
            base = WithParameters(base, carried, opt.params);
        }
        nlohmann::json overlay = MakeOverlay(fitted, base, opt.scenario, provenance);
        if (tuner.gpuClockMhz > 0)
        {
            overlay["gpu_clock_mhz"] = tuner.gpuClockMhz;
        }
        dir.Write("overlay.json",
                  overlay.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    }
    if (!results.empty())
    {
        dir.Write("points.csv", PointsCsv(results));
        dir.Write("busbw.svg",
                  BusBwPlotSvg(results,
                               "fabricsim calibrate: " + summary["scenario"].get<std::string>()));
    }
    if (!moe.empty())
    {
        std::ostringstream csv;
        csv.precision(8);
        csv << "mode,tokens,hidden,topk,experts,sms,dispatch_us,predicted_dispatch_us,dispatch_"
               "error_pct,combine_us,"
               "predicted_combine_us,combine_error_pct,nodes,source,dispatch_contradicted,"
               "combine_contradicted\n";
        std::map<std::string, std::vector<double>> errs;
        // Points the tables contradict (slower by more than 15 % than a larger call of the same
        // shape): reported apart too, as no model growing with the tokens can hold them.
        const std::vector<bool> slowD = ContradictedMoePoints(moe, true);
        const std::vector<bool> slowC = ContradictedMoePoints(moe, false);
        for (size_t i = 0; i < moe.size(); ++i)
        {
            const MoePoint& p = moe[i];
            const auto [d, c] = pred.Moe(doc, p);
            const double de = (d - p.dispatchUs) / p.dispatchUs * 100;
            const double ce = (c - p.combineUs) / p.combineUs * 100;
            csv << p.mode << "," << p.tokens << "," << p.hidden << "," << p.topk << "," << p.experts
                << "," << p.sms << "," << p.dispatchUs << "," << d << "," << de << ","
                << p.combineUs << "," << c << "," << ce << "," << p.nodes << "," << p.source << ","
                << int(slowD[i]) << "," << int(slowC[i]) << "\n";
            const std::string range = p.tokens < 128    ? "tokens < 128"
                                      : p.tokens < 4096 ? "tokens 128-4095"
                                                        : "tokens >= 4096";
            errs[p.mode + " dispatch " + range].push_back(de);
            errs[p.mode + " combine " + range].push_back(ce);
            if (p.mode == "normal")
            {
                // Normal-mode kernels are SM-bound: the error by SM budget shows it.
                errs["normal dispatch sms " + std::to_string(p.sms)].push_back(de);
                errs["normal combine sms " + std::to_string(p.sms)].push_back(ce);
            }
            if (p.nodes > 1)
            {
                // Across servers: RDMA and forwarding, by the EP size.
                const std::string ep = " ep " + std::to_string(8 * p.nodes);
                errs[p.mode + " dispatch" + ep].push_back(de);
                errs[p.mode + " combine" + ep].push_back(ce);
            }
            errs[p.mode + " dispatch"].push_back(de);
            errs[p.mode + " combine"].push_back(ce);
            if (!slowD[i])
            {
                errs[p.mode + " dispatch but contradicted"].push_back(de);
            }
            if (!slowC[i])
            {
                errs[p.mode + " combine but contradicted"].push_back(ce);
            }
        }
        nlohmann::json m;
        for (const auto& [k, v] : errs)
        {
            double abs = 0;
            double bias = 0;
            double worst = 0;
            for (double e : v)
            {
                abs += std::fabs(e);
                bias += e;
                worst = std::fabs(e) > std::fabs(worst) ? e : worst;
            }
            m[k] = {{"points", v.size()},
                    {"mape_pct", abs / v.size()},
                    {"bias_pct", bias / v.size()},
                    {"worst_pct", worst}};
        }
        summary["moe"] = m;
        summary["moe_model"]
            = {{"dispatch_dtype_normal", opt.deepepDispatchDtype},
               {"routing",
                "uniform: LL sends one copy per chosen expert, normal one per destination rank"}};
        dir.Write("moe.csv", csv.str());
    }
    summary["simulations"] = pred.Runs();
    dir.Write("summary.json",
              summary.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    const double wall
        = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    dir.Write("timing.json",
              nlohmann::json{{"wall_s", wall}}.dump(
                  2, ' ', false, nlohmann::json::error_handler_t::replace)
                  + "\n");

    out << std::fixed << std::setprecision(2);
    out << "# fabricsim calibrate: " << points.size() << " collective points, " << moe.size()
        << " DeepEP points on " << summary["scenario"].get<std::string>() << " (" << opt.backend
        << ")\n";
    for (const auto& [k, v] : fitted)
    {
        out << "# fitted " << k << " = " << v << "\n";
    }
    if (!results.empty())
    {
        const nlohmann::json& e = summary["error"];
        out << "#  group                              points   MAPE %   worst %\n";
        auto line = [&](const std::string& name, const nlohmann::json& s)
        {
            out << "   " << std::setw(35) << std::left << name << std::right << std::setw(6)
                << s["points"].get<size_t>() << std::setw(9) << s["mape_pct"].get<double>()
                << std::setw(10) << s["worst_pct"].get<double>() << "\n";
        };
        line("all", e["all"]);
        for (auto it = e["by_size"].begin(); it != e["by_size"].end(); ++it)
        {
            line(it.key(), *it);
        }
        for (auto it = e["by_collective"].begin(); it != e["by_collective"].end(); ++it)
        {
            line(it.key(), *it);
        }
    }
    if (summary.contains("moe"))
    {
        for (auto it = summary["moe"].begin(); it != summary["moe"].end(); ++it)
        {
            out << "   " << std::setw(35) << std::left << it.key() << std::right << std::setw(6)
                << (*it)["points"].get<size_t>() << std::setw(9) << (*it)["mape_pct"].get<double>()
                << std::setw(10) << (*it)["worst_pct"].get<double>() << "\n";
        }
    }
    (void)err;
    dir.Write("provenance.json",
              ProvenanceText(LoadScenarioJson(opt.scenario, opt.sets), opt.ns3Args));
    dir.Commit();
    return 0;
}

} // namespace fabricsim
