// Scenarios shared by the PFC-safety and monitor tests, and a small CSV reader.
#ifndef FABRICSIM_TEST_PFC_SCENARIOS_H
#define FABRICSIM_TEST_PFC_SCENARIOS_H

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

namespace fabricsim::test
{

/**
 * Three switches in a ring, one host each, every flow forced two hops clockwise
 * (host i -> host i+2 through switch i+1): each ring link carries two line-rate flows and each
 * switch buffers the transit flow behind the next ring link, a cyclic buffer dependency.
 */
nlohmann::json RingDeadlock(uint64_t flowBytes);

/// `senders`-to-1 incast on one switch at 100 Gb/s with congestion control `cc`.
nlohmann::json Incast(const std::string& cc, uint32_t senders, uint64_t flowBytes);

/// A CSV file as its header and rows of named fields.
struct Csv
{
    std::vector<std::string> header;
    std::vector<std::map<std::string, std::string>> rows;
};

Csv ReadCsv(const std::string& path);

} // namespace fabricsim::test

#endif
