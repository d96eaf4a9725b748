// The horizon a trace replay gives the Collective API (trace-replay-horizon.cc): asked as each
// collective starts, it bounds when each member can next put traffic of its own on the fabric
// from the compute and waits that lie between, and cannot be asked outside a start.
#include "trace-test-util.h"

#include <gtest/gtest.h>

#include <climits>

namespace fabricsim
{
namespace
{

constexpr int64_t kUs = 1000000;
/// The completion time the test API gives every member when it asks (after the start).
constexpr int64_t kDoneAfter = 3 * kUs;

/// Asks the horizon about every member as each collective starts, then simulates it.
class AskingApi : public CollectiveApi
{
  public:
    explicit AskingApi(CollectiveApi& inner)
        : m_inner(inner)
    {
    }

    void Start(const CollectiveRequest& req, RankDone onRankDone, Done onDone) override
    {
        for (uint32_t r : req.ranks)
        {
            asked[req.tag].push_back(
                {NowPs(), m_horizon->QuietUntilPs(r, NowPs() + kDoneAfter), NowPs() + kDoneAfter});
        }
        m_inner.Start(req, std::move(onRankDone), std::move(onDone));
    }

    void SendRecv(uint32_t src, uint32_t dst, uint64_t bytes, Done onDone) override
    {
        outside.push_back(m_horizon->QuietUntilPs(src, NowPs()));
        m_inner.SendRecv(src, dst, bytes, std::move(onDone));
    }

    int64_t NowPs() const override
    {
        return m_inner.NowPs();
    }

    void Schedule(int64_t delayPs, Done fn) override
    {
        m_inner.Schedule(delayPs, std::move(fn));
    }

    void SetHorizon(const CollectiveHorizon* horizon) override
    {
        m_horizon = horizon;
    }

    struct Answer
    {
        int64_t now;
        int64_t quiet;
        int64_t done;
    };

    std::map<std::string, std::vector<Answer>> asked; ///< per collective, per member
    std::vector<int64_t> outside;                     ///< asked during a SendRecv

  private:
    CollectiveApi& m_inner;
    const CollectiveHorizon* m_horizon = nullptr;
};

TraceOp
Compute(int64_t ps, std::vector<TraceDep> deps)
{
    TraceOp c;
    c.name = "gemm";
    c.opClass = OpClass::kGemm;
    c.durationPs = ps;
    c.deps = std::move(deps);
    return c;
}

TraceOp
AllReduce(const std::string& name, int64_t seq, std::vector<TraceDep> deps)
{
    TraceOp ar;
    ar.kind = TraceOpKind::kCollective;
    ar.name = name;
    ar.collectiveName = "allreduce";
    ar.opClass = OpClass::kComm;
    ar.sized = true;
    ar.bytes = 1 << 20;
    ar.seq = seq;
    ar.deps = std::move(deps);
    return ar;
}

TraceOp
PointToPoint(TraceOpKind kind, uint32_t peer, std::vector<TraceDep> deps)
{
    TraceOp p;
    p.kind = kind;
    p.name = kind == TraceOpKind::kSend ? "send" : "recv";
    p.opClass = OpClass::kComm;
    p.sized = true;
    p.bytes = 1 << 20;
    p.peer = peer;
    p.tag = 7;
    p.deps = std::move(deps);
    return p;
}

/**
 * Rank 0: 10 us compute, all-reduce A, 5 us compute, a send to rank 1 (1 us after it), then
 * all-reduce B. Rank 1: 10 us compute, A, 20 us compute, the receive, B. With \p earlySend,
 * rank 0 also has a send to rank 1 that depends on nothing and is released at 12 us.
 */
ImportedTrace
Pipeline(bool earlySend)
{
    ImportedTrace tr;
    tr.format = "test";
    tr.worldSize = 2;
    RankTrace r0;
    r0.file = "rank0";
    r0.ops = {Compute(10 * kUs, {}),
              AllReduce("A", 0, {{0, 0}}),
              Compute(5 * kUs, {{1, 0}}),
              PointToPoint(TraceOpKind::kSend, 1, {{2, kUs}}),
              AllReduce("B", 1, {{3, 0}})};
    RankTrace r1;
    r1.file = "rank1";
    r1.rank = 1;
    r1.ops = {Compute(10 * kUs, {}),
              AllReduce("A", 0, {{0, 0}}),
              Compute(20 * kUs, {{1, 0}}),
              PointToPoint(TraceOpKind::kRecv, 0, {{2, 0}}),
              AllReduce("B", 1, {{3, 0}})};
    if (earlySend)
    {
        TraceOp early = PointToPoint(TraceOpKind::kSend, 1, {});
        early.tag = 8;
        early.releasePs = 12 * kUs;
        r0.ops.push_back(early);
        TraceOp recv = PointToPoint(TraceOpKind::kRecv, 0, {});
        recv.tag = 8;
        r1.ops.push_back(recv);
    }
    tr.ranks = {r0, r1};
    CompleteRanks(tr);
    return tr;
}

TEST(ReplayHorizon, BoundsEachMembersNextTrafficByTheComputeBetween)
{
    TestFabric fabric(2, 450);
    AskingApi api(*fabric.api);
    ReplayRun run = ReplayTrace(Pipeline(false), {}, api, [&]() { fabric.transport->Run(); });
    ASSERT_TRUE(run.complete) << (run.stuck.empty() ? "" : run.stuck[0]);
    ASSERT_EQ(api.asked["A"].size(), 2u);
    const auto& a = api.asked["A"];
    EXPECT_EQ(a[0].now, 10 * kUs);
    // Rank 0 sends 5 us of compute and a 1 us lag after its part of A; rank 1 next talks in B,
    // after 20 us of compute and a receive (which posts nothing of its own).
    EXPECT_EQ(a[0].quiet, a[0].done + 6 * kUs);
    EXPECT_EQ(a[1].quiet, a[1].done + 20 * kUs);
    // Nothing follows B.
    for (const AskingApi::Answer& b : api.asked["B"])
    {
        EXPECT_EQ(b.quiet, INT64_MAX);
    }
    // Outside a collective's start it cannot tell.
    ASSERT_EQ(api.outside.size(), 1u);
    EXPECT_EQ(api.outside[0], INT64_MIN);
}

TEST(ReplayHorizon, ASendReleasedIndependentlyBoundsItAtItsRelease)
{
    TestFabric fabric(2, 450);
    AskingApi api(*fabric.api);
    ReplayRun run = ReplayTrace(Pipeline(true), {}, api, [&]() { fabric.transport->Run(); });
    ASSERT_TRUE(run.complete) << (run.stuck.empty() ? "" : run.stuck[0]);
    const auto& a = api.asked["A"];
    ASSERT_EQ(a.size(), 2u);
    EXPECT_EQ(a[0].quiet, 12 * kUs); // the early send, though A's part ends later
    EXPECT_EQ(a[1].quiet, a[1].done + 20 * kUs);
}

} // namespace
} // namespace fabricsim
