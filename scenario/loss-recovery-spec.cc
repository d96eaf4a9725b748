#include "loss-recovery-spec.h"

#include "unit-conversions.h"

#include <algorithm>

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
    if (t.Has("local_ack_timeout"))
    {
        // InfiniBand's QP attribute: 4.096 us x 2^n, fixed (no backoff unless one is given).
        if (t.Has("rto_ns"))
        {
            t.Fail("local_ack_timeout", "either local_ack_timeout or rto_ns", "both");
        }
        const uint64_t n = t.OptionalUint("local_ack_timeout", 0, 0, 31);
        spec.rtoNs = uint64_t(4096) << n;
        spec.rtoBackoff = 1.0;
        spec.rtoMaxNs = std::max(spec.rtoMaxNs, spec.rtoNs);
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
