/*
 * Helpers of the trace tests: the shared corpus (tests/support/shared-corpus.h) and an
 * analytical fabric with the Collective API on top.
 */
#ifndef FABRICSIM_TESTS_TRACE_TEST_UTIL_H
#define FABRICSIM_TESTS_TRACE_TEST_UTIL_H

#include "analytical-transport.h"
#include "schedule-collectives.h"
#include "shared-corpus.h"
#include "trace-replay.h"

#include <memory>
#include <string>

namespace fabricsim
{

/// \p hosts accelerators on one switch with \p gbytesPerSec links (NVLink-like scale-up).
struct TestFabric
{
    TestFabric(uint32_t hosts, double gbytesPerSec = 450);
    std::unique_ptr<AnalyticalTransport> transport;
    std::unique_ptr<ScheduleCollectives> api;

    /// Replay \p trace on this fabric.
    ReplayRun Replay(const ImportedTrace& trace, const ReplayOptions& opt);
};

} // namespace fabricsim

#endif
