// The "transport" block: docs/scenario.md's rows transport.cc to transport.window, the
// loss-recovery rows through loss-recovery-spec.cc.
#include "input-error.h"
#include "json-describe.h"
#include "json-reader.h"
#include "loss-recovery-spec.h"
#include "scenario-readers.h"
#include "unit-conversions.h"

namespace fabricsim
{

using nlohmann::json;

namespace
{

void
ReadCcPerPriority(const json& m, const std::string& file, TransportSpec& spec)
{
    const JsonObject mObj(m, file, "transport.cc_per_priority");
    for (auto it = m.begin(); it != m.end(); ++it)
    {
        std::string field = "transport.cc_per_priority." + it.key();
        if (it.key().size() != 1 || it.key()[0] < '0' || it.key()[0] > '6')
        {
            throw InputError(
                file, field, "a data class \"0\" to \"6\" as the key", "\"" + it.key() + "\"");
        }
        if (!it.value().is_string())
        {
            throw InputError(file, field, "a congestion-control name", DescribeJson(it.value()));
        }
        spec.ccPerPriority[uint8_t(it.key()[0] - '0')] = it.value().get<std::string>();
    }
}

} // namespace

void
ReadTransport(const json& t, const std::string& file, TransportSpec& spec)
{
    const JsonObject tObj(t, file, "transport");
    tObj.CheckKeys({"cc",
                    "cc_per_priority",
                    "mtu_bytes",
                    "pfc",
                    "priority",
                    "ack_interval",
                    "rto_ns",
                    "cnp_interval_ns",
                    "window",
                    "loss_recovery",
                    "local_ack_timeout",
                    "rto_backoff",
                    "rto_max_ns",
                    "rto_jitter",
                    "retry_limit",
                    "bdp_cap"});
    spec.cc = tObj.OptionalString("cc", spec.cc);
    if (t.contains("cc_per_priority"))
    {
        ReadCcPerPriority(t["cc_per_priority"], file, spec);
    }
    spec.mtuBytes = uint32_t(tObj.OptionalUint("mtu_bytes", 1000, 64));
    if (spec.mtuBytes > 9000)
    {
        throw InputError(
            file, "transport.mtu_bytes", "an MTU in [64, 9000]", std::to_string(spec.mtuBytes));
    }
    spec.pfc = tObj.OptionalBool("pfc", true);
    uint64_t prio = tObj.OptionalUint("priority", 3);
    if (prio > 6)
    {
        throw InputError(file,
                         "transport.priority",
                         "a data class in [0, 6] (7 carries control frames)",
                         std::to_string(prio));
    }
    spec.priority = uint8_t(prio);
    spec.ackInterval = uint32_t(tObj.OptionalUint("ack_interval", 1, 1));
    spec.rtoNs = tObj.OptionalUint("rto_ns", spec.rtoNs, 1, units::kMaxNs);
    spec.cnpIntervalNs = tObj.OptionalUint("cnp_interval_ns", spec.cnpIntervalNs, 0, units::kMaxNs);
    spec.window = tObj.OptionalBool("window", false);
    ReadLossRecovery(tObj, spec);
}

} // namespace fabricsim
