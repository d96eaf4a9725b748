/*
 * Analytical (flow-level) Transport: every message is a flow along its routed path; concurrent
 * flows share each direction of each link by max-min fairness (progressive filling), recomputed
 * whenever a flow starts or finishes; delivery adds propagation, store-and-forward of the last
 * frame and a per-message overhead. Flows count the same wire bytes as the packet fabric
 * (RoCEv2 headers per MTU frame, ACKs on the reverse path), so the two backends agree on
 * uncongested fabrics and differ where queues, PFC and congestion control matter.
 * Pure C++ with its own event queue (no ns-3).
 */
#ifndef FABRICSIM_ANALYTICAL_TRANSPORT_H
#define FABRICSIM_ANALYTICAL_TRANSPORT_H

#include "topology.h"
#include "transport.h"

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <queue>
#include <tuple>
#include <vector>

namespace fabricsim
{

/// Wire accounting and latency terms of the analytical backend.
struct AnalyticalOptions
{
    uint32_t m_mtuBytes = 1000;           ///< payload bytes per frame
    uint32_t m_frameOverheadBytes = 82;   ///< Eth+IPv4+UDP+BTH+ICRC+FCS (62) + preamble/IFG (20)
    uint32_t m_firstFrameExtraBytes = 16; ///< RETH on the first frame of an RDMA WRITE
    uint32_t m_ackFrameBytes = 86;        ///< ACK frame (66) + preamble/IFG (20)
    uint32_t m_ackInterval = 1;           ///< data frames per ACK; 0 = ACKs not counted
    int64_t m_messageOverheadPs = 0;      ///< added to every message's delivery
    /// With more than 32 flows active, completions within this fraction of the time to the next
    /// one are handled together, so a thousand-flow all-to-all costs a few rate recomputations,
    /// not one per flow (error <= it); fewer flows are computed exactly.
    double m_completionSlack = 0.002;
    /// Run() stops at this simulated time with work left (the scenario's stop_ns); 0: never.
    int64_t m_stopPs = 0;
};

class AnalyticalTransport : public Transport
{
  public:
    /// Ranks are the topology's hosts in order.
    explicit AnalyticalTransport(const Topology& topo, const AnalyticalOptions& opt = {});
    ~AnalyticalTransport() override;

    void Send(uint32_t src,
              uint32_t dst,
              uint32_t channel,
              uint64_t bytes,
              Callback onDelivered) override;
    int64_t NowPs() const override;
    void Schedule(int64_t delayPs, Callback fn) override;
    uint32_t NumRanks() const override;
    void Run() override;
    std::string Name() const override;
    std::string StopReport() const override;

    bool ReachedStopTime() const override
    {
        return m_stopped;
    }

    /// Bytes a message of \p payload bytes occupies on the wire.
    uint64_t WireBytes(uint64_t payload) const;

    /// Delivery time of a lone message src -> dst of \p bytes on an idle fabric.
    int64_t IdealPs(uint32_t src, uint32_t dst, uint64_t bytes);

    /// Number of max-min recomputations so far (a cost figure for benchmarks).
    uint64_t Reallocations() const
    {
        return m_reallocations;
    }

    uint64_t MessagesDelivered() const
    {
        return m_delivered;
    }

    /// Events run so far (deliveries, timers, rate changes): the figure events/s is taken of.
    uint64_t EventsRun() const
    {
        return m_eventsRun;
    }

  private:
    /// A routed path: directed-link resources with their load per byte/s of the flow.
    struct Path
    {
        std::vector<uint32_t> m_forward; ///< resources carrying the data
        std::vector<uint32_t> m_reverse; ///< resources carrying the ACKs
        std::vector<double> m_hopBytesPerSecond;
        int64_t m_propagationPs = 0;
    };

    struct Message
    {
        uint64_t m_payload = 0;
        Callback m_onDelivered;
    };

    struct Connection
    {
        uint32_t m_src = 0;
        uint32_t m_dst = 0;
        const Path* m_path = nullptr;
        std::deque<Message> m_queue; ///< head is the active flow when m_active
        bool m_active = false;
        double m_remaining = 0; ///< wire bytes of the head still to send
        double m_rate = 0;      ///< bytes/s
        double m_ackCoef = 0;   ///< reverse load per forward byte of the head
        int64_t m_lastDeliveryPs = 0;
    };

    struct Event
    {
        int64_t m_timePs;
        uint64_t m_seq;
        Callback m_fn;
    };

    struct Later
    {
        bool operator()(const Event& a, const Event& b) const
        {
            return a.m_timePs != b.m_timePs ? a.m_timePs > b.m_timePs : a.m_seq > b.m_seq;
        }
    };

    const Path& PathFor(uint32_t src, uint32_t dst, uint32_t channel);
    void Push(int64_t timePs, Callback fn);
    void RequestUpdate();
    void Update();
    /// Make the head message of \p conn the connection's flow (the caller lists it active).
    void Activate(int conn);
    void Reallocate();
    int64_t LatencyPs(const Path& p, uint64_t payload) const;

    Topology m_topo;
    std::unique_ptr<Routing> m_routing;
    AnalyticalOptions m_opt;
    std::vector<double> m_capacity; ///< bytes/s per resource (2 per link)
    std::map<std::tuple<uint32_t, uint32_t, uint32_t>, std::unique_ptr<Path>> m_paths;
    std::vector<Connection> m_conns;
    std::map<std::tuple<uint32_t, uint32_t, uint32_t>, int> m_connIndex;
    std::vector<int> m_active; ///< connections with an active flow
    std::priority_queue<Event, std::vector<Event>, Later> m_events;
    uint64_t m_seq = 0;
    int64_t m_nowPs = 0;
    bool m_stopped = false; ///< the last Run() reached m_opt.m_stopPs with events left
    uint64_t m_eventsRun = 0;
    int64_t m_lastUpdatePs = 0;
    bool m_updatePending = false;
    uint64_t m_generation = 0;
    uint64_t m_reallocations = 0;
    uint64_t m_delivered = 0;
    // Scratch of Reallocate, kept to avoid reallocation per call.
    std::vector<double> m_residual;
    std::vector<double> m_load;
    std::vector<uint64_t> m_stamp;
    std::vector<std::vector<int>> m_users;
    uint64_t m_epoch = 0;
};

/// Idle analytical copies of \p topo (each with its own copy of the fabric and its routing), for
/// the automatic algorithm to time its candidates on (CollectiveOptions::m_probe).
std::function<std::unique_ptr<Transport>()> AnalyticalProbe(const Topology& topo,
                                                            const AnalyticalOptions& opt = {});

} // namespace fabricsim

#endif
