#ifndef FABRICSIM_COMM_OP_KIND_H
#define FABRICSIM_COMM_OP_KIND_H

#include "collective-kind.h"
#include "step-program.h"

#include <optional>

namespace fabricsim
{

/// The Collective API kind of a step-program communication op; none for the ops that are not
/// collectives (gather, send / recv, KV fetch and transfer), which run as point-to-point sends.
std::optional<CollectiveKind> CollectiveKindOf(CommOp op);

} // namespace fabricsim

#endif
