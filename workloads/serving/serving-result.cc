#include "serving-simulation-impl.h"

#include <algorithm>
#include <string>

namespace fabricsim
{

using nlohmann::json;

ServingResult
ServingSimulation::Impl::Finish()
{
    ServingResult r;
    // The warm-up requests, and the steps before the measured ones were sent, are left out of
    // the metrics, as the benchmark leaves them out.
    r.requests.assign(m_records.begin() + std::min<size_t>(m_warmup, m_records.size()),
                      m_records.end());
    for (const StepRecord& st : m_steps)
    {
        if (!m_client || st.launchPs >= m_client->MeasuredStartPs())
        {
            r.steps.push_back(st);
        }
    }
    r.warmupRequests = m_warmup;
    r.prefixCaching = m_sc.kv.prefixCaching;
    r.slo = m_sc.slo;
    r.accelerators = m_sc.NumAccelerators();
    r.pricePerHour = m_sc.hw.pricePerHour;
    DType math = m_sc.model.weightDtype == DType::Fp8 ? DType::Fp8 : m_sc.model.activationDtype;
    r.peakFlops = m_sc.hw.PeakFlops(math);
    r.hbmBwBytesPerSec = m_sc.hw.hbmBwBytesPerSec;
    for (const auto& pool : m_pools)
    {
        const auto& par = pool.spec.par;
        r.pools.push_back({{"role", RoleName(pool.role)},
                           {"tp", par.tp},
                           {"pp", par.pp},
                           {"ep", par.ep},
                           {"dp", par.dp},
                           {"engines", pool.engines.size()},
                           {"hosts", pool.hosts},
                           {"kv_placement", KvPlacementName(m_sc.kv.placement)},
                           {"kv_blocks_per_group", pool.budget.numBlocks},
                           {"kv_tokens_per_group", pool.budget.Tokens()},
                           {"weight_gb_per_rank", pool.budget.weightBytes / 1e9},
                           {"activation_gb_per_rank", pool.budget.activationBytes / 1e9},
                           {"kv_gb_per_rank", pool.budget.kvBytesPerRank / 1e9}});
    }
    size_t listed = 0;
    size_t unfinished = 0;
    for (const auto& rec : m_records)
    {
        if (!rec.Finished())
        {
            unfinished++;
            if (listed++ < 10)
            {
                r.incomplete.push_back("request " + std::to_string(rec.id) + ": "
                                       + std::to_string(rec.tokenPs.size()) + " of "
                                       + std::to_string(rec.outputTokens) + " tokens");
            }
        }
    }
    if (unfinished > 0)
    {
        r.incomplete.push_back(std::to_string(unfinished) + " requests unfinished");
        for (const auto& line : m_exec.Blocked())
        {
            r.incomplete.push_back(line);
        }
        for (const auto& h : m_handoffs)
        {
            r.incomplete.push_back("request " + std::to_string(h.request)
                                   + " waits for decode KV room");
        }
    }
    if (m_sc.record.programs && m_hooks.programs)
    {
        for (const auto& [tid, t] : m_transfers)
        {
            *m_hooks.programs << t.record.ToJson().dump() << "\n";
        }
    }
    else if (m_sc.record.programs)
    {
        r.programTrace = m_trace;
        for (const auto& [tid, t] : m_transfers)
        {
            r.programTrace.push_back(t.record.ToJson());
        }
    }
    r.timeline = m_timeline;
    return r;
}

} // namespace fabricsim
