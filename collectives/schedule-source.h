/*
 * Where `fabricsim collective` gets a schedule for each size of its sweep: from a schedule file
 * (the schedule of the requested collective and rank count whose minBytes / maxBytes range holds
 * the size), or from a generator (a named algorithm, or "auto": the fastest candidate on an idle
 * copy of the fabric, timed once per size). Each schedule is generated, checked and validated
 * once.
 */
#ifndef FABRICSIM_SCHEDULE_SOURCE_H
#define FABRICSIM_SCHEDULE_SOURCE_H

#include "executor.h"
#include "generators.h"
#include "schedule-collectives.h"
#include "transport.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace fabricsim
{

/// What a schedule source is asked for (fabricsim collective's --algo, --schedule, ...).
struct ScheduleSourceOptions
{
    std::string algo;         ///< generator name or "auto"; empty when scheduleFile is given
    std::string scheduleFile; ///< MSCCL XML or JSON IR
    int channels = 1;
    int chunks = 1;       ///< pipelining units per rank of generated schedules
    std::string protocol; ///< "" = Simple for generated schedules, the file's own otherwise
    uint32_t root = 0;
    std::string source = "<command line>"; ///< where the options came from, for errors
};

class ScheduleSource
{
  public:
    /// "auto" times its candidates on a transport from \p probe (an idle copy of the fabric)
    /// with \p config. A schedule file is read here: InputError when it holds no schedule of
    /// \p kind on \p ranks.
    ScheduleSource(const ScheduleSourceOptions& opt,
                   CollectiveKind kind,
                   int ranks,
                   int localSize,
                   std::function<std::unique_ptr<Transport>()> probe,
                   const ExecutorConfig& config);

    /// The schedule for \p bytes and a name for it (InputError when the algorithm cannot run
    /// the collective). Outside every range of a schedule file the first schedule still runs.
    const Schedule& For(uint64_t bytes, std::string& name);

    /// nccl-tests' #wrong: problems the validator finds (0 = provably correct); -1 = N/A.
    int64_t Wrong(const Schedule& s);

  private:
    /// What "auto" takes for \p bytes: the fastest candidate on an idle copy of the fabric.
    std::string Auto(uint64_t bytes);
    void LoadFile();

    ScheduleSourceOptions m_opt;
    CollectiveKind m_kind;
    int m_ranks;
    GeneratorOptions m_gen;
    CollectiveOptions m_auto;
    ExecutorConfig m_config;
    std::unique_ptr<Transport> m_probe;
    std::map<uint64_t, std::string> m_tuned;
    std::vector<Schedule> m_file;
    std::map<std::string, Schedule> m_generated;
    std::map<const Schedule*, int64_t> m_wrong;
};

} // namespace fabricsim

#endif
