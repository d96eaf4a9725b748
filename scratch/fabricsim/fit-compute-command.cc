#include "fit-compute-command.h"

#include "cli-options.h"
#include "compute-calibration-fit.h"
#include "input-error.h"
#include "output-writer.h"

#include "ns3/run-provenance.h"

#include <cstdio>
#include <map>
#include <ostream>
#include <sstream>

namespace fabricsim
{

using nlohmann::json;

namespace
{

std::string
Pct(double v)
{
    return Fixed(v, 1) + " %";
}

/// One class's errors under each model and row set.
struct ClassReport
{
    std::map<std::string, KernelErrorClass> byColumn; //!< column -> errors
};

using Report = std::map<std::pair<std::string, std::string>, ClassReport>;

void
Add(Report& r, const std::string& column, const std::vector<KernelErrorClass>& classes)
{
    for (const KernelErrorClass& c : classes)
    {
        r[{c.op, c.dtype}].byColumn[column] = c;
    }
}

/// The classes the fitted tables have no rows of keep \p base's curves, each saying where it
/// was fitted.
void
KeepBaseCurves(ComputeCalibration& cal, const ComputeCalibration& base)
{
    for (const CalibrationCurve& c : base.curves)
    {
        if (cal.Find(c.op, c.dtype))
        {
            continue;
        }
        CalibrationCurve kept = c;
        if (kept.fittedOn.empty())
        {
            const std::pair<const char*, const std::string*> from[] = {{"device", &base.device},
                                                                       {"hardware", &base.hardware},
                                                                       {"source", &base.source},
                                                                       {"rows", &base.rows}};
            for (const auto& [key, value] : from)
            {
                if (!value->empty())
                {
                    kept.fittedOn[key] = *value;
                }
            }
        }
        cal.curves.push_back(std::move(kept));
    }
}

} // namespace

FitComputeOptions
ParseFitComputeArgs(const std::vector<std::string>& a)
{
    FitComputeOptions o;
    bool heldOut = false;
    for (size_t i = 1; i < a.size(); ++i)
    {
        std::string v;
        if (TakeOption(a, i, "--out", v))
        {
            o.outDir = v;
        }
        else if (TakeOption(a, i, "--hardware", v))
        {
            o.hardware = v;
        }
        else if (TakeOption(a, i, "--base", v))
        {
            o.base = v;
        }
        else if (TakeOption(a, i, "--held-out-hardware", v))
        {
            o.heldOutHardware = v;
        }
        else if (TakeOption(a, i, "--rows", v))
        {
            if (v != "half" && v != "all")
            {
                throw InputError(kCommandLineSource, "--rows", "half or all", "\"" + v + "\"");
            }
            o.allRows = v == "all";
        }
        else if (TakeOption(a, i, "--gemm-size", v))
        {
            if (v != "m,n" && v != "m")
            {
                throw InputError(kCommandLineSource, "--gemm-size", "m,n or m", "\"" + v + "\"");
            }
            o.gemmByN = v == "m,n";
        }
        else if (TakeOption(a, i, "--moe-size", v))
        {
            if (v != "tokens,width" && v != "tokens")
            {
                throw InputError(
                    kCommandLineSource, "--moe-size", "tokens,width or tokens", "\"" + v + "\"");
            }
            o.moeByWidth = v == "tokens,width";
        }
        else if (a[i] == "--held-out")
        {
            heldOut = true;
        }
        else if (!a[i].empty() && a[i][0] != '-')
        {
            (heldOut ? o.heldOut : o.tables).push_back(a[i]);
        }
        else
        {
            throw InputError(kCommandLineSource,
                             a[i],
                             "a kernel table or an option of 'fabricsim fit-compute'",
                             "\"" + a[i] + "\"");
        }
    }
    if (o.tables.empty())
    {
        throw InputError(
            kCommandLineSource, "TABLE", "at least one measured kernel table (CSV)", "none");
    }
    if (o.hardware.empty())
    {
        throw InputError(kCommandLineSource, "--hardware", "the preset of the tables' GPU", "none");
    }
    if (o.heldOut.empty() != o.heldOutHardware.empty())
    {
        throw InputError(kCommandLineSource,
                         "--held-out",
                         "tables and --held-out-hardware together",
                         o.heldOut.empty() ? "no tables" : "no --held-out-hardware");
    }
    return o;
}

int
RunFitComputeCommand(const FitComputeOptions& opt, std::ostream& out, std::ostream&)
{
    const HardwareSpec hw = HardwareSpec::Preset(opt.hardware);
    std::vector<KernelTable> tables;
    for (const std::string& p : opt.tables)
    {
        tables.push_back(ReadKernelTable(p));
    }
    std::vector<KernelTable> held;
    HardwareSpec heldHw;
    if (!opt.heldOut.empty())
    {
        heldHw = HardwareSpec::Preset(opt.heldOutHardware);
        for (const std::string& p : opt.heldOut)
        {
            held.push_back(ReadKernelTable(p));
        }
    }
    CalibrationFitOptions fo;
    fo.gemmByN = opt.gemmByN;
    fo.moeByWidth = opt.moeByWidth;
    if (!opt.allRows)
    {
        fo.use = CalibrationFitRow;
    }
    ComputeCalibration cal = FitComputeCalibration(tables, hw, fo);
    cal.rows = opt.allRows
                   ? "every row"
                   : "the fixed pseudo-random half of each table's rows (CalibrationFitRow)";
    if (!opt.base.empty())
    {
        KeepBaseCurves(cal, ComputeCalibration::Read(opt.base));
    }

    Report report;
    const RowFilter fitRows = CalibrationFitRow;
    const RowFilter odd = [](size_t row)
    {
        return !CalibrationFitRow(row);
    };
    for (const KernelTable& t : tables)
    {
        auto calibrated = [&](const KernelTable& tt, size_t row)
        {
            return CalibratedRowOp(cal, hw, tt, row);
        };
        auto roofline = [&](const KernelTable& tt, size_t row)
        {
            return KernelRooflineOp(hw, tt, row);
        };
        Add(report, "fit", KernelErrors(t, calibrated, opt.allRows ? RowFilter() : fitRows));
        if (!opt.allRows)
        {
            Add(report, "left_out", KernelErrors(t, calibrated, odd));
        }
        Add(report, "roofline", KernelErrors(t, roofline));
    }
    for (const KernelTable& t : held)
    {
        Add(report,
            "held_out",
            KernelErrors(t,
                         [&](const KernelTable& tt, size_t row)
                         { return CalibratedRowOp(cal, heldHw, tt, row); }));
        Add(report,
            "held_out_roofline",
            KernelErrors(t,
                         [&](const KernelTable& tt, size_t row)
                         { return KernelRooflineOp(heldHw, tt, row); }));
    }

    const std::vector<std::pair<std::string, std::string>> columns
        = {{"fit", "fit rows (" + opt.hardware + ")"},
           {"left_out", "left-out rows (" + opt.hardware + ")"},
           {"roofline", "roofline, all rows (" + opt.hardware + ")"},
           {"held_out", "held out (" + opt.heldOutHardware + ")"},
           {"held_out_roofline", "roofline (" + opt.heldOutHardware + ")"}};
    std::ostringstream md;
    md << "MAPE (median signed error) per class; calibration fitted on " << cal.rows << " of "
       << cal.device << "\n\n| op | dtype |";
    std::string rule = "|---|---|";
    for (const auto& [key, title] : columns)
    {
        if (key == "left_out" && opt.allRows)
        {
            continue;
        }
        if (key.rfind("held_out", 0) == 0 && held.empty())
        {
            continue;
        }
        md << " " << title << " |";
        rule += "---:|";
    }
    md << "\n" << rule << "\n";
    json errors = json::array();
    for (const auto& [cls, r] : report)
    {
        md << "| " << cls.first << " | " << cls.second << " |";
        json row{{"op", cls.first}, {"dtype", cls.second}};
        for (const auto& [key, title] : columns)
        {
            if ((key == "left_out" && opt.allRows)
                || (key.rfind("held_out", 0) == 0 && held.empty()))
            {
                continue;
            }
            auto it = r.byColumn.find(key);
            if (it == r.byColumn.end())
            {
                md << " - |";
                continue;
            }
            md << " " << Pct(it->second.mape) << " (" << Pct(it->second.medianError) << ") |";
            row[key] = ToJson(it->second);
        }
        md << "\n";
        errors.push_back(row);
    }
    out << md.str();

    OutputDir dir(opt.outDir);
    dir.Write("calibration.json", cal.ToJson().dump(1) + "\n");
    dir.Write("errors.json", errors.dump(2) + "\n");
    dir.Write("errors.md", md.str());
    dir.Write("provenance.json", ProvenanceText(nullptr, {}));
    dir.Commit();
    out << "wrote " << opt.outDir << "/calibration.json, errors.json, errors.md\n";
    return 0;
}

} // namespace fabricsim
