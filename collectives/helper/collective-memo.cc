#include "collective-memo.h"

#include "ns3/simulator.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace fabricsim
{

namespace
{

/// Polls for rest after a recorded collective's end: every microsecond, for at most 2 ms (a
/// scope still busy then, e.g. DCQCN recovering from CNPs, is not worth storing).
constexpr int64_t kPollPs = 1000000;
constexpr int kMaxPolls = 2000;
/// Spans kept per request (one per fabric state seen).
constexpr size_t kEntriesPerKey = 8;

/// Everything of a request that decides what the fabric does (the tag is only a label).
std::string
KeyOf(const CollectiveRequest& r)
{
    std::ostringstream os;
    os << int(r.kind) << '|' << r.bytes << '|' << r.algorithm << '|' << r.root << '|'
       << r.kernelLaunchPs << '|' << r.kernelMinPs << '|' << r.kernelFillPs << '|';
    for (uint32_t x : r.ranks)
    {
        os << x << ',';
    }
    os << '|';
    for (const auto& row : r.alltoallBytes)
    {
        for (uint64_t b : row)
        {
            os << b << ',';
        }
        os << ';';
    }
    return os.str();
}

} // namespace

struct CollectiveMemo::Recording
{
    std::string key;
    std::vector<uint32_t> hosts;
    int64_t startPs = 0;
    uint64_t span = 0; ///< MemoFabric's span id
    uint64_t eventsAtStart = 0;
    FabricProbe probe;
    std::vector<std::pair<int64_t, int64_t>> calls;
    bool ended = false;  ///< the collective's last completion came
    std::string spoiled; ///< why it will not be stored ("" while it may be)
    /// Verifying: the entry it would have replayed (compared, not stored); entries are never
    /// removed, so the pointer stays valid.
    const CollectiveMemo::Entry* verifying = nullptr;
};

nlohmann::json
CollectiveMemoStats::ToJson() const
{
    nlohmann::json j = {{"lookups", lookups},
                        {"hits", hits},
                        {"recorded", recorded},
                        {"misses", misses},
                        {"not_stored", unstored},
                        {"events_skipped_estimate", eventsSkipped}};
    if (verified > 0 || verifyInconclusive > 0)
    {
        j["verify"] = {{"checked", verified},
                       {"mismatches", verifyMismatches},
                       {"inconclusive", verifyInconclusive},
                       {"max_completion_deviation_ps", maxCompletionDeviationPs},
                       {"max_counter_deviation", maxCounterDeviation},
                       {"first_mismatch", firstMismatch}};
    }
    return j;
}

CollectiveMemo::CollectiveMemo(CollectiveApi& inner, MemoFabric& fabric)
    : m_inner(inner)
    , m_fabric(fabric)
{
}

CollectiveMemo::~CollectiveMemo()
{
    *m_alive = false;
}

int64_t
CollectiveMemo::NowPs() const
{
    return m_inner.NowPs();
}

void
CollectiveMemo::Schedule(int64_t delayPs, Done fn)
{
    m_inner.Schedule(delayPs, std::move(fn));
}

void
CollectiveMemo::SetHorizon(const CollectiveHorizon* horizon)
{
    m_horizon = horizon;
    m_horizonAlive = horizon ? horizon->Alive() : nullptr;
}

const CollectiveHorizon*
CollectiveMemo::Horizon() const
{
    return m_horizon && *m_horizonAlive ? m_horizon : nullptr;
}

void
CollectiveMemo::Miss(const std::string& why)
{
    m_stats.misses[why]++;
}

void
CollectiveMemo::Touch(const std::vector<uint32_t>& hosts)
{
    const int64_t now = NowPs();
    m_reserved.erase(std::remove_if(m_reserved.begin(),
                                    m_reserved.end(),
                                    [now](const auto& r) { return r.second <= now; }),
                     m_reserved.end());
    for (const auto& [reserved, until] : m_reserved)
    {
        if (m_fabric.ScopesOverlap(hosts, reserved))
        {
            throw std::logic_error("collective memo: traffic posted onto a replayed "
                                   "collective's part of the fabric before its span ended (at "
                                   + std::to_string(now) + " ps, span until "
                                   + std::to_string(until) + " ps): the horizon was wrong");
        }
    }
    for (auto& [id, rec] : m_recordings)
    {
        if (rec->spoiled.empty() && m_fabric.ScopesOverlap(hosts, rec->hosts))
        {
            rec->spoiled = "other traffic in its scope";
        }
    }
}

void
CollectiveMemo::SendRecv(uint32_t src, uint32_t dst, uint64_t bytes, Done onDone)
{
    Touch({src, dst});
    m_inner.SendRecv(src, dst, bytes, std::move(onDone));
}

void
CollectiveMemo::Start(const CollectiveRequest& req, RankDone onRankDone, Done onDone)
{
    m_stats.lookups++;
    const std::vector<uint32_t>& hosts = req.ranks;
    Touch(hosts);
    const CollectiveHorizon* horizon = Horizon();
    if (horizon && !horizon->Predictable())
    {
        Miss("unpredictable caller");
        m_inner.Start(req, std::move(onRankDone), std::move(onDone));
        return;
    }
    const int64_t now = NowPs();
    const FabricProbe probe = m_fabric.Probe(hosts);
    if (!probe.notAtRest.empty())
    {
        Miss("not at rest");
        m_inner.Start(req, std::move(onRankDone), std::move(onDone));
        return;
    }
    const std::string key = KeyOf(req);
    std::vector<Entry>& entries = m_entries[key];
    const Entry* match = nullptr;
    for (const Entry& e : entries)
    {
        if (e.state == probe.state && (!e.signalled || e.signalState == probe.signalState))
        {
            match = &e;
            break;
        }
    }
    if (match)
    {
        std::string why;
        if (!m_fabric.ScopeClosed(hosts))
        {
            why = "open scope";
        }
        else if (!horizon)
        {
            why = "no horizon";
        }
        else
        {
            for (const auto& [index, offset] : match->calls)
            {
                if (index >= 0
                    && horizon->QuietUntilPs(hosts.at(size_t(index)), now + offset)
                           < now + match->spanPs)
                {
                    why = "horizon";
                    break;
                }
            }
        }
        if (!why.empty())
        {
            Miss(why);
            m_inner.Start(req, std::move(onRankDone), std::move(onDone));
            return;
        }
        if (m_verifyEvery > 0 && ++m_matches % m_verifyEvery == 0)
        {
            Record(req, std::move(onRankDone), std::move(onDone), probe, match);
            return;
        }
        // Replay: the fabric takes the span's effect now; nothing else may touch the scope
        // until the span ends. Completions at one offset run in one event, in recorded order.
        m_stats.hits++;
        m_stats.eventsSkipped += match->events;
        m_fabric.ApplySpan(hosts, now, match->span);
        m_reserved.emplace_back(hosts, now + match->spanPs);
        auto rankDone = std::make_shared<RankDone>(std::move(onRankDone));
        auto done = std::make_shared<Done>(std::move(onDone));
        const auto& calls = match->calls;
        for (size_t i = 0; i < calls.size();)
        {
            size_t j = i;
            std::vector<int64_t> group;
            while (j < calls.size() && calls[j].second == calls[i].second)
            {
                group.push_back(calls[j].first);
                ++j;
            }
            m_inner.Schedule(calls[i].second,
                             [rankDone, done, group]()
                             {
                                 for (int64_t index : group)
                                 {
                                     if (index < 0)
                                     {
                                         (*done)();
                                     }
                                     else
                                     {
                                         (*rankDone)(uint32_t(index));
                                     }
                                 }
                             });
            i = j;
        }
        return;
    }
    Miss(entries.empty() ? "first of its kind" : "another fabric state");
    Record(req, std::move(onRankDone), std::move(onDone), probe, nullptr);
}

void
CollectiveMemo::Record(const CollectiveRequest& req,
                       RankDone onRankDone,
                       Done onDone,
                       const FabricProbe& probe,
                       const Entry* verifying)
{
    const std::vector<uint32_t>& hosts = req.ranks;
    const int64_t now = NowPs();
    auto rec = std::make_shared<Recording>();
    rec->verifying = verifying;
    rec->key = KeyOf(req);
    rec->hosts = hosts;
    rec->startPs = now;
    rec->probe = probe;
    rec->eventsAtStart = ns3::Simulator::GetEventCount();
    rec->span = m_fabric.BeginSpan(hosts);
    const uint64_t id = m_nextRecording++;
    m_recordings[id] = rec;
    auto alive = m_alive;
    m_inner.Start(
        req,
        [this, alive, rec, onRankDone = std::move(onRankDone)](uint32_t i)
        {
            if (*alive)
            {
                rec->calls.emplace_back(int64_t(i), NowPs() - rec->startPs);
            }
            onRankDone(i);
        },
        [this, alive, rec, id, onDone = std::move(onDone)]()
        {
            if (*alive)
            {
                rec->calls.emplace_back(-1, NowPs() - rec->startPs);
                rec->ended = true;
                // Raw simulator events: polling must not keep a finished run going.
                ns3::Simulator::Schedule(ns3::PicoSeconds(kPollPs),
                                         [this, alive, id]()
                                         {
                                             if (*alive)
                                             {
                                                 PollRest(id, 1);
                                             }
                                         });
            }
            onDone();
        });
}

void
CollectiveMemo::PollRest(uint64_t id, int polls)
{
    auto it = m_recordings.find(id);
    if (it == m_recordings.end())
    {
        return;
    }
    std::shared_ptr<Recording> rec = it->second;
    const bool rested = rec->spoiled.empty() && m_fabric.Probe(rec->hosts).notAtRest.empty();
    if (!rested && rec->spoiled.empty() && polls < kMaxPolls)
    {
        auto alive = m_alive;
        ns3::Simulator::Schedule(ns3::PicoSeconds(kPollPs),
                                 [this, alive, id, polls]()
                                 {
                                     if (*alive)
                                     {
                                         PollRest(id, polls + 1);
                                     }
                                 });
        return;
    }
    m_recordings.erase(it);
    FabricSpan span = m_fabric.EndSpan(rec->span);
    if (rec->verifying)
    {
        if (!rec->spoiled.empty() || !rested)
        {
            m_stats.verifyInconclusive++;
        }
        else
        {
            Verify(*rec->verifying, *rec, span, NowPs() - rec->startPs);
        }
        return;
    }
    std::string why = rec->spoiled;
    if (why.empty() && !rested)
    {
        why = "not at rest 2 ms after its end";
    }
    if (why.empty())
    {
        why = span.unusable;
    }
    if (!why.empty())
    {
        m_stats.unstored[why]++;
        return;
    }
    std::vector<Entry>& entries = m_entries[rec->key];
    if (entries.size() >= kEntriesPerKey)
    {
        m_stats.unstored["too many fabric states for one request"]++;
        return;
    }
    Entry e;
    e.state = std::move(rec->probe.state);
    e.signalled = span.signalled;
    if (e.signalled)
    {
        e.signalState = std::move(rec->probe.signalState);
    }
    e.calls = std::move(rec->calls);
    e.spanPs = NowPs() - rec->startPs;
    e.events = ns3::Simulator::GetEventCount() - rec->eventsAtStart;
    e.span = std::move(span);
    entries.push_back(std::move(e));
    m_stats.recorded++;
}

std::vector<CollectiveMemo::Entry*>
CollectiveMemo::Entries()
{
    std::vector<Entry*> out;
    for (auto& [key, entries] : m_entries)
    {
        for (Entry& e : entries)
        {
            out.push_back(&e);
        }
    }
    return out;
}

void
CollectiveMemo::Verify(const Entry& cached,
                       const Recording& rec,
                       const FabricSpan& span,
                       int64_t spanPs)
{
    m_stats.verified++;
    std::string what;
    if (!span.unusable.empty())
    {
        what = "the simulated span cannot be replayed: " + span.unusable;
    }
    else if (rec.calls.size() != cached.calls.size())
    {
        what = "the completions differ in number";
    }
    else if (span.delta.size() != cached.span.delta.size())
    {
        what = "the span's effect differs in size";
    }
    int64_t worstPs = 0;
    uint64_t worstValue = 0;
    if (what.empty())
    {
        for (size_t i = 0; i < rec.calls.size(); ++i)
        {
            if (rec.calls[i].first != cached.calls[i].first)
            {
                what = "the completions come in another order";
            }
            worstPs = std::max(worstPs, std::abs(rec.calls[i].second - cached.calls[i].second));
        }
        for (size_t i = 0; i < span.delta.size(); ++i)
        {
            const uint64_t a = span.delta[i];
            const uint64_t b = cached.span.delta[i];
            worstValue = std::max(worstValue, a > b ? a - b : b - a);
        }
        if (what.empty() && worstPs > 0)
        {
            what = "a completion " + std::to_string(worstPs) + " ps from the recorded one";
        }
        if (what.empty() && worstValue > 0)
        {
            what = "the span's effect differs (by up to " + std::to_string(worstValue) + ")";
        }
        if (what.empty() && spanPs > cached.spanPs + kPollPs)
        {
            what = "the scope rested later than recorded";
        }
    }
    m_stats.maxCompletionDeviationPs = std::max(m_stats.maxCompletionDeviationPs, worstPs);
    m_stats.maxCounterDeviation = std::max(m_stats.maxCounterDeviation, worstValue);
    if (!what.empty())
    {
        m_stats.verifyMismatches++;
        if (m_stats.firstMismatch.empty())
        {
            m_stats.firstMismatch = what + " (collective at " + std::to_string(rec.startPs)
                                    + " ps on " + std::to_string(rec.hosts.size()) + " ranks)";
        }
    }
}

} // namespace fabricsim
