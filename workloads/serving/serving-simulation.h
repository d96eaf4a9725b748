/*
 * The serving loop: requests arrive, engines batch them step by step, each step runs as per-rank
 * programs over the Collective API, and (with disaggregation) prefilled KV moves to the decode
 * pool over the fabric. The entry point for a scenario is RunServing.
 */
#ifndef FABRICSIM_SERVING_SIMULATION_H
#define FABRICSIM_SERVING_SIMULATION_H

#include "inference-scenario.h"
#include "serving-metrics.h"

#include <functional>
#include <iosfwd>
#include <memory>

namespace fabricsim
{

class CollectiveApi;

/**
 * \brief One serving run over a Collective API.
 *
 * Pools: the unified pool, or a prefill and a decode pool. A pool is split into engines (one
 * per attention group, or per EP group with dp_attention); an engine has pp virtual engines
 * (vLLM's pipeline scheme: each its own scheduler with 1/pp of the KV blocks, steps in flight on
 * different stages at once) and, per virtual engine, one scheduler per attention group, all
 * stepping in lock step (idle groups run a one-token dummy batch so the EP collectives match).
 * A new request goes to the scheduler with the fewest outstanding sequences of its pool.
 *
 * A virtual engine launches a step as soon as its previous step is done and it has work; the
 * step's programs go to the StepExecutor. When the step is done the schedulers advance, every
 * sampled token is time-stamped, and finished requests leave (or, from a prefill pool, move on).
 *
 * Disaggregation: a request's first token comes from the prefill pool (its TTFT); the decode
 * pool then needs its prompt's KV. Bulk: when prefill finishes, a decode scheduler reserves the
 * blocks (FIFO; it waits for room), then each decode rank receives its shard from the prefill
 * rank holding those heads (PlanKvRoutes) by CollectiveApi::SendRecv. Layer-wise: the decode
 * blocks are reserved when prefill admits the request, and each layer's KV is sent as soon as
 * the layer is computed (KvSend items in the prefill programs). The prefill blocks are freed, and
 * the request joins the decode batch, when the transfer is complete.
 */
/// Where a serving run stands, reported after every step (progress lines).
struct ServingProgress
{
    int64_t nowPs = 0;             //!< simulated time
    uint64_t steps = 0;            //!< steps done
    uint64_t requestsFinished = 0; //!< requests with every token
    uint64_t requests = 0;         //!< requests offered
    uint64_t tokensGenerated = 0;  //!< output tokens sampled so far
    uint64_t tokens = 0;           //!< output tokens of every request
};

/// Called after every step; cheap callers throttle what they print themselves.
using ServingProgressFn = std::function<void(const ServingProgress&)>;

/// What a caller follows a run by: its progress, and where recorded programs go.
struct ServingHooks
{
    ServingProgressFn progress; //!< told after every step (may be empty)
    /// With record.programs: each program record is written here as a JSON line when its step
    /// launches (transfers at the end) instead of being kept in ServingResult::programTrace, so
    /// recording a long run holds one step at a time.
    std::ostream* programs = nullptr;
};

class ServingSimulation
{
  public:
    /**
     * \brief Prepare a run: place ranks, size KV caches, generate requests. InputError (naming
     * the scenario file and field) for layouts that do not fit, overlapping hosts, or requests no
     * engine can hold.
     */
    ServingSimulation(const InferenceScenario& sc, CollectiveApi& api);
    ~ServingSimulation();

    ServingSimulation(const ServingSimulation&) = delete;
    ServingSimulation& operator=(const ServingSimulation&) = delete;

    /// Schedule the request arrivals (then run the event loop of the API's backend).
    void Start();

    /// Progress and program recording (see ServingHooks).
    void SetHooks(const ServingHooks& hooks);

    /// Collect the result once the event loop has run dry.
    ServingResult Finish();

  private:
    class Impl;
    std::unique_ptr<Impl> m_impl; //!< the loop
};

/**
 * \brief Run scenario \p sc over \p api: Start, \p runEventLoop (e.g. the transport's Run or
 * ns3::Simulator::Run; it must return when no events are left), Finish.
 */
ServingResult RunServing(const InferenceScenario& sc,
                         CollectiveApi& api,
                         const std::function<void()>& runEventLoop,
                         const ServingHooks& hooks = {});

} // namespace fabricsim

#endif
