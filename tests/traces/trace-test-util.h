/*
 * Helpers of the trace tests: corpus paths (skipping when ../shared is absent) and an
 * analytical fabric with the Collective API on top.
 */
#ifndef FABRICSIM_TESTS_TRACE_TEST_UTIL_H
#define FABRICSIM_TESTS_TRACE_TEST_UTIL_H

#include "analytical-transport.h"
#include "schedule-collectives.h"
#include "trace-replay.h"

#include <memory>
#include <string>

namespace fabricsim
{

/// Path of \p rel inside the shared corpus, or "" when the corpus is absent.
std::string CorpusPath(const std::string& rel);

/// Skip the test when the corpus file is absent (use at the top of a TEST).
#define REQUIRE_CORPUS(var, rel)                                                         \
    const std::string var = ::fabricsim::CorpusPath(rel);                                \
    if (var.empty())                                                                     \
    {                                                                                    \
        GTEST_SKIP() << "shared corpus file " << rel << " not found (../shared absent)"; \
    }

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
