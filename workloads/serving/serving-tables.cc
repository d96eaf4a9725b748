#include "serving-tables.h"

#include <cstdio>
#include <set>
#include <sstream>

namespace fabricsim
{

namespace
{

/// Milliseconds from picoseconds, to the nanosecond.
std::string
Ms(double ps)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6f", ps * 1e-9);
    return buf;
}

/// Milliseconds of a time that may not have happened (< 0): empty then.
std::string
MsIfReached(int64_t ps)
{
    return ps < 0 ? "" : Ms(double(ps));
}

std::string
Fixed(double v)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6f", v);
    return buf;
}

} // namespace

std::string
RequestsCsv(const ServingResult& r)
{
    std::ostringstream o;
    o << "id,send_ms,arrival_ms,queued_ms,first_token_ms,finish_ms,prompt_tokens,output_tokens,"
         "tokens_done,ttft_ms,tpot_ms,e2e_ms,preemptions"
      << (r.prefixCaching ? ",cached_prompt_tokens\n" : "\n");
    for (const RequestRecord& q : r.requests)
    {
        const bool started = !q.tokenPs.empty();
        const bool done = q.Finished();
        o << q.id << "," << Ms(double(q.arrivalPs)) << "," << Ms(double(q.arrivalPs)) << ","
          << MsIfReached(q.queuedPs) << "," << (started ? Ms(double(q.FirstTokenPs())) : "") << ","
          << (done ? Ms(double(q.tokenPs.back())) : "") << "," << q.promptTokens << ","
          << q.outputTokens << "," << q.tokenPs.size() << "," << (started ? Fixed(q.TtftMs()) : "")
          << "," << (done && q.tokenPs.size() > 1 ? Fixed(q.TpotMs()) : "") << ","
          << (done ? Fixed(q.E2eMs()) : "") << "," << q.preemptions;
        if (r.prefixCaching)
        {
            o << "," << q.cachedPromptTokens;
        }
        o << "\n";
    }
    return o.str();
}

std::string
StepsCsv(const ServingResult& r)
{
    std::set<std::string> kinds;
    for (const StepRecord& s : r.steps)
    {
        for (const auto& [kind, ps] : s.commPs)
        {
            kinds.insert(kind);
        }
    }
    std::ostringstream o;
    o << "step,pool,engine,virtual_engine,start_ms,end_ms,sequences,prefill_tokens,decode_tokens,"
         "compute_ms";
    for (const std::string& k : kinds)
    {
        o << ",comm_" << k << "_ms";
    }
    o << ",sync_ms,idle_ms\n";
    for (const StepRecord& s : r.steps)
    {
        o << s.step << "," << s.pool << "," << s.engine << "," << s.virtualEngine << ","
          << Ms(double(s.launchPs)) << "," << Ms(double(s.endPs)) << "," << s.sequences << ","
          << s.prefillTokens << "," << s.decodeTokens << "," << Ms(s.computePs);
        for (const std::string& k : kinds)
        {
            auto it = s.commPs.find(k);
            o << "," << Ms(it == s.commPs.end() ? 0.0 : it->second);
        }
        o << "," << Ms(s.syncPs) << "," << Ms(s.idlePs) << "\n";
    }
    return o.str();
}

} // namespace fabricsim
