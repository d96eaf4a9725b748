/*
 * Helpers for the packet-backed collectives tests: scenarios as JSON, one collective measured
 * on either backend, temporary folders.
 */
#ifndef FABRICSIM_TESTS_PACKET_TEST_UTIL_H
#define FABRICSIM_TESTS_PACKET_TEST_UTIL_H

#include "fabric-scenario.h"
#include "schedule-ir.h"

#include "ns3/collective-measure.h"

#include <nlohmann/json.hpp>

#include <string>

namespace fabricsim
{
namespace test
{

/// N hosts on one switch (rate, 1 us links), MTU and ACK interval as given.
nlohmann::json SingleSwitchScenario(int hosts,
                                    const std::string& rate,
                                    uint32_t mtu = 1000,
                                    uint32_t ackInterval = 1);

/// S servers x A accelerators, one 400G NIC per accelerator on its rail, 450 GB/s scale-up.
nlohmann::json RailScenario(int servers, int accels, uint32_t mtu = 4096, uint32_t ackInterval = 4);

/// Parse a scenario object (file name "test.json").
FabricScenario Scenario(const nlohmann::json& doc);

/// One timed iteration of \p schedule on \p bytes on \p backend.
CollectiveMeasurement Measure(const nlohmann::json& scenario,
                              const std::string& backend,
                              const Schedule& schedule,
                              uint64_t bytes);

/// nccl-tests busbw (GB/s) of a measurement.
double BusBw(CollectiveKind kind, int ranks, uint64_t bytes, const CollectiveMeasurement& m);

/// A fresh empty directory under the temp folder.
std::string FreshDir(const std::string& tag);

/// Contents of a file ("" when missing).
std::string Slurp(const std::string& path);

} // namespace test
} // namespace fabricsim

#endif
