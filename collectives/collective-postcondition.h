/*
 * Post-conditions of the built-in collectives, checked on the final state of a symbolic
 * execution by comparing multisets of (rank, chunk) contributions. Internal to the validator.
 */
#ifndef FABRICSIM_COLLECTIVE_POSTCONDITION_H
#define FABRICSIM_COLLECTIVE_POSTCONDITION_H

#include "schedule-ir.h"
#include "schedule-validator.h"
#include "symbolic-execution.h"

#include <vector>

namespace fabricsim
{

/**
 * Checks the output of every rank against \p collective's post-condition (K = chunks per
 * loop, N = ranks, k = K / N):
 *  - allreduce: output c = sum over r of input(r, c), every rank;
 *  - allgather: output[i*k + c] = input(i, c);
 *  - reducescatter: rank r output c = sum over s of input(s, r*k + c);
 *  - alltoall: rank r output[i*k + c] = input(i, r*k + c);
 *  - broadcast: output c = input(root, c), every rank;
 *  - reduce: root output c = sum over r of input(r, c).
 * Custom collectives are not checked. Appends one problem per wrong output chunk, naming the
 * step that last wrote it.
 */
void CheckPostcondition(const Schedule& schedule,
                        CollectiveKind collective,
                        const SymbolicExecution& execution,
                        std::vector<Problem>& problems);

} // namespace fabricsim

#endif
