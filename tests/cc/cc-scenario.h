// Helpers shared by the congestion-control tests: run a scenario in-process, feed ACKs.
#ifndef FABRICSIM_TEST_CC_SCENARIO_H
#define FABRICSIM_TEST_CC_SCENARIO_H

#include "ns3/congestion-control.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace fabricsim::test
{

/// A fresh, empty temporary directory named after `tag` and this process.
std::string CcTempDir(const std::string& tag);

/// Parse and run `scenario` with outputs in a fresh directory; returns summary.json.
nlohmann::json RunCcScenario(const nlohmann::json& scenario, const std::string& tag);

/// An ACK sample as the NIC builds it.
ns3::AckSample MakeAck(uint32_t ackedPsn,
                       uint32_t sndNxt,
                       ns3::Time rtt,
                       bool ece = false,
                       uint64_t ackedBytes = 1000);

} // namespace fabricsim::test

#endif
