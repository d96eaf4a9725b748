// The "switch" block: docs/scenario.md's rows switch.buffer_bytes to switch.pfc_watchdog.
#include "input-error.h"
#include "json-reader.h"
#include "scenario-fields.h"
#include "scenario-readers.h"
#include "unit-conversions.h"
#include "units.h"

namespace fabricsim
{

using nlohmann::json;

namespace
{

void
ReadWatchdog(const json& w, const std::string& file, PfcWatchdogSpec& spec)
{
    const std::string path = "switch.pfc_watchdog";
    const JsonObject wObj(w, file, path);
    wObj.CheckKeys({"enabled", "poll_interval_ns", "detection_ns", "restoration_ns", "action"});
    spec.enabled = wObj.OptionalBool("enabled", true);
    spec.pollNs = wObj.OptionalUint("poll_interval_ns", spec.pollNs, 1, units::kMaxNs);
    spec.detectionNs = wObj.OptionalUint("detection_ns", spec.detectionNs, 0, units::kMaxNs);
    spec.restorationNs = wObj.OptionalUint("restoration_ns", spec.restorationNs, 0, units::kMaxNs);
    spec.action = wObj.OptionalString("action", spec.action);
    if (spec.action != "report" && spec.action != "ignore-pause" && spec.action != "drop")
    {
        throw InputError(file,
                         path + ".action",
                         "\"report\", \"ignore-pause\" or \"drop\"",
                         "\"" + spec.action + "\"");
    }
}

void
ReadEcn(const json& e, const std::string& file, EcnSpec& spec)
{
    const JsonObject eObj(e, file, "switch.ecn");
    eObj.CheckKeys({"enabled", "kmin_bytes", "kmax_bytes", "pmax", "per_rate"});
    spec.enabled = eObj.OptionalBool("enabled", true);
    spec.kminBytes = GetBytes(eObj, "kmin_bytes", spec.kminBytes);
    spec.kmaxBytes = GetBytes(eObj, "kmax_bytes", spec.kmaxBytes);
    spec.pmax = eObj.OptionalNumber("pmax", spec.pmax, 0, 1);
    if (e.contains("per_rate"))
    {
        spec.perRateBps = (e["per_rate"].is_number() && e["per_rate"].get<double>() == 0)
                              ? 0
                              : ParseRate(e["per_rate"], file, "switch.ecn.per_rate");
    }
    if (spec.kmaxBytes <= spec.kminBytes)
    {
        throw InputError(file,
                         "switch.ecn.kmax_bytes",
                         "greater than kmin_bytes (" + std::to_string(spec.kminBytes) + ")",
                         std::to_string(spec.kmaxBytes));
    }
}

} // namespace

void
ReadSwitch(const json& s, const std::string& file, SwitchSpec& spec)
{
    const JsonObject sObj(s, file, "switch");
    sObj.CheckKeys({"buffer_bytes",
                    "alpha",
                    "reserve_bytes",
                    "resume_offset_bytes",
                    "headroom_bytes",
                    "pause_quanta",
                    "ecmp_seed",
                    "ecn",
                    "pfc_watchdog"});
    spec.bufferBytes = GetBytes(sObj, "buffer_bytes", spec.bufferBytes);
    if (spec.bufferBytes == 0)
    {
        throw InputError(file, "switch.buffer_bytes", "a positive byte count", "0");
    }
    spec.alpha = sObj.OptionalNumber("alpha", spec.alpha, 1e-6, 1e6);
    spec.reserveBytes = GetBytes(sObj, "reserve_bytes", spec.reserveBytes);
    spec.resumeOffsetBytes = GetBytes(sObj, "resume_offset_bytes", spec.resumeOffsetBytes);
    spec.headroomBytes = GetBytes(sObj, "headroom_bytes", 0);
    spec.pauseQuanta = uint32_t(sObj.OptionalUint("pause_quanta", 0xffff, 1));
    if (spec.pauseQuanta > 0xffff)
    {
        throw InputError(file, "switch.pause_quanta", "1..65535", std::to_string(spec.pauseQuanta));
    }
    spec.ecmpSeed = uint32_t(sObj.OptionalUint("ecmp_seed", 0, 0, UINT32_MAX));
    if (s.contains("ecn"))
    {
        ReadEcn(s["ecn"], file, spec.ecn);
    }
    if (s.contains("pfc_watchdog"))
    {
        ReadWatchdog(s["pfc_watchdog"], file, spec.watchdog);
    }
}

} // namespace fabricsim
