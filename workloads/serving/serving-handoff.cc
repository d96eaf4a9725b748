// Disaggregated serving: KV-cache handoffs from prefill to decode engines, bulk and layer-wise,
// and the events that bound when the next can start (for the collective memo's horizon).

#include "serving-simulation-impl.h"
#include "unit-conversions.h"

#include <algorithm>
#include <climits>

namespace fabricsim
{

void
ServingSimulation::Impl::WakePrefill(const StepDependencies& trigger)
{
    if (!m_sc.disagg.enabled || m_sc.disagg.transfer != KvTransferMode::Layerwise)
    {
        return;
    }
    Pool& p = m_pools[0];
    for (uint32_t e = 0; e < p.engines.size(); ++e)
    {
        for (uint32_t v = 0; v < p.engines[e].ves.size(); ++v)
        {
            auto& ve = p.engines[e].ves[v];
            bool waiting = std::any_of(ve.scheds.begin(),
                                       ve.scheds.end(),
                                       [](const auto& sc) { return !sc->Waiting().empty(); });
            if (waiting && !ve.inFlight)
            {
                for (uint64_t st : trigger.afterSteps)
                {
                    ve.deps.afterSteps.push_back(st);
                }
                TryLaunch(SlotRef{0, e, v, 0});
            }
        }
    }
}

bool
ServingSimulation::Impl::AdmitLayerwise(const SlotRef& prefill, const SequenceState& s)
{
    if (m_requestTransfer.count(s.id) || m_requests[s.id].outputTokens <= 1)
    {
        return true; // re-admitted after preemption, or nothing to move
    }
    SlotRef dec;
    uint64_t tokens = s.promptTokens;
    uint64_t id = s.id;
    if (!PickSlot(
            1, [&](ServingScheduler& sc) { return sc.Blocks().CanGrow(id, tokens, tokens); }, dec))
    {
        return false; // the decode pool is full: keep the queue waiting
    }
    Sched(dec).Reserve(id, tokens, tokens);
    int64_t tid = m_nextTransfer++;
    Transfer& t = m_transfers[tid];
    t.request = id;
    t.prefill = prefill;
    t.decode = dec;
    t.layerwise = true;
    t.routes = PlanKvRoutes(
        m_sc.model, m_pools[0].spec.par, m_pools[1].engines[dec.engine].layout, dec.group);
    t.record.id = tid;
    t.record.request = id;
    t.record.layerwise = true;
    m_requestTransfer[id] = tid;
    m_records[id].kvTransferStartPs = m_api.NowPs();
    return true;
}

void
ServingSimulation::Impl::TryHandoffs(const StepDependencies& trigger)
{
    while (!m_handoffs.empty())
    {
        if (m_sc.kv.prefixCaching && !m_handoffs.front().hashes)
        {
            m_handoffs.front().hashes
                = NewSequence(m_handoffs.front().request, Role::Decode).blockHashes;
        }
        Handoff h = m_handoffs.front();
        uint64_t tokens = LlmPromptTokens(m_requests[h.request]);
        // With prefix caching the decode engine keeps what it already holds (an earlier turn's
        // prompt and answer) and only the rest moves, as vLLM's NIXL connector pulls only the
        // blocks past the local hit (at most tokens - 1 of them).
        auto cached = [&](const ServingScheduler& sc)
        {
            return sc.Blocks().CachedTokensOf(h.hashes, tokens);
        };
        SlotRef dec;
        if (!PickSlot(
                1,
                [&](ServingScheduler& sc)
                { return sc.Blocks().CanAdmit(h.request, h.hashes, tokens, cached(sc)); },
                dec))
        {
            return; // FIFO: the head waits for decode room
        }
        m_handoffs.pop_front();
        const uint64_t hit = cached(Sched(dec));
        Sched(dec).Reserve(h.request, tokens, hit, h.hashes);
        m_records[h.request].decodeCachedTokens = hit;
        int64_t tid = m_nextTransfer++;
        Transfer& t = m_transfers[tid];
        t.request = h.request;
        t.prefill = h.prefill;
        t.decode = dec;
        t.record.id = tid;
        t.record.request = h.request;
        t.record.deps.afterSteps = {h.prefillStep};
        for (uint64_t st : trigger.afterSteps)
        {
            if (st != h.prefillStep)
            {
                t.record.deps.afterSteps.push_back(st);
            }
        }
        // Sum each (prefill rank, decode rank) pair over the layers.
        const EngineLayout& src = m_pools[0].engines[h.prefill.engine].layout;
        std::map<std::pair<uint32_t, uint32_t>, double> pairs;
        for (const auto& r : PlanKvRoutes(
                 m_sc.model, m_pools[0].spec.par, m_pools[1].engines[dec.engine].layout, dec.group))
        {
            // A sliding layer sends only the window the decode side goes on from.
            pairs[{src.Host(h.prefill.group, r.srcStage, r.srcTp), r.dstHost}]
                += r.bytesPerToken
                   * double(m_sc.model.KvTokensHeld(r.layer, tokens)
                            - (hit > 0 ? m_sc.model.KvTokensHeld(r.layer, hit) : 0));
        }
        RequestRecord& rec = m_records[h.request];
        rec.kvTransferStartPs = m_api.NowPs();
        for (const auto& [pair, bytes] : pairs)
        {
            uint64_t b = units::RoundCount(bytes, "KV transfer bytes");
            t.record.sends.push_back({pair.first, pair.second, b});
            rec.kvTransferBytes += b;
        }
        t.sendsLeft = uint32_t(t.record.sends.size());
        m_bulkInFlight++;
        for (const auto& snd : t.record.sends)
        {
            m_exec.Transfer(uint32_t(snd[0]),
                            uint32_t(snd[1]),
                            snd[2],
                            tid,
                            [this, tid]()
                            {
                                if (--m_transfers.at(tid).sendsLeft == 0)
                                {
                                    OnTransferDone(tid);
                                }
                            });
        }
    }
}

void
ServingSimulation::Impl::CheckTransfer(int64_t tid)
{
    Transfer& t = m_transfers.at(tid);
    if (t.layerwise && t.sealed && !t.done && t.partsDone == t.partsIssued)
    {
        OnTransferDone(tid);
    }
}

void
ServingSimulation::Impl::OnTransferDone(int64_t tid)
{
    Transfer& t = m_transfers.at(tid);
    t.done = true;
    if (!t.layerwise)
    {
        m_bulkInFlight--;
    }
    uint64_t id = t.request;
    m_records[id].kvTransferEndPs = m_api.NowPs();
    // The prefill pool lets go of the KV; the decode pool runs the request.
    Sched(t.prefill).Release(id);
    Ve(t.prefill).deps.afterTransfers.push_back(uint64_t(tid));
    TryLaunch(t.prefill);
    SequenceState s = NewSequence(id, Role::Decode);
    s.generated = 1;
    s.computed = s.promptTokens;
    Sched(t.decode).AddRunning(s);
    Ve(t.decode).deps.afterTransfers.push_back(uint64_t(tid));
    TryLaunch(t.decode);
}

void
ServingSimulation::Impl::ScheduleTrigger(int64_t delayPs, std::function<void()> fn)
{
    const int64_t due = m_api.NowPs() + delayPs;
    m_triggers.insert(due);
    m_api.Schedule(delayPs,
                   [this, due, fn = std::move(fn)]()
                   {
                       m_triggers.erase(m_triggers.find(due));
                       fn();
                   });
}

int64_t
ServingSimulation::Impl::EarliestTriggerPs() const
{
    if (m_bulkInFlight > 0)
    {
        return INT64_MIN;
    }
    return m_triggers.empty() ? INT64_MAX : *m_triggers.begin();
}

} // namespace fabricsim
