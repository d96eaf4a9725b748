/*
 * Static checks of a schedule, before any execution: ranks and programs, threadblock ids,
 * peers and channels, step indices, ops against threadblock peers, dependencies, and buffer
 * bounds under a given buffer layout. Internal to the validator.
 */
#ifndef FABRICSIM_SCHEDULE_STRUCTURE_CHECK_H
#define FABRICSIM_SCHEDULE_STRUCTURE_CHECK_H

#include "buffer-layout.h"
#include "schedule-ir.h"
#include "schedule-validator.h"

#include <vector>

namespace fabricsim
{

/// Mode-independent structural checks; appends problems.
void CheckStructure(const Schedule& schedule, std::vector<Problem>& problems);

/**
 * Every local buffer access (src of s/rrs/rrc/rrcs/cpy/re, dst of r/rcs/rrc/rrcs/cpy/re,
 * initial copies) must lie inside its buffer under \p layouts; appends kOutOfBounds problems.
 */
void CheckBounds(const Schedule& schedule,
                 const std::vector<RankLayout>& layouts,
                 std::vector<Problem>& problems);

} // namespace fabricsim

#endif
