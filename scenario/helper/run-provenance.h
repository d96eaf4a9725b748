/*
 * provenance.json for a run's output folder: what produced it (common/provenance.h), with the
 * paths inside this source tree written as "<fabricsim>/..." so that two checkouts agree.
 */
#ifndef FABRICSIM_RUN_PROVENANCE_H
#define FABRICSIM_RUN_PROVENANCE_H

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace fabricsim
{

/// provenance.json's text: the command line and input files of the current ProvenanceScope,
/// \p scenario (null: none), \p ns3Args, and the ns-3 engine and event scheduler the process runs.
std::string ProvenanceText(const nlohmann::json& scenario, const std::vector<std::string>& ns3Args);

} // namespace fabricsim

#endif
