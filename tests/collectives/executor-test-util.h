/*
 * Helpers for the executor tests: a deterministic stand-in transport with exactly known costs
 * (every connection is its own serial pipe: a message of b bytes takes latency + b / rate,
 * connections never share bandwidth), and small topologies.
 */
#ifndef FABRICSIM_TESTS_EXECUTOR_TEST_UTIL_H
#define FABRICSIM_TESTS_EXECUTOR_TEST_UTIL_H

#include "topology.h"
#include "transport.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <map>
#include <queue>
#include <tuple>
#include <vector>

namespace fabricsim
{
namespace test
{

class PipeTransport : public Transport
{
  public:
    PipeTransport(uint32_t ranks, double bytesPerPs, int64_t latencyPs)
        : m_ranks(ranks)
        , m_bytesPerPs(bytesPerPs)
        , m_latencyPs(latencyPs)
    {
    }

    void Send(uint32_t src, uint32_t dst, uint32_t channel, uint64_t bytes, Callback cb) override
    {
        auto& free = m_pipeFree[std::make_tuple(src, dst, channel)];
        const int64_t start = std::max(free, m_now);
        const int64_t end = start + int64_t(std::llround(double(bytes) / m_bytesPerPs));
        free = end;
        m_sent.push_back({src, dst, channel, bytes, m_now});
        auto& inFlight = m_inFlight[std::make_tuple(src, dst, channel)];
        inFlight++;
        m_maxInFlight = std::max(m_maxInFlight, inFlight);
        Push(end + m_latencyPs,
             [this, src, dst, channel, cb]()
             {
                 m_inFlight[std::make_tuple(src, dst, channel)]--;
                 cb();
             });
    }

    int64_t NowPs() const override
    {
        return m_now;
    }

    void Schedule(int64_t delayPs, Callback fn) override
    {
        Push(m_now + delayPs, fn);
    }

    uint32_t NumRanks() const override
    {
        return m_ranks;
    }

    void Run() override
    {
        while (!m_events.empty())
        {
            auto e = m_events.top();
            m_events.pop();
            m_now = e.t;
            e.fn();
        }
    }

    std::string Name() const override
    {
        return "pipe";
    }

    struct Sent
    {
        uint32_t src, dst, channel;
        uint64_t bytes;
        int64_t atPs;
    };

    std::vector<Sent> m_sent;
    int m_maxInFlight = 0; ///< most messages in flight on one connection at once

  private:
    struct Ev
    {
        int64_t t;
        uint64_t seq;
        Callback fn;
    };

    struct Later
    {
        bool operator()(const Ev& a, const Ev& b) const
        {
            return a.t != b.t ? a.t > b.t : a.seq > b.seq;
        }
    };

    void Push(int64_t t, Callback fn)
    {
        m_events.push(Ev{t, m_seq++, fn});
    }

    uint32_t m_ranks;
    double m_bytesPerPs;
    int64_t m_latencyPs;
    int64_t m_now = 0;
    uint64_t m_seq = 0;
    std::priority_queue<Ev, std::vector<Ev>, Later> m_events;
    std::map<std::tuple<uint32_t, uint32_t, uint32_t>, int64_t> m_pipeFree;
    std::map<std::tuple<uint32_t, uint32_t, uint32_t>, int> m_inFlight;
};

/// N hosts on one switch, every link `rate` with `delay`.
inline Topology
SingleSwitch(int hosts, const std::string& rate = "100Gbps", const std::string& delay = "1us")
{
    nlohmann::json j = {{"type", "single-switch"},
                        {"hosts", hosts},
                        {"host_link", {{"rate", rate}, {"delay", delay}}}};
    return BuildTopology(j, "test.json");
}

} // namespace test
} // namespace fabricsim

#endif
