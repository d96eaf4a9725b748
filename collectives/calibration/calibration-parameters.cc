#include "calibration-parameters.h"

#include "file-reader.h"
#include "input-error.h"
#include "json-describe.h"
#include "json-reader.h"
#include "topology.h"
#include "units.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace fabricsim
{

namespace
{

const char* kLinkKeys[] = {"host_link", "fabric_link", "scale_up", "global_link"};

/// local_copy_efficiency is the tuner's dimensionless attribute, not a latency.
const char* kCopyAttribute = "ns3::NcclTuner::LocalCopyEfficiency";

struct Attr
{
    const char* param;
    const char* attribute;
    double defaultUs;
    double lo;
    double hi;
};

const Attr kAttrs[]
    = {{"launch_overhead", "ns3::CollectiveExecutor::LaunchLatency", 4.0, 0.2, 50.0},
       {"step_latency", "ns3::CollectiveExecutor::StepLatency", 0.5, 0.01, 20.0},
       {"message_overhead", "ns3::AnalyticalBackend::MessageOverhead", 0.0, 0.001, 20.0}};

const Attr*
FindAttr(const std::string& name)
{
    for (const Attr& a : kAttrs)
    {
        if (name == a.param)
        {
            return &a;
        }
    }
    return nullptr;
}

std::string
Format(double v)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

/// Link objects of the scenario's topology that carry a rate.
std::vector<std::string>
RatedLinks(const nlohmann::json& doc)
{
    std::vector<std::string> keys;
    const auto topo = doc.find("topology");
    if (topo == doc.end() || !topo->is_object())
    {
        return keys;
    }
    for (const char* k : kLinkKeys)
    {
        auto l = topo->find(k);
        if (l != topo->end() && l->is_object() && l->contains("rate"))
        {
            keys.push_back(k);
        }
    }
    return keys;
}

/// A delay in ns from a scenario's delay value (number = ns, string with unit).
double
DelayNs(const nlohmann::json& v, const std::string& file, const std::string& field)
{
    return double(ParseDelay(v, file, field)) / 1000.0;
}

} // namespace

std::vector<std::string>
CalibrationParameterNames()
{
    return {"link_efficiency",
            "hop_latency",
            "launch_overhead",
            "step_latency",
            "message_overhead",
            "local_copy_efficiency"};
}

bool
HasRatedLinks(const nlohmann::json& doc)
{
    return !RatedLinks(doc).empty();
}

double
SlowestLinkBytesPerSecond(const nlohmann::json& doc, const std::string& file)
{
    double slowest = 0;
    for (const std::string& k : RatedLinks(doc))
    {
        const double bytes
            = ParseRate(doc["topology"][k]["rate"], file, "topology." + k + ".rate") / 8.0;
        if (slowest == 0 || bytes < slowest)
        {
            slowest = bytes;
        }
    }
    return slowest;
}

double
CurrentParameterValue(const std::string& name, const nlohmann::json& doc)
{
    if (name == "link_efficiency")
    {
        return 1.0;
    }
    if (name == "local_copy_efficiency")
    {
        auto attrs = doc.find("attributes");
        if (attrs != doc.end() && attrs->is_object() && attrs->contains(kCopyAttribute))
        {
            const nlohmann::json& v = (*attrs)[kCopyAttribute];
            return v.is_number() ? v.get<double>() : std::stod(v.get<std::string>());
        }
        return 0.0; // not charged
    }
    if (name == "hop_latency")
    {
        const std::vector<std::string> links = RatedLinks(doc);
        if (!links.empty())
        {
            const nlohmann::json& l = doc["topology"][links.front()];
            if (l.contains("delay"))
            {
                return DelayNs(l["delay"], "", "delay");
            }
        }
        return 1000.0; // the topology default, 1 us
    }
    const Attr* a = FindAttr(name);
    if (a)
    {
        auto attrs = doc.find("attributes");
        if (attrs != doc.end() && attrs->is_object() && attrs->contains(a->attribute))
        {
            const nlohmann::json& v = (*attrs)[a->attribute];
            return DelayNs(v.is_string()
                               ? v
                               : nlohmann::json(
                                   v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                                   + "ns"),
                           "",
                           a->attribute)
                   / 1000.0;
        }
        return a->defaultUs;
    }
    return 0;
}

FitDimension
CalibrationDimension(const std::string& name, const nlohmann::json& doc, const std::string& field)
{
    FitDimension d;
    d.name = name;
    if (name == "link_efficiency" || name == "hop_latency")
    {
        if (RatedLinks(doc).empty())
        {
            throw fabricsim::InputError(field,
                                        name,
                                        "a scenario whose topology gives a link rate (host_link, "
                                        "fabric_link, scale_up or global_link)",
                                        "none");
        }
        if (name == "link_efficiency")
        {
            d.lo = 0.3;
            d.hi = 1.0;
            d.start = 0.9;
        }
        else
        {
            d.lo = 10;
            d.hi = 5000;
            d.logScale = true;
            d.start = std::clamp(CurrentParameterValue(name, doc), d.lo, d.hi);
        }
        return d;
    }
    if (name == "local_copy_efficiency")
    {
        // 0.05-1 of the memory bandwidth; started mid-range when the scenario leaves it off.
        d.lo = 0.05;
        d.hi = 1.0;
        d.logScale = true;
        const double v = CurrentParameterValue(name, doc);
        d.start = v > 0 ? std::clamp(v, d.lo, d.hi) : 0.3;
        return d;
    }
    const Attr* a = FindAttr(name);
    if (!a)
    {
        std::string known;
        for (const std::string& n : CalibrationParameterNames())
        {
            known += (known.empty() ? "" : ", ") + n;
        }
        throw fabricsim::InputError(
            field, "--fit", "parameters among " + known, "\"" + name + "\"");
    }
    d.lo = a->lo;
    d.hi = a->hi;
    d.logScale = true;
    d.start = std::clamp(CurrentParameterValue(name, doc), d.lo, d.hi);
    return d;
}

std::vector<std::string>
ParameterAssignments(const std::map<std::string, double>& values,
                     const nlohmann::json& doc,
                     const std::string& file)
{
    std::vector<std::string> sets;
    for (const auto& [name, v] : values)
    {
        if (!std::isfinite(v) || v < 0)
        {
            throw fabricsim::InputError(
                file, "parameters." + name, "a finite value >= 0", Format(v));
        }
        if (name == "link_efficiency" || name == "hop_latency")
        {
            const std::vector<std::string> links = RatedLinks(doc);
            if (links.empty())
            {
                throw fabricsim::InputError(
                    file, "parameters." + name, "a scenario with explicit link rates", "none");
            }
            for (const std::string& k : links)
            {
                if (name == "link_efficiency")
                {
                    if (!(v > 0) || v > 1.5)
                    {
                        throw fabricsim::InputError(file,
                                                    "parameters.link_efficiency",
                                                    "a fraction in (0, 1.5]",
                                                    Format(v));
                    }
                    const double bps
                        = ParseRate(doc["topology"][k]["rate"], file, "topology." + k + ".rate");
                    sets.push_back("topology." + k + ".rate=" + Format(bps * v));
                }
                else
                {
                    sets.push_back("topology." + k + ".delay=" + Format(v) + "ns");
                }
            }
            continue;
        }
        if (name == "local_copy_efficiency")
        {
            sets.push_back(std::string("attributes.") + kCopyAttribute + "=" + Format(v));
            continue;
        }
        const Attr* a = FindAttr(name);
        if (!a)
        {
            throw fabricsim::InputError(
                file, "parameters." + name, "a known calibration parameter", "\"" + name + "\"");
        }
        sets.push_back(std::string("attributes.") + a->attribute + "=" + Format(v * 1000.0) + "ns");
    }
    return sets;
}

nlohmann::json
MakeOverlay(const std::map<std::string, double>& values,
            const nlohmann::json& doc,
            const std::string& file,
            const nlohmann::json& provenance)
{
    nlohmann::json o;
    o["fabricsim_overlay"] = 1;
    o["description"] = "Calibrated parameters; apply with --overlay FILE (the 'set' list is for "
                       "the scenario it was "
                       "fitted on) or carry 'parameters' to another system with fabricsim "
                       "calibrate --params FILE";
    o["parameters"] = values;
    o["units"] = {{"link_efficiency", "fraction of nominal rate"},
                  {"hop_latency", "ns"},
                  {"launch_overhead", "us"},
                  {"step_latency", "us"},
                  {"message_overhead", "us"},
                  {"local_copy_efficiency", "fraction of the GPU memory bandwidth"}};
    o["set"] = ParameterAssignments(values, doc, file);
    o["fitted_on"] = provenance;
    return o;
}

namespace
{

nlohmann::json
ReadOverlay(const std::string& path)
{
    const nlohmann::json o = ParseJson(ReadFileBounded(path, "calibration overlay"), path);
    if (!o.is_object() || !o.contains("fabricsim_overlay"))
    {
        throw fabricsim::InputError(
            path, "fabricsim_overlay", "an overlay written by fabricsim calibrate", "no such key");
    }
    return o;
}

} // namespace

std::vector<std::string>
ReadOverlaySets(const std::string& path)
{
    nlohmann::json o = ReadOverlay(path);
    auto s = o.find("set");
    if (s == o.end() || !s->is_array())
    {
        throw fabricsim::InputError(path,
                                    "set",
                                    "an array of \"key.path=value\" strings",
                                    s == o.end() ? "nothing" : DescribeJson(*s));
    }
    std::vector<std::string> sets;
    for (size_t i = 0; i < s->size(); ++i)
    {
        const nlohmann::json& e = (*s)[i];
        if (!e.is_string() || e.get<std::string>().find('=') == std::string::npos)
        {
            throw fabricsim::InputError(path,
                                        "set[" + std::to_string(i) + "]",
                                        "a \"key.path=value\" string",
                                        DescribeJson(e));
        }
        sets.push_back(e.get<std::string>());
    }
    return sets;
}

std::map<std::string, double>
ReadOverlayParameters(const std::string& path)
{
    nlohmann::json o = ReadOverlay(path);
    auto p = o.find("parameters");
    if (p == o.end() || !p->is_object())
    {
        throw fabricsim::InputError(path,
                                    "parameters",
                                    "an object of parameter values",
                                    p == o.end() ? "nothing" : DescribeJson(*p));
    }
    std::map<std::string, double> values;
    const std::vector<std::string> names = CalibrationParameterNames();
    for (auto it = p->begin(); it != p->end(); ++it)
    {
        if (std::find(names.begin(), names.end(), it.key()) == names.end())
        {
            throw fabricsim::InputError(path,
                                        "parameters." + it.key(),
                                        "a known calibration parameter",
                                        "\"" + it.key() + "\"");
        }
        if (!it->is_number() || !std::isfinite(it->get<double>()) || it->get<double>() < 0)
        {
            throw fabricsim::InputError(
                path, "parameters." + it.key(), "a number >= 0", DescribeJson(*it));
        }
        values[it.key()] = it->get<double>();
    }
    return values;
}

double
ReadOverlayGpuClock(const std::string& path)
{
    nlohmann::json o = ReadOverlay(path);
    auto c = o.find("gpu_clock_mhz");
    if (c == o.end())
    {
        return 0;
    }
    if (!c->is_number() || !std::isfinite(c->get<double>()) || !(c->get<double>() > 0))
    {
        throw fabricsim::InputError(path, "gpu_clock_mhz", "a clock in MHz > 0", DescribeJson(*c));
    }
    return c->get<double>();
}

std::vector<std::string>
ExpandOverlayArgs(const std::vector<std::string>& args)
{
    std::vector<std::string> overlaySets;
    std::vector<std::string> rest;
    for (size_t i = 0; i < args.size(); ++i)
    {
        std::string file;
        if (args[i] == "--overlay")
        {
            if (i + 1 >= args.size())
            {
                throw fabricsim::InputError(
                    "<command line>", "--overlay", "a file after --overlay", "nothing");
            }
            file = args[++i];
        }
        else if (args[i].rfind("--overlay=", 0) == 0)
        {
            file = args[i].substr(10);
        }
        else
        {
            rest.push_back(args[i]);
            continue;
        }
        for (const std::string& s : ReadOverlaySets(file))
        {
            overlaySets.push_back("--set");
            overlaySets.push_back(s);
        }
    }
    if (overlaySets.empty() || rest.empty())
    {
        return rest;
    }
    // Right after the subcommand: later --set options of the user override the overlay.
    std::vector<std::string> out{rest.front()};
    out.insert(out.end(), overlaySets.begin(), overlaySets.end());
    out.insert(out.end(), rest.begin() + 1, rest.end());
    return out;
}

} // namespace fabricsim
