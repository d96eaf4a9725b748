#include "loss-recovery-spec.h"

#include "unit-conversions.h"

namespace fabricsim
{

void
ReadLossRecovery(const JsonObject& t, TransportSpec& spec)
{
    spec.lossRecovery = t.OptionalString("loss_recovery", spec.lossRecovery);
    if (spec.lossRecovery != "go-back-n" && spec.lossRecovery != "selective")
    {
        t.Fail("loss_recovery", "\"go-back-n\" or \"selective\"", "\"" + spec.lossRecovery + "\"");
    }
    spec.rtoBackoff = t.OptionalNumber("rto_backoff", spec.rtoBackoff, 1.0, 16.0);
    spec.rtoMaxNs = t.OptionalUint("rto_max_ns", spec.rtoMaxNs, 1, units::kMaxNs);
    if (spec.rtoMaxNs < spec.rtoNs)
    {
        t.Fail("rto_max_ns",
               "at least rto_ns (" + std::to_string(spec.rtoNs) + ")",
               std::to_string(spec.rtoMaxNs));
    }
    spec.rtoJitter = t.OptionalNumber("rto_jitter", spec.rtoJitter, 0.0, 1.0);
    spec.retryLimit = uint32_t(t.OptionalUint("retry_limit", spec.retryLimit, 0, 1000000));
    spec.bdpCap = t.OptionalBool("bdp_cap", spec.bdpCap);
}

} // namespace fabricsim
