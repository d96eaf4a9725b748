#include "calibration-run.h"

#include "calibration-parameters.h"
#include "fabric-setup.h"
#include "input-error.h"

#include "ns3/nccl-tuner-attributes.h"

namespace fabricsim
{

namespace
{

/// Errors in the options name the command line, where they come from.
const char* kCli = "<command line>";

} // namespace

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

CalibrationInputs
ReadCalibrationInputs(const CalibrationOptions& opt)
{
    CalibrationInputs in;
    in.points = ReadFilteredMeasurements(opt.files, opt.filter);
    const std::vector<MeasuredPoint>& points = in.points.collectives;
    if (points.empty() && in.points.moe.empty())
    {
        throw fabricsim::InputError(
            kCli, "MEASUREMENTS", "at least one point left after the filters", "none");
    }
    in.doc = LoadScenarioJson(opt.scenario, opt.sets);
    ConfigureSimulator(ParseFabricScenario(in.doc, opt.scenario), opt.ns3Args);
    in.tuner = ns3::TunerConfigFromAttributes();
    if (!opt.params.empty())
    {
        in.applied = ReadOverlayParameters(opt.params);
        // GPU-side latencies were fitted in the other system's SM cycles.
        in.fromMhz = ReadOverlayGpuClock(opt.params);
        in.carried = CarryAcrossClocks(in.applied, in.fromMhz, in.tuner.gpuClockMhz);
        in.doc = WithParameters(in.doc, in.carried, opt.params);
    }
    FabricScenario sc = ParseFabricScenario(in.doc, opt.scenario);
    ConfigureSimulator(sc, opt.ns3Args);
    in.name = sc.name;
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
    if (!in.points.moe.empty() && sc.topology.NumHosts() < 8)
    {
        throw fabricsim::InputError(opt.scenario,
                                    "topology",
                                    "8 hosts for the DeepEP points (one node of 8 GPUs)",
                                    std::to_string(sc.topology.NumHosts()));
    }
    for (const std::string& name : opt.fit)
    {
        in.dims.push_back(CalibrationDimension(name, in.doc, "--fit"));
    }
    if (!in.dims.empty() && points.empty())
    {
        throw fabricsim::InputError(
            kCli, "--fit", "collective points to fit on", "only DeepEP points");
    }
    // Only the points the objective counts are simulated during the fit.
    in.fitPoints = PointsAtOrAbove(points, opt.fitMinBytes);
    if (!in.dims.empty() && in.fitPoints.empty())
    {
        throw fabricsim::InputError(
            kCli, "--fit-min-bytes", "collective points at or above it to fit on", "none");
    }
    return in;
}

CalibrationOutcome
PredictAndFit(const CalibrationOptions& opt, const CalibrationInputs& in, Predictor& pred)
{
    CalibrationOutcome o;
    o.doc = in.doc;
    if (!in.dims.empty())
    {
        o.fit = FitParameters(
            in.dims,
            in.fitPoints,
            opt.fitMinBytes,
            opt.maxEvals,
            [&](const std::map<std::string, double>& values, const std::vector<MeasuredPoint>& pts)
            { return pred.Collectives(WithParameters(in.doc, values, opt.scenario), pts); });
        o.doc = WithParameters(in.doc, o.fit.fitted, opt.scenario);
    }
    const std::vector<MeasuredPoint>& points = in.points.collectives;
    if (!points.empty())
    {
        std::vector<std::string> choices;
        const std::vector<double> t = pred.Collectives(o.doc, points, &choices);
        for (size_t i = 0; i < points.size(); ++i)
        {
            o.results.push_back({points[i], t[i], choices[i]});
            o.chosen[choices[i]]++;
        }
    }
    for (const MoePoint& p : in.points.moe)
    {
        const auto [d, c] = pred.Moe(o.doc, p);
        o.moe.push_back({d, c});
    }
    return o;
}

nlohmann::json
CalibrationSummary(const CalibrationOptions& opt,
                   const CalibrationInputs& in,
                   const CalibrationOutcome& o,
                   nlohmann::json& overlay)
{
    nlohmann::json summary;
    summary["scenario"] = in.name;
    summary["backend"] = opt.backend;
    summary["measurements"] = opt.files;
    summary["points"] = in.points.collectives.size();
    if (!in.applied.empty())
    {
        summary["applied_parameters"] = in.applied;
        if (in.carried != in.applied)
        {
            summary["carried_parameters"] = in.carried;
            summary["carried_clock_mhz"] = {{"from", in.fromMhz}, {"to", in.tuner.gpuClockMhz}};
        }
    }
    std::vector<std::string> protos;
    for (Protocol p : in.tuner.protocols)
    {
        protos.push_back(ToString(p));
    }
    summary["tuner"]
        = {{"protocols", protos},
           {"in_network_reduction", in.tuner.inNetworkReduction},
           {"gpu_clock_mhz", in.tuner.gpuClockMhz},
           // the value the points ran with (fitted or carried)
           {"local_copy_efficiency", CurrentParameterValue("local_copy_efficiency", o.doc)},
           {"chosen", o.chosen}};
    if (!o.results.empty())
    {
        summary["error"] = ErrorReport(o.results);
    }
    if (!o.fit.fitted.empty())
    {
        std::map<std::string, double> start;
        for (const FitDimension& d : in.dims)
        {
            start[d.name] = d.start;
        }
        summary["fit"] = {{"parameters", o.fit.fitted},
                          {"start", start},
                          {"objective_mape_pct", o.fit.result.value},
                          {"fit_min_bytes", opt.fitMinBytes},
                          {"evaluations", o.fit.result.evaluations}};
        nlohmann::json provenance = {{"scenario", opt.scenario},
                                     {"measurements", opt.files},
                                     {"points", in.points.collectives.size()},
                                     {"mape_pct", o.fit.result.value}};
        // The overlay's assignments act on the scenario as given (before the fit).
        nlohmann::json base = LoadScenarioJson(opt.scenario, opt.sets);
        if (!in.carried.empty())
        {
            base = WithParameters(base, in.carried, opt.params);
        }
        overlay = MakeOverlay(o.fit.fitted, base, opt.scenario, provenance);
        if (in.tuner.gpuClockMhz > 0)
        {
            overlay["gpu_clock_mhz"] = in.tuner.gpuClockMhz;
        }
    }
    if (!in.points.moe.empty())
    {
        summary["moe"] = MoeErrorReport(in.points.moe, o.moe);
        summary["moe_model"]
            = {{"dispatch_dtype_normal", opt.deepepDispatchDtype},
               {"routing",
                "uniform: LL sends one copy per chosen expert, normal one per destination rank"}};
    }
    return summary;
}

} // namespace fabricsim
