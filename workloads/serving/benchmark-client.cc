#include "benchmark-client.h"

#include <utility>

namespace fabricsim
{

BenchmarkClient::BenchmarkClient(std::vector<int64_t> earliestPs,
                                 uint64_t concurrency,
                                 uint64_t warmup,
                                 Hooks hooks)
    : m_earliestPs(std::move(earliestPs))
    , m_concurrency(concurrency)
    , m_warmup(warmup)
    , m_hooks(std::move(hooks))
    , m_warmupLeft(warmup)
{
}

void
BenchmarkClient::Send()
{
    while (m_next < m_earliestPs.size() && (m_concurrency == 0 || m_inFlight < m_concurrency))
    {
        const uint64_t id = m_next;
        if (id >= m_warmup && m_warmupLeft > 0)
        {
            return; // the measured requests wait for the warm-up to end
        }
        const int64_t now = m_hooks.nowPs();
        const int64_t earliest = (id < m_warmup ? 0 : m_phaseStartPs) + m_earliestPs[id];
        if (earliest > now)
        {
            if (!m_timerPending)
            {
                m_timerPending = true;
                m_hooks.schedule(earliest - now,
                                 [this]()
                                 {
                                     m_timerPending = false;
                                     Send();
                                 });
            }
            return;
        }
        ++m_inFlight;
        ++m_next;
        m_hooks.send(id);
    }
}

void
BenchmarkClient::Done(uint64_t id)
{
    --m_inFlight;
    if (id < m_warmup && --m_warmupLeft == 0)
    {
        m_phaseStartPs = m_hooks.nowPs();
    }
    // After the finishing step's bookkeeping: the next request reaches the engine as a new
    // arrival would, not in the middle of it.
    m_hooks.schedule(0, [this]() { Send(); });
}

} // namespace fabricsim
