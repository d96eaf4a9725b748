// The issue-5 checks on the real Collective API (ScheduleCollectives) over the analytical
// flow-level transport of a rail-optimised topology, instead of the alpha-beta fake.

#include "analytical-transport.h"
#include "program-replay.h"
#include "schedule-collectives.h"
#include "serving-test-util.h"
#include "step-executor.h"
#include "step-program-builder.h"
#include "topology.h"

#include <gtest/gtest.h>

#include <memory>

namespace fabricsim
{
namespace
{

using nlohmann::json;

/// Rail-optimised servers of 8 accelerators with NVLink-class scale-up and \p nic per GPU.
json
RailTopology(uint32_t servers, const std::string& nic)
{
    return {{"type", "rail-optimized"},
            {"servers", servers},
            {"accels_per_server", 8},
            {"spines", 2},
            {"host_link", {{"rate", nic}, {"delay", "1us"}}},
            {"fabric_link", {{"rate", "1600Gbps"}, {"delay", "1us"}}},
            {"scale_up", {{"rate", "450GBps"}, {"delay", "100ns"}}}};
}

/// A Collective API that counts what goes through it on the way to the real one.
class CountingApi : public CollectiveApi
{
  public:
    explicit CountingApi(CollectiveApi& inner)
        : m_inner(inner)
    {
    }

    void Start(const CollectiveRequest& req, RankDone onRankDone, Done onDone) override
    {
        started.push_back(req);
        m_inner.Start(req, std::move(onRankDone), std::move(onDone));
    }

    void SendRecv(uint32_t src, uint32_t dst, uint64_t bytes, Done onDone) override
    {
        sends++;
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

    std::vector<CollectiveRequest> started;
    size_t sends = 0;

  private:
    CollectiveApi& m_inner;
};

/// The analytical backend for \p topo: transport, collectives and a counting front.
struct Backend
{
    explicit Backend(const json& topo)
        : topology(BuildTopology(topo, "test-topology.json"))
        , transport(topology)
        , collectives(transport, ExecutorConfig(), Options())
        , api(collectives)
    {
    }

    static CollectiveOptions Options()
    {
        CollectiveOptions o;
        o.m_localSize = 8;
        return o;
    }

    ServingResult Run(const InferenceScenario& sc)
    {
        return RunServing(sc, api, [this]() { transport.Run(); });
    }

    Topology topology;
    AnalyticalTransport transport;
    ScheduleCollectives collectives;
    CountingApi api;
};

double
Exposed(const ServingResult& r, std::initializer_list<const char*> cats)
{
    double ms = 0;
    json b = r.Breakdown()["exposed_comm_ms"];
    for (const char* c : cats)
    {
        ms += b.value(c, 0.0);
    }
    return ms;
}

// (1) and (2) on the analytical fabric: 161 all-reduces of 1 MiB over the eight GPUs of one
// server, and a decode step close to weight streaming plus the measured communication.
TEST(AnalyticalBackend, Llama70bDecodeStepOnOneServer)
{
    InferenceScenario sc = MakeScenario({{"model", "Llama-3-70B"}, {"parallelism", {{"tp", 8}}}});
    Backend be(RailTopology(1, "400Gbps"));
    EngineLayout layout;
    layout.par = sc.pool.par;
    layout.hosts = {0, 1, 2, 3, 4, 5, 6, 7};
    StepExecutor exec(be.api);
    StepStats st;
    exec.Submit(std::make_shared<StepProgram>(
                    StepProgramBuilder(sc, layout).Build(0, {StepBatch::Decode(64, 128)})),
                [&](const StepStats& s) { st = s; });
    be.transport.Run();
    ASSERT_EQ(be.api.started.size(), 161u);
    for (const auto& req : be.api.started)
    {
        EXPECT_EQ(req.bytes, 1u << 20);
    }
    EXPECT_EQ(be.api.sends, 7u); // logits gather
    double memoryPs
        = sc.model.WeightBytes() / 8 / (sc.hw.hbmBwBytesPerSec * sc.hw.etaMemory) * 1e12;
    const RankStepStats& r = st.ranks[0];
    double commPs = 0;
    for (const auto& [cat, ps] : r.commPs)
    {
        commPs += double(ps);
    }
    double stepPs = double(st.endPs - st.launchPs);
    EXPECT_GT(commPs, 0);
    double hostPs = (sc.exec.stepOverheadSec + 64 * sc.exec.sequenceOverheadSec) * 1e12;
    EXPECT_NEAR(stepPs / (memoryPs + commPs + hostPs), 1.0, 0.15)
        << "step " << stepPs / 1e9 << " ms, weights " << memoryPs / 1e9 << " ms, comm "
        << commPs / 1e9 << " ms, host " << hostPs / 1e9 << " ms";
}

// (3) TP across servers (one rank per server, every all-reduce over the NICs) versus TP inside
// one server's scale-up domain.
TEST(AnalyticalBackend, TensorParallelAcrossServersLengthensExposedCommunication)
{
    json patch
        = {{"model", "Llama-3-70B"},
           {"parallelism", {{"tp", 8}}},
           {"serving",
            {{"requests",
              {{"rate_per_s", 0}, {"count", 4}, {"prompt_tokens", 256}, {"output_tokens", 4}}}}}};
    Backend inside(RailTopology(8, "400Gbps"));
    ServingResult a = inside.Run(MakeScenario(patch));
    patch["serving"]["placement"] = {{"tp", "across_servers"}};
    Backend across(RailTopology(8, "400Gbps"));
    ServingResult b = across.Run(MakeScenario(patch));
    ASSERT_EQ(a.Completed(), 4u);
    ASSERT_EQ(b.Completed(), 4u);
    EXPECT_GT(Exposed(b, {"tp_allreduce"}), 2 * Exposed(a, {"tp_allreduce"}));
}

// (3) Doubling the NIC bandwidth shortens the exposed EP all-to-alls of an EP group that spans
// two servers.
TEST(AnalyticalBackend, DoublingNicBandwidthShortensExposedEpCommunication)
{
    InferenceScenario sc = MakeScenario(
        {{"model", "Qwen3-30B-A3B"},
         {"parallelism", {{"tp", 8}, {"ep", 16}, {"dp", 2}, {"dp_attention", true}}},
         {"serving",
          {{"requests",
            {{"rate_per_s", 0}, {"count", 8}, {"prompt_tokens", 1024}, {"output_tokens", 4}}}}}});
    Backend slow(RailTopology(2, "400Gbps"));
    Backend fast(RailTopology(2, "800Gbps"));
    ServingResult a = slow.Run(sc);
    ServingResult b = fast.Run(sc);
    ASSERT_EQ(a.Completed(), 8u);
    double ea = Exposed(a, {"ep_dispatch", "ep_combine"});
    double eb = Exposed(b, {"ep_dispatch", "ep_combine"});
    EXPECT_GT(ea, 0);
    EXPECT_LT(eb, 0.8 * ea) << ea << " ms at 400G, " << eb << " ms at 800G";
}

// (4) A 4096-token prompt's KV (1.25 GiB for Llama-3-70B) from a TP-8 prefill server to a TP-8
// decode server: each rank pair moves 1/8 over its own rail, so the transfer takes about
// (bytes / 8) / NIC bandwidth on an idle fabric.
TEST(AnalyticalBackend, KvTransferMatchesBytesOverBottleneckBandwidth)
{
    InferenceScenario sc = MakeScenario(
        {{"model", "Llama-3-70B"},
         {"serving",
          {{"requests",
            {{"rate_per_s", 1}, {"count", 1}, {"prompt_tokens", 4096}, {"output_tokens", 4}}},
           {"disaggregation",
            {{"prefill", {{"parallelism", {{"tp", 8}}}}},
             {"decode", {{"parallelism", {{"tp", 8}}}}}}}}}});
    Backend be(RailTopology(2, "400Gbps"));
    ServingResult r = be.Run(sc);
    ASSERT_EQ(r.Completed(), 1u);
    const RequestRecord& q = r.requests[0];
    double expectMs = double(q.kvTransferBytes) / 8 / 50e9 * 1e3;
    double gotMs = double(q.kvTransferEndPs - q.kvTransferStartPs) / 1e9;
    EXPECT_NEAR(gotMs / expectMs, 1.0, 0.10) << gotMs << " ms vs " << expectMs << " ms";
}

// (5) Replay on the analytical backend reproduces the recorded step times.
TEST(AnalyticalBackend, ReplayReproducesStepTimes)
{
    InferenceScenario sc = MakeScenario(
        {{"model", "Llama-3-70B"},
         {"parallelism", {{"tp", 8}}},
         {"serving",
          {{"requests",
            {{"rate_per_s", 20}, {"count", 6}, {"prompt_tokens", 700}, {"output_tokens", 5}}},
           {"record", {{"programs", true}}}}}});
    Backend first(RailTopology(1, "400Gbps"));
    ServingResult r = first.Run(sc);
    Backend second(RailTopology(1, "400Gbps"));
    ReplayResult rep
        = ReplayPrograms(r.programTrace, second.api, [&]() { second.transport.Run(); });
    ASSERT_EQ(rep.steps.size(), r.steps.size());
    for (const auto& s : r.steps)
    {
        EXPECT_EQ(rep.steps.at(s.step).launchPs, s.launchPs) << s.step;
        EXPECT_EQ(rep.steps.at(s.step).endPs, s.endPs) << s.step;
    }
}

} // namespace
} // namespace fabricsim
