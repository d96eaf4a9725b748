/*
 * The loss-recovery keys of a scenario's "transport" object: how the NICs resend lost packets
 * (go-back-N or selective repeat), the retransmission timeout's backoff, and the retry limit.
 */
#ifndef FABRICSIM_LOSS_RECOVERY_SPEC_H
#define FABRICSIM_LOSS_RECOVERY_SPEC_H

#include "fabric-scenario.h"
#include "json-reader.h"

namespace fabricsim
{

/// Reads loss_recovery, local_ack_timeout, rto_backoff, rto_max_ns, rto_jitter, retry_limit and
/// bdp_cap of \p t into \p spec (defaults where absent); InputError naming the field otherwise.
/// \p spec.rtoNs must already hold rto_ns (local_ack_timeout replaces it).
void ReadLossRecovery(const JsonObject& t, TransportSpec& spec);

} // namespace fabricsim

#endif
