/*
 * Chrome-trace / Perfetto JSON timeline ("X" complete events, times in microseconds).
 */
#ifndef FABRICSIM_SERVING_CHROME_TRACE_H
#define FABRICSIM_SERVING_CHROME_TRACE_H

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace fabricsim
{

/**
 * \brief Collects timeline slices and writes the Trace Event Format that chrome://tracing and
 * ui.perfetto.dev open. One process per rank, one thread per lane (compute, communication
 * streams).
 */
class ChromeTrace
{
  public:
    /**
     * \brief Add a slice.
     * \param pid process (rank)
     * \param tid thread (lane)
     * \param name slice name
     * \param cat category
     * \param startPs start time
     * \param durPs duration
     * \param args extra arguments shown on selection
     */
    void Slice(uint32_t pid,
               uint32_t tid,
               const std::string& name,
               const std::string& cat,
               int64_t startPs,
               int64_t durPs,
               nlohmann::json args = nlohmann::json::object());

    /// Name a process.
    void NameProcess(uint32_t pid, const std::string& name);

    /// Name a thread.
    void NameThread(uint32_t pid, uint32_t tid, const std::string& name);

    /// Slices so far.
    size_t Size() const
    {
        return m_events.size();
    }

    /// The trace object ({"traceEvents": [...], "displayTimeUnit": "ns"}).
    nlohmann::json ToJson() const;

    /// Write ToJson() to \p out (its errors are the caller's to check).
    void Write(std::ostream& out) const;

  private:
    std::vector<nlohmann::json> m_events;                               //!< slices
    std::map<uint32_t, std::string> m_processNames;                     //!< pid names
    std::map<std::pair<uint32_t, uint32_t>, std::string> m_threadNames; //!< tid names
};

} // namespace fabricsim

#endif
