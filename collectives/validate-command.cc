#include "validate-command.h"

#include "input-error.h"
#include "schedule-loader.h"
#include "schedule-validator.h"

#include <chrono>
#include <iomanip>

namespace fabricsim
{

namespace
{

std::string
Describe(const Schedule& s)
{
    std::string mode = s.m_inPlace ? "in-place" : "out-of-place";
    if (s.m_inPlace && s.m_outOfPlace.value_or(false))
    {
        mode = "in-place and out-of-place";
    }
    return "'" + s.m_name + "' (" + ToString(s.m_collective) + ", " + std::to_string(s.m_ranks)
           + " ranks, " + std::to_string(s.m_chunksPerLoop) + " chunks per loop, " + mode + ", "
           + ToString(s.m_protocol) + ", " + std::to_string(s.m_channels) + " channel(s), "
           + std::to_string(s.StepCount()) + " steps)";
}

} // namespace

int
RunValidateCommand(const std::string& file,
                   const std::string& coll,
                   int ranks,
                   std::ostream& out,
                   std::ostream& err)
{
    std::optional<CollectiveKind> expected;
    if (!coll.empty())
    {
        expected = ParseCollectiveKind(coll);
        if (!expected)
        {
            err << "fabricsim: error: --coll: expected one of allreduce, allgather, reducescatter, "
                   "alltoall, broadcast, reduce, custom, found '"
                << coll << "'\n";
            return 2;
        }
    }
    if (ranks < 0)
    {
        err << "fabricsim: error: --ranks: expected a rank count > 0 (or 0 to take it from the "
               "file), found "
            << ranks << "\n";
        return 2;
    }
    MscclDocument doc;
    try
    {
        doc = LoadScheduleFile(file);
    }
    catch (const fabricsim::InputError& e)
    {
        err << "fabricsim: error: " << e.what() << "\n";
        return 2;
    }
    for (const auto& w : doc.m_warnings)
    {
        err << "fabricsim: warning: " << w << "\n";
    }
    int rc = 0;
    for (size_t i = 0; i < doc.m_schedules.size(); ++i)
    {
        const Schedule& s = doc.m_schedules[i];
        const auto start = std::chrono::steady_clock::now();
        const ValidationReport report = ValidateSchedule(s, expected, ranks);
        const double ms
            = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                  .count();
        out << file;
        if (doc.m_schedules.size() > 1)
        {
            out << " [algo " << i << "]";
        }
        out << ": " << Describe(s) << ": " << (report.m_valid ? "VALID" : "INVALID");
        if (!report.m_valid)
        {
            out << ", " << report.m_problems.size() << " problem(s)";
        }
        else
        {
            // What the executor's tiles are sized for (ns3::CollectiveExecutor::Slots holds it).
            out << ", a connection holds up to " << report.m_connectionChunks
                << " chunk(s) at once";
        }
        out << " (" << std::fixed << std::setprecision(1) << ms << " ms)\n";
        for (const auto& p : report.m_problems)
        {
            out << "  " << p.ToString() << "\n";
        }
        for (const auto& n : report.m_notes)
        {
            out << "  note: " << n << "\n";
        }
        if (!report.m_valid)
        {
            rc = 1;
        }
    }
    return rc;
}

} // namespace fabricsim
