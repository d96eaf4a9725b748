/*
 * A serving benchmark's client (vLLM bench serve --max-concurrency, SGLang bench_serving,
 * genai-perf's concurrency mode): at most C requests in flight, the next sent the instant one
 * finishes; warm-up requests first, the measured ones only once all of those are done.
 */
#ifndef FABRICSIM_SERVING_BENCHMARK_CLIENT_H
#define FABRICSIM_SERVING_BENCHMARK_CLIENT_H

#include <cstdint>
#include <functional>
#include <vector>

namespace fabricsim
{

/**
 * \brief Decides when each request is sent. Requests are ids 0..n-1 in send order; ids below
 * the warm-up count are the warm-up, whose earliest send times count from 0, the measured ones'
 * from the instant the last warm-up request finished.
 */
class BenchmarkClient
{
  public:
    struct Hooks
    {
        std::function<int64_t()> nowPs;                                       //!< the clock
        std::function<void(int64_t delayPs, std::function<void()>)> schedule; //!< a timer
        std::function<void(uint64_t id)> send;                                //!< send it now
    };

    /// \p earliestPs: each request's earliest send time within its phase; \p concurrency 0: no
    /// limit.
    BenchmarkClient(std::vector<int64_t> earliestPs,
                    uint64_t concurrency,
                    uint64_t warmup,
                    Hooks hooks);

    /// Sends what the limit, the phase and the earliest times allow now.
    void Send();
    /// Request \p id finished: the client sends again once this instant's events are done.
    void Done(uint64_t id);
    /// When the measured phase began (0 without warm-up).
    int64_t MeasuredStartPs() const
    {
        return m_phaseStartPs;
    }

  private:
    std::vector<int64_t> m_earliestPs;
    uint64_t m_concurrency;
    uint64_t m_warmup;
    Hooks m_hooks;
    uint64_t m_inFlight = 0;
    uint64_t m_next = 0;
    uint64_t m_warmupLeft;
    int64_t m_phaseStartPs = 0;
    bool m_timerPending = false;
};

} // namespace fabricsim

#endif
