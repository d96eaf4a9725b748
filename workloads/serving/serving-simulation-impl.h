#ifndef FABRICSIM_SERVING_SIMULATION_IMPL_H
#define FABRICSIM_SERVING_SIMULATION_IMPL_H

// The serving loop's state, shared by the files that implement it (serving-simulation.cc:
// arrivals, admission and steps; serving-handoff.cc: disaggregated KV handoffs;
// serving-result.cc: the result). Private to the library.

#include "benchmark-client.h"
#include "collective-api.h"
#include "kv-cache.h"
#include "rank-placement.h"
#include "serving-scheduler.h"
#include "serving-simulation.h"
#include "step-executor.h"
#include "step-program-builder.h"

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <vector>

namespace fabricsim
{

class ServingSimulation::Impl
{
  public:
    Impl(const InferenceScenario& sc, CollectiveApi& api);
    void Start();
    ServingResult Finish();
    ServingHooks m_hooks;

  private:
    /// What a pool does.
    enum class Role
    {
        Unified,
        Prefill,
        Decode
    };
    static const char* RoleName(Role r);

    /// A scheduler's address: pool, engine, virtual engine, attention group.
    struct SlotRef
    {
        uint32_t pool = 0;
        uint32_t engine = 0;
        uint32_t ve = 0;
        uint32_t group = 0;
    };
    struct VirtualEngine
    {
        std::vector<std::unique_ptr<ServingScheduler>> scheds; //!< per attention group
        bool inFlight = false;                                 //!< a step is running
        bool pending = false;                                  //!< a launch is scheduled
        int64_t lastStep = -1;                                 //!< previous step id
        int64_t lastLaunchPs = -1;                             //!< previous step's launch
        int64_t lastEndPs = -1;                                //!< previous step's end
        StepDependencies deps;                                 //!< triggers since the last launch
        std::vector<ScheduledBatch> batches;                   //!< the running step's batches
    };

    struct Engine
    {
        EngineLayout layout;
        std::unique_ptr<StepProgramBuilder> builder;
        std::vector<VirtualEngine> ves;
    };

    struct Pool
    {
        Role role = Role::Unified;
        PoolSpec spec;
        std::string field; //!< scenario path of the pool, for errors
        KvCacheBudget budget;
        std::vector<uint32_t> hosts;
        std::vector<Engine> engines;
    };

    struct Transfer
    {
        uint64_t request = 0;
        SlotRef prefill;
        SlotRef decode;
        bool layerwise = false;
        std::vector<KvRoute> routes; //!< layer-wise routes
        uint32_t partsIssued = 0;
        uint32_t partsDone = 0;
        uint32_t sendsLeft = 0; //!< bulk sends not delivered
        bool sealed = false;    //!< prefill finished (layer-wise)
        bool done = false;
        TransferRecord record;
    };

    struct Handoff
    {
        uint64_t request;
        SlotRef prefill;
        uint64_t prefillStep;
        BlockHashList hashes; //!< prefix caching: its decode sequence's (set when first tried)
    };

    void Validate();
    VirtualEngine& Ve(const SlotRef& s)
    {
        return m_pools[s.pool].engines[s.engine].ves[s.ve];
    }
    ServingScheduler& Sched(const SlotRef& s)
    {
        return *Ve(s).scheds[s.group];
    }
    /// The scheduler of pool \p pool with the fewest outstanding sequences (first on ties),
    /// among those that \p ok accepts; false when none.
    bool PickSlot(uint32_t pool, const std::function<bool(ServingScheduler&)>& ok, SlotRef& out);
    void OnArrival(uint64_t id);
    void ScheduleArrival(uint64_t id);
    /// Hands request \p id, sent now, to the least-loaded engine of the first pool once the
    /// frontend has passed it on (serving.execution.request_overhead, prompt_token_overhead).
    void Admit(uint64_t id);
    /// Queues request \p id at the least-loaded engine of the first pool, now.
    void Enqueue(uint64_t id);
    void TryLaunch(const SlotRef& s);
    void Launch(SlotRef s);
    void OnStepDone(SlotRef s, StepRecord rec, const StepStats& stats);
    void TryHandoffs(const StepDependencies& trigger);
    void WakePrefill(const StepDependencies& trigger);
    bool AdmitLayerwise(const SlotRef& prefill, const SequenceState& s);
    void CheckTransfer(int64_t tid);
    void OnTransferDone(int64_t tid);
    /// m_api.Schedule for an event that may launch a step (an arrival, a request's frontend
    /// time, a launch): its time is kept until it runs, for EarliestTriggerPs.
    void ScheduleTrigger(int64_t delayPs, std::function<void()> fn);
    /// The earliest a KV handoff can start other than at the end of a step in flight (the
    /// executor's horizon adds those): the next pending trigger, INT64_MIN while a bulk
    /// transfer is in flight (its end launches a step at a time no one knows).
    int64_t EarliestTriggerPs() const;
    /// Sequence state of request \p id entering a pool of role \p role (with its block
    /// hashes when prefix caching is on).
    SequenceState NewSequence(uint64_t id, Role role) const;
    uint64_t LlmPromptTokens(const Request& r) const;
    /// The first request at or after \p id that is not a later turn of a conversation.
    uint64_t NextFirstTurn(uint64_t id) const;
    /// Request \p id finished: the conversation's next turn is sent after its think time.
    void SendNextTurn(uint64_t id);
    /// The scheduler of the first pool that sequence \p seq goes to (serving.router).
    SlotRef Route(const SequenceState& seq);
    /// InputError where prefix caching is asked for what it does not model.
    void CheckPrefixCaching() const;

    InferenceScenario m_sc;
    CollectiveApi& m_api;
    StepExecutor m_exec;
    std::vector<Request> m_requests;
    std::vector<RequestRecord> m_records;
    // The benchmark client (serving.requests.concurrency / warmup), when there is one.
    std::unique_ptr<BenchmarkClient> m_client;
    uint64_t m_warmup = 0;
    ServingProgress m_progressState; ///< what m_progress is told
    std::vector<Pool> m_pools;
    std::vector<StepRecord> m_steps;
    std::map<int64_t, Transfer> m_transfers;
    std::map<uint64_t, int64_t> m_requestTransfer; //!< layer-wise transfer of a request
    std::deque<Handoff> m_handoffs;                //!< bulk transfers waiting for decode room
    uint64_t m_nextStep = 0;
    int64_t m_nextTransfer = 0;
    std::multiset<int64_t> m_triggers; //!< due times of pending ScheduleTrigger events
    uint64_t m_bulkInFlight = 0;       //!< bulk transfers started and not done
    std::vector<nlohmann::json> m_trace;
    /// When each frontend server is next free (serving.execution.frontend_servers; empty: as
    /// many as requests, the frontend time a pure delay).
    std::vector<int64_t> m_frontendFreePs;
    std::shared_ptr<ChromeTrace> m_timeline;
};

} // namespace fabricsim

#endif // FABRICSIM_SERVING_SIMULATION_IMPL_H
