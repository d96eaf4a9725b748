/*
 * Test double of the Collective API: an event queue and alpha-beta costs on an idle fabric of
 * servers (ranks r / accelsPerServer share a scale-up domain, others talk over their NICs).
 */
#ifndef FABRICSIM_TESTS_SERVING_FAKE_COLLECTIVES_H
#define FABRICSIM_TESTS_SERVING_FAKE_COLLECTIVES_H

#include "collective-api.h"

#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

namespace fabricsim
{

/**
 * \brief Alpha-beta collectives (no contention between concurrent operations).
 *
 * Bandwidth of a group: the scale-up bandwidth when every rank is in one server, else the NIC
 * bandwidth. Ring all-reduce 2 (n-1) (alpha + B / (n bw)); reduce-scatter and all-gather
 * (n-1) (alpha + B / (n bw)); all-to-all: alpha + the largest per-rank send or receive time,
 * each peer at its pair bandwidth; send/recv alpha + bytes / pair bandwidth.
 */
class FakeCollectives : public CollectiveApi
{
  public:
    /// Cost parameters.
    struct Params
    {
        uint32_t accelsPerServer = 8; //!< ranks per scale-up domain
        double scaleUpBw = 450e9;     //!< bytes/s per rank, inside a server
        double nicBw = 50e9;          //!< bytes/s per rank, between servers
        int64_t alphaPs = 2000000;    //!< per step latency (2 us)
    };

    explicit FakeCollectives(const Params& p);

    void Start(const CollectiveRequest& req, RankDone onRankDone, Done onDone) override;
    void SendRecv(uint32_t src, uint32_t dst, uint64_t bytes, Done onDone) override;
    int64_t NowPs() const override;
    void Schedule(int64_t delayPs, Done fn) override;

    /// Run events until none are left.
    void Run();

    /// Time a collective of \p req takes.
    int64_t CollectiveTimePs(const CollectiveRequest& req) const;
    /// Time a send of \p bytes from \p src to \p dst takes.
    int64_t SendTimePs(uint32_t src, uint32_t dst, uint64_t bytes) const;

    std::vector<CollectiveRequest> started;                      //!< every Start, in order
    std::vector<std::tuple<uint32_t, uint32_t, uint64_t>> sends; //!< every SendRecv

  private:
    double PairBw(uint32_t a, uint32_t b) const;
    double GroupBw(const std::vector<uint32_t>& ranks) const;

    struct Event
    {
        int64_t t;
        uint64_t seq;
        Done fn;
    };
    struct Later
    {
        bool operator()(const Event& a, const Event& b) const
        {
            return a.t != b.t ? a.t > b.t : a.seq > b.seq;
        }
    };

    Params m_p;
    int64_t m_now = 0;
    uint64_t m_seq = 0;
    std::priority_queue<Event, std::vector<Event>, Later> m_events;
};

} // namespace fabricsim

#endif
