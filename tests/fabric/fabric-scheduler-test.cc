// ns3::FabricScheduler: within one picosecond, unkeyed events run first in the order they were
// scheduled, then keyed events (frame arrivals) by key, whatever order they were inserted in;
// and a whole fabric run under it is complete, conserves frames and repeats byte for byte.
#include "scenario-runner.h"

#include "ns3/fabric-scheduler.h"
#include "ns3/fabric-setup.h"
#include "ns3/global-value.h"
#include "ns3/keyed-event.h"
#include "ns3/map-scheduler.h"
#include "ns3/type-id.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <tuple>
#include <vector>

using nlohmann::json;

namespace
{

class Plain : public ns3::EventImpl
{
    void Notify() override
    {
    }
};

class Keyed : public ns3::KeyedEventImpl
{
  public:
    explicit Keyed(uint64_t key)
        : KeyedEventImpl(key)
    {
    }

  private:
    void Notify() override
    {
    }
};

struct Spec
{
    uint64_t ts;
    bool keyed;
    uint64_t key;
};

/// Inserts \p specs in the order \p order (uids numbering the insertions, as the simulator
/// does) and returns the spec indexes in the order the scheduler gives them back.
std::vector<size_t>
Drain(const std::vector<Spec>& specs, const std::vector<size_t>& order)
{
    auto sched = ns3::CreateObject<ns3::FabricScheduler>();
    std::vector<ns3::Ptr<ns3::EventImpl>> impls;
    std::map<const ns3::EventImpl*, size_t> index;
    uint32_t uid = 0;
    for (size_t i : order)
    {
        ns3::Ptr<ns3::EventImpl> e = specs[i].keyed
                                         ? ns3::Ptr<ns3::EventImpl>(new Keyed(specs[i].key), false)
                                         : ns3::Ptr<ns3::EventImpl>(new Plain(), false);
        impls.push_back(e);
        index[ns3::PeekPointer(e)] = i;
        sched->Insert({ns3::PeekPointer(e), {specs[i].ts, uid++, 0}});
    }
    std::vector<size_t> out;
    while (!sched->IsEmpty())
    {
        out.push_back(index.at(sched->RemoveNext().impl));
    }
    return out;
}

/// The keyed entries of \p drained only.
std::vector<size_t>
KeyedOnly(const std::vector<Spec>& specs, const std::vector<size_t>& drained)
{
    std::vector<size_t> out;
    for (size_t i : drained)
    {
        if (specs[i].keyed)
        {
            out.push_back(i);
        }
    }
    return out;
}

} // namespace

TEST(FabricScheduler, SimultaneousArrivalsRunInKeyOrderWhateverTheInsertionOrder)
{
    using ns3::KeyedEventImpl;
    const std::vector<Spec> specs = {
        {100, true, KeyedEventImpl::ArrivalKey(7, 2)},
        {100, false, 0},
        {100, true, KeyedEventImpl::ArrivalKey(3, 1)},
        {50, true, KeyedEventImpl::ArrivalKey(9, 0)},
        {100, true, KeyedEventImpl::ArrivalKey(3, 4)},
        {100, false, 0},
        {200, false, 0},
        {100, true, KeyedEventImpl::ArrivalKey(12, 1)},
        {50, false, 0},
    };
    std::vector<size_t> forward(specs.size());
    for (size_t i = 0; i < forward.size(); ++i)
    {
        forward[i] = i;
    }
    std::vector<size_t> backward(forward.rbegin(), forward.rend());
    std::vector<size_t> mixed = {4, 8, 0, 6, 2, 5, 7, 1, 3};

    const std::vector<size_t> a = Drain(specs, forward);
    // Time first; at 50 the plain event, then the arrival; at 100 both plain events in the
    // order they were scheduled, then arrivals by (node, device); 200 last.
    EXPECT_EQ(a, (std::vector<size_t>{8, 3, 1, 5, 2, 4, 0, 7, 6}));
    for (const auto& order : {backward, mixed})
    {
        const std::vector<size_t> b = Drain(specs, order);
        EXPECT_EQ(KeyedOnly(specs, b), KeyedOnly(specs, a));
        for (size_t k = 1; k < b.size(); ++k)
        {
            EXPECT_LE(specs[b[k - 1]].ts, specs[b[k]].ts);
            if (specs[b[k - 1]].ts == specs[b[k]].ts)
            {
                EXPECT_FALSE(specs[b[k - 1]].keyed && !specs[b[k]].keyed)
                    << "a keyed event ran before an unkeyed one of its time";
            }
        }
    }
}

TEST(FabricScheduler, RemoveTakesOutExactlyThatEvent)
{
    auto sched = ns3::CreateObject<ns3::FabricScheduler>();
    ns3::Ptr<ns3::EventImpl> k1(new Keyed(5), false);
    ns3::Ptr<ns3::EventImpl> k2(new Keyed(4), false);
    ns3::Ptr<ns3::EventImpl> p(new Plain(), false);
    sched->Insert({ns3::PeekPointer(k1), {10, 0, 0}});
    sched->Insert({ns3::PeekPointer(k2), {10, 1, 0}});
    sched->Insert({ns3::PeekPointer(p), {10, 2, 0}});
    EXPECT_EQ(sched->PeekNext().impl, ns3::PeekPointer(p));
    sched->Remove({ns3::PeekPointer(k2), {10, 1, 0}});
    EXPECT_EQ(sched->RemoveNext().impl, ns3::PeekPointer(p));
    EXPECT_EQ(sched->RemoveNext().impl, ns3::PeekPointer(k1));
    EXPECT_TRUE(sched->IsEmpty());
}

TEST(FabricScheduler, GivesTheSingleHeapOrderAcrossBucketsRingAndFarEvents)
{
    // The calendar (current bucket, ring, far heap, late inserts into the current bucket, jumps
    // over an empty ring, removals from each) against the plain order of (time, order, uid).
    using ns3::FabricScheduler;
    auto sched = ns3::CreateObject<FabricScheduler>();
    std::mt19937_64 rng(7);
    const uint64_t bucket = uint64_t(1) << FabricScheduler::kBucketShift;
    const uint64_t ring = bucket << FabricScheduler::kRingBits;
    const std::vector<uint64_t> spans = {0, bucket / 2, 3 * bucket, ring / 3, ring + 5, 40 * ring};
    std::vector<ns3::Ptr<ns3::EventImpl>> impls;
    std::set<std::tuple<uint64_t, uint64_t, uint32_t>> pending; // (ts, order, uid)
    std::map<uint32_t, ns3::Scheduler::Event> byUid;
    uint64_t now = 0;
    uint32_t uid = 0;
    size_t removedEarly = 0;
    for (int step = 0; step < 60000; ++step)
    {
        const uint64_t roll = rng() % 100;
        if (roll < 55 || pending.empty())
        {
            const uint64_t span = spans[rng() % spans.size()];
            const uint64_t ts = now + (span == 0 ? 0 : rng() % span);
            const bool keyed = rng() % 2 == 0;
            ns3::Ptr<ns3::EventImpl> e
                = keyed ? ns3::Ptr<ns3::EventImpl>(new Keyed(rng() % 16), false)
                        : ns3::Ptr<ns3::EventImpl>(new Plain(), false);
            impls.push_back(e);
            const ns3::Scheduler::Event ev{ns3::PeekPointer(e), {ts, uid, 0}};
            sched->Insert(ev);
            pending.emplace(ts, FabricScheduler::OrderOf(ev), uid);
            byUid[uid++] = ev;
        }
        else if (roll < 60)
        {
            // Cancel a pending event chosen at random.
            auto it = pending.begin();
            std::advance(it, rng() % pending.size());
            sched->Remove(byUid.at(std::get<2>(*it)));
            pending.erase(it);
            ++removedEarly;
        }
        else
        {
            const auto want = *pending.begin();
            ASSERT_EQ(sched->PeekNext().key.m_uid, std::get<2>(want)) << "step " << step;
            const ns3::Scheduler::Event got = sched->RemoveNext();
            ASSERT_EQ(got.key.m_uid, std::get<2>(want)) << "step " << step;
            ASSERT_EQ(got.key.m_ts, std::get<0>(want));
            pending.erase(pending.begin());
            now = got.key.m_ts;
        }
        ASSERT_EQ(sched->IsEmpty(), pending.empty());
    }
    while (!pending.empty())
    {
        ASSERT_EQ(sched->RemoveNext().key.m_uid, std::get<2>(*pending.begin()));
        pending.erase(pending.begin());
    }
    EXPECT_TRUE(sched->IsEmpty());
    EXPECT_GT(removedEarly, 1000u);
    EXPECT_GT(now, 10 * ring); // the run went through many jumps past the ring
}

namespace
{

/// A keyed event that logs the look-ahead hints it is given.
class Hinted : public ns3::KeyedEventImpl
{
  public:
    Hinted(uint64_t key, std::vector<std::pair<uint64_t, unsigned>>* log)
        : KeyedEventImpl(key)
        , m_log(log)
    {
    }

    void Prefetch(unsigned ahead) const override
    {
        m_log->emplace_back(GetOrderKey(), ahead);
    }

  private:
    void Notify() override
    {
    }

    std::vector<std::pair<uint64_t, unsigned>>* m_log;
};

} // namespace

TEST(FabricScheduler, EachArrivalIsHintedAtDistancesFiveToOneBeforeItRuns)
{
    // Ten arrivals in one bucket: from the sixth on, each is hinted at distances 5, 4, 3, 2,
    // 1, in that order and before it is removed; nothing is hinted after it ran.
    auto sched = ns3::CreateObject<ns3::FabricScheduler>();
    std::vector<std::pair<uint64_t, unsigned>> log;
    std::vector<ns3::Ptr<ns3::EventImpl>> impls;
    for (uint32_t k = 0; k < 10; ++k)
    {
        impls.emplace_back(new Hinted(k, &log), false);
        // One bucket, not the first (that is current from the start: late inserts, unhinted).
        const uint64_t bucket2 = uint64_t(2) << ns3::FabricScheduler::kBucketShift;
        sched->Insert({ns3::PeekPointer(impls.back()), {bucket2 + 10 * k, k, 0}});
    }
    std::map<uint64_t, std::vector<unsigned>> hints;
    for (uint32_t k = 0; k < 10; ++k)
    {
        ASSERT_EQ(sched->RemoveNext().key.m_uid, k);
        for (const auto& [key, ahead] : log)
        {
            EXPECT_GT(key, k) << "an event hinted after it ran";
            hints[key].push_back(ahead);
        }
        log.clear();
    }
    for (uint64_t key = 5; key < 10; ++key)
    {
        EXPECT_EQ(hints[key], (std::vector<unsigned>{5, 4, 3, 2, 1})) << "event " << key;
    }
    EXPECT_EQ(hints[1], (std::vector<unsigned>{1}));
}

namespace
{

/// 8 senders on two leaves to one receiver: their first frames reach the spine and the
/// receiver's leaf at the same picoseconds, so the order of simultaneous arrivals matters.
json
SymmetricIncast()
{
    return json{
        {"seed", 1},
        {"topology",
         {{"type", "leaf-spine"},
          {"leaves", 3},
          {"spines", 2},
          {"hosts_per_leaf", 4},
          {"host_link", {{"rate", "100Gbps"}, {"delay", "1us"}}},
          {"fabric_link", {{"rate", "100Gbps"}, {"delay", "1us"}}}}},
        {"transport", {{"cc", "dcqcn"}}},
        {"monitor", {{"interval_ns", 0}}},
        {"traffic",
         {{"incast",
           {{"receiver", 0}, {"senders", {4, 5, 6, 7, 8, 9, 10, 11}}, {"size_bytes", 200000}}}}}};
}

/// RunScenario under the scheduler \p type (checked to be the one runs take), the default
/// restored after; the summary without the scenario's path.
json
RunUnder(const ns3::TypeId& type, const std::string& tag)
{
    ns3::GlobalValue::Bind("SchedulerType", ns3::TypeIdValue(type));
    EXPECT_EQ(fabricsim::SchedulerFactory().GetTypeId(),
              type == ns3::MapScheduler::GetTypeId() ? ns3::FabricScheduler::GetTypeId() : type);
    json s = fabricsim::test::RunScenario(SymmetricIncast(), fabricsim::test::TempDir(tag));
    ns3::GlobalValue::Bind("SchedulerType", ns3::TypeIdValue(ns3::MapScheduler::GetTypeId()));
    s.erase("scenario");
    return s;
}

double
LastFinishNs(const json& s)
{
    double last = 0;
    for (const json& f : s["flows"])
    {
        last = std::max(last, f["start_ns"].get<double>() + f["fct_ns"].get<double>());
    }
    return last;
}

} // namespace

TEST(FabricScheduler, AFabricRunUnderItIsCompleteConservedAndRepeatable)
{
    // ns-3's default stands for fabricsim's, the FabricScheduler.
    const json a = RunUnder(ns3::MapScheduler::GetTypeId(), "sched-a");
    const json b = RunUnder(ns3::FabricScheduler::GetTypeId(), "sched-b");
    EXPECT_EQ(a["flows_completed"].get<int>(), 8);
    EXPECT_TRUE(a["conservation"]["ok"].get<bool>());
    EXPECT_EQ(a.dump(), b.dump());
    // The same physics as in the order of scheduling: 1.6 MB into one 100G port.
    const json d = RunUnder(ns3::TypeId::LookupByName("ns3::PriorityQueueScheduler"), "sched-pq");
    EXPECT_EQ(d["flows_completed"].get<int>(), 8);
    EXPECT_NEAR(LastFinishNs(a), LastFinishNs(d), 0.01 * LastFinishNs(d));
    EXPECT_GT(LastFinishNs(a), 1.6e6 * 8 / 100);
}
