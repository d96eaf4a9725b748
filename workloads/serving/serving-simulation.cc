#include "input-error.h"
#include "serving-memory.h"
#include "serving-simulation-impl.h"
#include "unit-conversions.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

namespace fabricsim
{

using nlohmann::json;

const char*
ServingSimulation::Impl::RoleName(Role r)
{
    switch (r)
    {
    case Role::Unified:
        return "unified";
    case Role::Prefill:
        return "prefill";
    case Role::Decode:
        return "decode";
    }
    return "unified";
}

ServingSimulation::Impl::Impl(const InferenceScenario& sc, CollectiveApi& api)
    : m_sc(sc)
    , m_api(api)
    , m_exec(api)
{
    if (m_sc.record.timeline)
    {
        m_timeline = std::make_shared<ChromeTrace>();
        m_exec.SetTimeline(m_timeline.get(), m_sc.record.maxSteps);
    }
    // KV handoffs start when a step ends (bulk), which the executor bounds, or as a prefill
    // computes its layers (layer-wise), which nothing bounds.
    if (m_sc.disagg.enabled && m_sc.disagg.transfer == KvTransferMode::Bulk)
    {
        m_exec.SetTransfersExpected(true, [this]() { return EarliestTriggerPs(); });
    }
    else
    {
        m_exec.SetTransfersExpected(m_sc.disagg.enabled);
    }
    m_exec.SetTransferPartDone(
        [this](int64_t tid)
        {
            Transfer& t = m_transfers.at(tid);
            t.partsDone++;
            CheckTransfer(tid);
        });

    CheckPrefixCaching();
    std::vector<std::pair<Role, const PoolSpec*>> specs;
    if (m_sc.disagg.enabled)
    {
        specs = {{Role::Prefill, &m_sc.disagg.prefill}, {Role::Decode, &m_sc.disagg.decode}};
    }
    else
    {
        specs = {{Role::Unified, &m_sc.pool}};
    }
    for (uint32_t p = 0; p < specs.size(); ++p)
    {
        Pool pool;
        pool.role = specs[p].first;
        pool.spec = *specs[p].second;
        pool.field = m_sc.disagg.enabled
                         ? std::string("serving.disaggregation.") + RoleName(pool.role)
                         : std::string("parallelism");
        pool.hosts = PoolHosts(pool.spec,
                               m_sc.placement,
                               m_sc.file,
                               m_sc.disagg.enabled ? pool.field + ".hosts"
                                                   : std::string("serving.placement"));
        pool.budget = KvCacheBudget::Compute(
            m_sc.model, m_sc.hw, pool.spec.par, pool.spec.batching, m_sc.kv, m_sc.file, pool.field);
        uint64_t blocksPerVe = pool.budget.numBlocks / pool.spec.par.pp;
        for (auto& layout : SplitEngines(pool.spec, pool.hosts))
        {
            Engine e;
            e.layout = layout;
            e.builder = std::make_unique<StepProgramBuilder>(m_sc, layout);
            e.ves.resize(pool.spec.par.pp);
            for (auto& ve : e.ves)
            {
                for (uint32_t g = 0; g < layout.groups; ++g)
                {
                    ve.scheds.push_back(std::make_unique<ServingScheduler>(pool.spec.batching,
                                                                           blocksPerVe,
                                                                           pool.budget.blockSize,
                                                                           pool.budget.groups,
                                                                           m_sc.kv.prefixCaching));
                }
            }
            pool.engines.push_back(std::move(e));
        }
        m_pools.push_back(std::move(pool));
    }
    // Hooks and block holding need the final addresses of the schedulers.
    for (uint32_t p = 0; p < m_pools.size(); ++p)
    {
        if (m_pools[p].role != Role::Prefill)
        {
            continue;
        }
        for (uint32_t e = 0; e < m_pools[p].engines.size(); ++e)
        {
            for (uint32_t v = 0; v < m_pools[p].engines[e].ves.size(); ++v)
            {
                auto& ve = m_pools[p].engines[e].ves[v];
                for (uint32_t g = 0; g < ve.scheds.size(); ++g)
                {
                    ve.scheds[g]->SetHoldFinished(true);
                    if (m_sc.disagg.transfer == KvTransferMode::Layerwise)
                    {
                        SlotRef slot{p, e, v, g};
                        ve.scheds[g]->SetAdmitHook([this, slot](const SequenceState& s)
                                                   { return AdmitLayerwise(slot, s); });
                    }
                }
            }
        }
    }
    m_requests = GenerateRequests(m_sc.requests);
    m_warmup = m_sc.requests.warmup;
    if (m_sc.requests.concurrency > 0 || m_warmup > 0)
    {
        std::vector<int64_t> earliest;
        for (const Request& r : m_requests)
        {
            earliest.push_back(r.arrivalPs);
        }
        BenchmarkClient::Hooks hooks;
        hooks.nowPs = [this]()
        {
            return m_api.NowPs();
        };
        hooks.schedule = [this](int64_t delayPs, std::function<void()> f)
        {
            ScheduleTrigger(delayPs, std::move(f));
        };
        hooks.send = [this](uint64_t id)
        {
            m_records[id].arrivalPs = m_api.NowPs();
            Admit(id);
        };
        m_client = std::make_unique<BenchmarkClient>(
            std::move(earliest), m_sc.requests.concurrency, m_warmup, std::move(hooks));
    }
    if (m_sc.requests.fromTrace)
    {
        // The reader checked the requests alone; the steps depend on this scenario's batching.
        double tokens = 0;
        double longest = 0;
        for (const Request& r : m_requests)
        {
            tokens += double(r.outputTokens);
            longest = std::max(longest, double(r.outputTokens));
        }
        CheckServingFitsMemory(double(m_requests.size()),
                               tokens,
                               m_sc.MaxNumSeqs(),
                               m_sc.file,
                               "serving.requests.trace",
                               m_sc.TimelineBytes(tokens, longest));
    }
    Validate();
    for (const auto& r : m_requests)
    {
        RequestRecord rec;
        rec.id = r.id;
        rec.arrivalPs = r.arrivalPs;
        rec.promptTokens = LlmPromptTokens(r);
        rec.outputTokens = r.outputTokens;
        m_records.push_back(rec);
    }
}

void
ServingSimulation::Impl::Validate()
{
    const std::string& file = m_sc.file;
    // Pools and a remote KV pool must not share hosts.
    std::map<uint32_t, std::string> owner;
    for (const auto& pool : m_pools)
    {
        for (uint32_t h : pool.hosts)
        {
            if (!owner.emplace(h, pool.field).second)
            {
                throw fabricsim::InputError(file,
                                            pool.field + ".hosts",
                                            "hosts not used by another pool",
                                            "host " + std::to_string(h) + " also in " + owner[h]);
            }
        }
    }
    for (uint32_t h : m_sc.kv.poolHosts)
    {
        if (m_sc.placement.numHosts > 0 && h >= m_sc.placement.numHosts)
        {
            throw fabricsim::InputError(file,
                                        "serving.kv_cache.pool_hosts",
                                        "hosts below the topology's "
                                            + std::to_string(m_sc.placement.numHosts),
                                        "host " + std::to_string(h));
        }
        if (owner.count(h))
        {
            throw fabricsim::InputError(file,
                                        "serving.kv_cache.pool_hosts",
                                        "memory-pool hosts that run no engine",
                                        "host " + std::to_string(h) + " in " + owner[h]);
        }
    }
    if (m_sc.disagg.enabled)
    {
        uint32_t a = m_sc.disagg.prefill.par.tp;
        uint32_t b = m_sc.disagg.decode.par.tp;
        if (std::max(a, b) % std::min(a, b) != 0)
        {
            throw fabricsim::InputError(file,
                                        "serving.disaggregation.decode.parallelism.tp",
                                        "a tp that divides or is a multiple of the prefill tp ("
                                            + std::to_string(a) + ")",
                                        std::to_string(b));
        }
    }
    const std::string reqField = "serving.requests";
    for (const auto& r : m_requests)
    {
        if ((r.images > 0 || r.audioSeconds > 0) && !m_sc.model.encoder)
        {
            throw fabricsim::InputError(file,
                                        reqField + (r.images > 0 ? ".images" : ".audio_seconds"),
                                        "a model with an encoder for multimodal requests",
                                        "request " + std::to_string(r.id) + " with media");
        }
        uint64_t prompt = LlmPromptTokens(r);
        for (const auto& pool : m_pools)
        {
            uint64_t need = units::CheckedAdd(
                prompt, pool.role == Role::Prefill ? 1 : r.outputTokens, "request tokens");
            const uint64_t perStage = pool.budget.numBlocks / pool.spec.par.pp;
            const uint64_t cap = pool.budget.TokensIn(perStage);
            if (!pool.budget.Holds(need, pool.spec.batching.maxNumBatchedTokens, perStage))
            {
                throw fabricsim::InputError(file,
                                            reqField,
                                            "requests whose tokens fit in one scheduler's KV cache "
                                            "of the "
                                                + std::string(RoleName(pool.role)) + " pool ("
                                                + std::to_string(cap) + " tokens)",
                                            "request " + std::to_string(r.id) + " with "
                                                + std::to_string(need) + " tokens");
            }
            if (!pool.spec.batching.chunkedPrefill && need > pool.spec.batching.maxNumBatchedTokens)
            {
                throw fabricsim::InputError(file,
                                            "serving.batching.max_num_batched_tokens",
                                            "a budget that holds a whole prompt + output without "
                                            "chunked prefill (request "
                                                + std::to_string(r.id) + ": " + std::to_string(need)
                                                + " tokens)",
                                            std::to_string(pool.spec.batching.maxNumBatchedTokens));
            }
        }
    }
}

void
ServingSimulation::Impl::Start()
{
    if (m_client)
    {
        m_client->Send();
        return;
    }
    ScheduleArrival(0);
}

void
ServingSimulation::Impl::ScheduleArrival(uint64_t id)
{
    id = NextFirstTurn(id);
    // One pending arrival at a time keeps the event queue small for long traces.
    if (id < m_requests.size())
    {
        ScheduleTrigger(std::max<int64_t>(0, m_requests[id].arrivalPs - m_api.NowPs()),
                        [this, id]() { OnArrival(id); });
    }
}

bool
ServingSimulation::Impl::PickSlot(uint32_t pool,
                                  const std::function<bool(ServingScheduler&)>& ok,
                                  SlotRef& out)
{
    size_t best = SIZE_MAX;
    Pool& p = m_pools[pool];
    for (uint32_t e = 0; e < p.engines.size(); ++e)
    {
        for (uint32_t v = 0; v < p.engines[e].ves.size(); ++v)
        {
            auto& ve = p.engines[e].ves[v];
            for (uint32_t g = 0; g < ve.scheds.size(); ++g)
            {
                size_t n = ve.scheds[g]->Outstanding();
                if (n < best && (!ok || ok(*ve.scheds[g])))
                {
                    best = n;
                    out = SlotRef{pool, e, v, g};
                }
            }
        }
    }
    return best != SIZE_MAX;
}

void
ServingSimulation::Impl::OnArrival(uint64_t id)
{
    // Every request of this instant arrives now, so that one step can take them all.
    uint64_t next = id;
    while ((next = NextFirstTurn(next)) < m_requests.size()
           && m_requests[next].arrivalPs <= m_api.NowPs())
    {
        Admit(next);
        ++next;
    }
    ScheduleArrival(next);
}

void
ServingSimulation::Impl::Admit(uint64_t id)
{
    // The frontend's time before the engine sees the request (0 by default: at once).
    const double frontendSec
        = m_sc.exec.requestOverheadSec
          + m_sc.exec.promptTokenOverheadSec * double(m_records[id].promptTokens);
    if (frontendSec > 0)
    {
        int64_t delayPs = units::SecondsToPs(frontendSec, "request overhead");
        if (m_sc.exec.frontendServers > 0)
        {
            // A request waits for the first free server in arrival order (FIFO), then holds
            // it for its frontend time.
            if (m_frontendFreePs.empty())
            {
                m_frontendFreePs.assign(m_sc.exec.frontendServers, 0);
            }
            auto it = std::min_element(m_frontendFreePs.begin(), m_frontendFreePs.end());
            const int64_t start = std::max(*it, m_api.NowPs());
            if (start > std::numeric_limits<int64_t>::max() - delayPs)
            {
                // Requests queued past the clock's 106 days: a unit left off, not a run.
                units::ThrowOverflow("frontend queue (serving.execution.frontend_servers)",
                                     std::to_string(id + 1) + " requests");
            }
            *it = start + delayPs;
            delayPs = *it - m_api.NowPs();
        }
        ScheduleTrigger(delayPs, [this, id]() { Enqueue(id); });
        return;
    }
    Enqueue(id);
}

void
ServingSimulation::Impl::Enqueue(uint64_t id)
{
    SequenceState seq = NewSequence(id, m_pools[0].role);
    const SlotRef slot = Route(seq);
    seq.enqueuedPs = m_api.NowPs();
    Sched(slot).Enqueue(seq);
    VirtualEngine& ve = Ve(slot);
    ve.deps.notBeforePs = std::max(ve.deps.notBeforePs, m_api.NowPs());
    TryLaunch(slot);
}

void
ServingSimulation::Impl::TryLaunch(const SlotRef& s)
{
    VirtualEngine& ve = Ve(s);
    if (ve.inFlight || ve.pending)
    {
        return;
    }
    ve.pending = true;
    SlotRef slot{s.pool, s.engine, s.ve, 0};
    // Launch after the events of this instant, so that simultaneous arrivals share the step.
    ScheduleTrigger(0, [this, slot]() { Launch(slot); });
}

void
ServingSimulation::Impl::Launch(SlotRef s)
{
    VirtualEngine& ve = Ve(s);
    ve.pending = false;
    if (ve.inFlight)
    {
        return;
    }
    Pool& pool = m_pools[s.pool];
    Engine& engine = pool.engines[s.engine];
    const int64_t now = m_api.NowPs();
    // Async scheduling: a step launched as the previous one ends was decided when that one
    // launched, so it admits only what the engine held then. A group with nothing to run
    // under that rule would leave its GPU idle, and its engine schedules at once instead.
    const bool ahead = m_sc.exec.asyncScheduling && ve.lastEndPs == now;
    const int64_t decidedPs = ahead ? ve.lastLaunchPs : now;
    std::vector<ScheduledBatch> batches;
    bool any = false;
    for (auto& sched : ve.scheds)
    {
        // The engine's loop takes what arrived when it next runs: vLLM's queued_ts. Arrivals
        // join the back of the queue (preempted sequences the front, taken long ago), so the
        // ones not yet taken are its tail: stop at the first taken, not scan a long queue.
        const std::deque<uint64_t>& waiting = sched->Waiting();
        for (auto it = waiting.rbegin(); it != waiting.rend() && m_records[*it].queuedPs < 0; ++it)
        {
            m_records[*it].queuedPs = now;
        }
        batches.push_back(sched->Schedule(decidedPs));
        int64_t groupDecidedPs = decidedPs;
        if (ahead && batches.back().Empty())
        {
            batches.back() = sched->Schedule(now);
            groupDecidedPs = now;
        }
        for (const ScheduledSequence& seq : batches.back().sequences)
        {
            if (m_records[seq.id].scheduledPs < 0)
            {
                m_records[seq.id].scheduledPs
                    = std::max(groupDecidedPs, m_records[seq.id].queuedPs);
            }
        }
        for (uint64_t id : batches.back().preemptedIds)
        {
            m_records[id].preemptions++;
        }
        any = any || !batches.back().Empty();
    }
    if (!any)
    {
        return;
    }
    uint64_t step = m_nextStep++;
    StepRecord rec;
    rec.step = step;
    rec.pool = s.pool;
    rec.engine = s.engine;
    rec.virtualEngine = s.ve;
    std::vector<StepBatch> stepBatches;
    std::vector<LayerwiseKvSend> sends;
    for (uint32_t g = 0; g < batches.size(); ++g)
    {
        const ScheduledBatch& b = batches[g];
        if (b.Empty())
        {
            // Lock step: an idle attention group runs a one-token dummy batch.
            StepBatch dummy;
            dummy.sequences.push_back(SequenceWork{1, 1, false});
            stepBatches.push_back(dummy);
            continue;
        }
        stepBatches.push_back(b.ToStepBatch());
        rec.sequences += uint32_t(b.sequences.size());
        rec.prefillTokens += b.PrefillTokens();
        rec.decodeTokens += b.Tokens() - b.PrefillTokens();
        for (size_t k = 0; k < b.sequences.size(); ++k)
        {
            auto it = m_requestTransfer.find(b.sequences[k].id);
            if (pool.role == Role::Prefill && it != m_requestTransfer.end())
            {
                sends.push_back({g, k, it->second, m_transfers.at(it->second).routes});
            }
        }
    }
    auto prog = std::make_shared<StepProgram>(engine.builder->Build(step, stepBatches, sends));
    prog->pool = s.pool;
    prog->engine = s.engine;
    prog->virtualEngine = s.ve;
    prog->deps = ve.deps;
    if (ve.lastStep >= 0)
    {
        prog->deps.afterSteps.push_back(uint64_t(ve.lastStep));
    }
    std::sort(prog->deps.afterSteps.begin(), prog->deps.afterSteps.end());
    prog->deps.afterSteps.erase(
        std::unique(prog->deps.afterSteps.begin(), prog->deps.afterSteps.end()),
        prog->deps.afterSteps.end());
    ve.deps = {};
    for (const auto& rp : prog->ranks)
    {
        for (const auto& it : rp.items)
        {
            if (it.op == CommOp::KvSend && it.type == ProgramItem::Type::Comm)
            {
                Transfer& t = m_transfers.at(it.transferId);
                t.partsIssued++;
                t.record.parts++;
                m_records[t.request].kvTransferBytes += it.bytes;
            }
        }
    }
    if (m_sc.record.programs && m_hooks.programs)
    {
        *m_hooks.programs << prog->ToJson().dump() << "\n";
    }
    else if (m_sc.record.programs)
    {
        m_trace.push_back(prog->ToJson());
    }
    ve.inFlight = true;
    ve.lastLaunchPs = now;
    ve.batches = std::move(batches);
    m_exec.Submit(prog, [this, s, rec](const StepStats& stats) { OnStepDone(s, rec, stats); });
}

void
ServingSimulation::Impl::OnStepDone(SlotRef s, StepRecord rec, const StepStats& stats)
{
    rec.SetTiming(stats);
    m_steps.push_back(rec);
    if (m_timeline && (m_sc.record.maxSteps == 0 || rec.step < m_sc.record.maxSteps))
    {
        uint32_t pid = 1000000 + s.pool * 1000 + s.engine;
        m_timeline->NameProcess(pid,
                                std::string(RoleName(m_pools[s.pool].role)) + " engine "
                                    + std::to_string(s.engine));
        m_timeline->Slice(pid,
                          s.ve,
                          "step " + std::to_string(rec.step),
                          "step",
                          rec.launchPs,
                          rec.DurationPs(),
                          {{"sequences", rec.sequences},
                           {"prefill_tokens", rec.prefillTokens},
                           {"decode_tokens", rec.decodeTokens}});
    }
    int64_t now = m_api.NowPs();
    VirtualEngine& ve = Ve(s);
    Pool& pool = m_pools[s.pool];
    ve.inFlight = false;
    ve.lastStep = int64_t(rec.step);
    ve.lastEndPs = now;
    std::vector<ScheduledBatch> batches = std::move(ve.batches);
    ve.batches.clear();
    bool freed = false;
    for (uint32_t g = 0; g < batches.size(); ++g)
    {
        for (const ScheduledSequence& seq : batches[g].sequences)
        {
            if (seq.prefill && m_records[seq.id].prefillStartPs < 0)
            {
                m_records[seq.id].prefillStartPs = rec.launchPs;
                m_records[seq.id].cachedPromptTokens = seq.cacheHit;
            }
        }
        StepOutcome out = ve.scheds[g]->Complete(batches[g]);
        for (uint64_t id : out.sampled)
        {
            m_records[id].tokenPs.push_back(now);
            m_progressState.tokensGenerated++;
            if (m_records[id].tokenPs.size() == std::max<uint64_t>(1, m_records[id].outputTokens))
            {
                m_progressState.requestsFinished++;
                if (m_client)
                {
                    m_client->Done(id);
                }
                SendNextTurn(id);
            }
        }
        freed = freed || !out.finished.empty();
        for (uint64_t id : out.finished)
        {
            if (pool.role != Role::Prefill)
            {
                continue;
            }
            SlotRef slot{s.pool, s.engine, s.ve, g};
            auto lw = m_requestTransfer.find(id);
            if (lw != m_requestTransfer.end())
            {
                Transfer& t = m_transfers.at(lw->second);
                t.sealed = true;
                t.record.deps.afterSteps = {rec.step}; // ends no earlier than the prefill
                CheckTransfer(lw->second);
            }
            else if (m_requests[id].outputTokens <= 1)
            {
                ve.scheds[g]->Release(id); // done at its first token: nothing to move
            }
            else
            {
                m_handoffs.push_back({id, slot, rec.step});
            }
        }
    }
    StepDependencies trigger;
    trigger.afterSteps = {rec.step};
    if (!m_handoffs.empty())
    {
        TryHandoffs(trigger);
    }
    if (pool.role == Role::Decode && freed)
    {
        WakePrefill(trigger);
    }
    TryLaunch(s);
    if (m_hooks.progress)
    {
        ServingProgress& p = m_progressState;
        if (p.requests != m_records.size())
        {
            p.requests = m_records.size();
            p.tokens = 0;
            for (const RequestRecord& r : m_records)
            {
                p.tokens += std::max<uint64_t>(1, r.outputTokens);
            }
        }
        p.nowPs = now;
        p.steps = m_steps.size();
        m_hooks.progress(p);
    }
}

ServingSimulation::ServingSimulation(const InferenceScenario& sc, CollectiveApi& api)
    : m_impl(std::make_unique<Impl>(sc, api))
{
}

ServingSimulation::~ServingSimulation() = default;

void
ServingSimulation::Start()
{
    m_impl->Start();
}

void
ServingSimulation::SetHooks(const ServingHooks& hooks)
{
    m_impl->m_hooks = hooks;
}

ServingResult
ServingSimulation::Finish()
{
    return m_impl->Finish();
}

ServingResult
RunServing(const InferenceScenario& sc,
           CollectiveApi& api,
           const std::function<void()>& runEventLoop,
           const ServingHooks& hooks)
{
    ServingSimulation sim(sc, api);
    sim.SetHooks(hooks);
    sim.Start();
    runEventLoop();
    return sim.Finish();
}

} // namespace fabricsim
