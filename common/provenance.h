/*
 * What produced a command's outputs: provenance.json holds the command line, the effective
 * scenario (after every --set and overlay), the attribute overrides, every input file read (as
 * given, never an absolute path of this machine, with the SHA-256 of its content) and the
 * fabricsim version. The version lives there alone, so summary.json and the CSVs stay
 * byte-identical across commits whose results do not change.
 */
#ifndef FABRICSIM_COMMON_PROVENANCE_H
#define FABRICSIM_COMMON_PROVENANCE_H

#include <nlohmann/json.hpp>

#include <set>
#include <string>
#include <vector>

namespace fabricsim
{

/**
 * \brief Collects, while it lives, the command line and the input files read on this thread
 * (the innermost scope when nested). The file reader records into it; reading is the same
 * without one.
 */
class ProvenanceScope
{
  public:
    explicit ProvenanceScope(std::vector<std::string> command);
    ~ProvenanceScope();
    ProvenanceScope(const ProvenanceScope&) = delete;
    ProvenanceScope& operator=(const ProvenanceScope&) = delete;

    /// The innermost scope of this thread, or nullptr.
    static ProvenanceScope* Current();

    /// Notes that \p path was read (each path once, in the order first read).
    static void RecordInput(const std::string& path);

    const std::vector<std::string>& Command() const
    {
        return m_command;
    }

    const std::vector<std::string>& Inputs() const
    {
        return m_inputs;
    }

  private:
    std::vector<std::string> m_command;
    std::vector<std::string> m_inputs;
    std::set<std::string> m_seen;
    ProvenanceScope* m_outer;
};

/// The fabricsim version: `git describe` of the source tree at configure time, else "unknown".
std::string FabricsimVersion();

/**
 * \brief \p path as provenance.json names it: a relative path as given; an absolute one inside
 * \p sourceDir as "<fabricsim>/..." and any other relative to the working directory.
 */
std::string PortablePath(const std::string& path, const std::string& sourceDir);

/**
 * \brief provenance.json of the current scope (an empty command and no inputs without one):
 * {"fabricsim_version", "command", "scenario", "attribute_overrides", "inputs": [{"path",
 * "sha256"}]}. \p scenario is null for a command without one.
 */
nlohmann::json ProvenanceJson(const nlohmann::json& scenario,
                              const std::vector<std::string>& attributeOverrides,
                              const std::string& sourceDir);

} // namespace fabricsim

#endif
