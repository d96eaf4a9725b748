/*
 * How many chunks one connection (sender, receiver, channel) must hold at once for a schedule
 * to progress. The executor holds a bounded number of slots per connection and a slot frees
 * only when the peer receives, so a schedule that sends twice to a peer before receiving from it
 * needs two chunks of room on that connection, while the validator's symbolic run has unbounded
 * buffers. Here threadblocks run their steps in order, a send waits until its whole message fits
 * the connection and a receive until a message is there. Blocking FIFOs between deterministic
 * sequential programs form a Kahn process network: whether a capacity suffices does not depend
 * on the order steps run in, and more capacity never hurts, so the smallest sufficient one is
 * found by bisection.
 */
#ifndef FABRICSIM_CONNECTION_CAPACITY_H
#define FABRICSIM_CONNECTION_CAPACITY_H

#include "schedule-ir.h"

namespace fabricsim
{

/**
 * The smallest capacity per connection, in chunks, with which every step of \p schedule runs:
 * at least its largest step count (one step of that count must fit). 0 when it cannot complete
 * at any capacity (a receive no send matches, a dependency cycle: the validator says which).
 */
int ConnectionChunksNeeded(const Schedule& schedule);

} // namespace fabricsim

#endif
