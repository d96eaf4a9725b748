// Step executor: programs from the builder run over the Collective API; collectives issued,
// step time against the memory roofline, time accounting, overlap.

#include "ep-exchange.h"
#include "fake-collectives.h"
#include "hardware-spec.h"
#include "model-spec.h"
#include "serving-test-util.h"
#include "step-executor.h"
#include "step-program-builder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <numeric>
#include <set>
#include <tuple>

namespace fabricsim
{
namespace
{

using nlohmann::json;

double
RankComm(const RankStepStats& r, const std::string& cat)
{
    auto it = r.commPs.find(cat);
    return it == r.commPs.end() ? 0.0 : double(it->second);
}

InferenceScenario
Llama70bTp8(const json& extra = json::object())
{
    json patch = {{"model", "Llama-3-70B"}, {"parallelism", {{"tp", 8}}}};
    patch.merge_patch(extra);
    return MakeScenario(patch);
}

// Issue 5 (1): Llama-3-70B decode batch 64 at TP 8 issues 161 all-reduces of 1 MiB per step;
// the executor must really issue them through the Collective API, on the eight TP ranks.
TEST(StepExecutor, Llama70bDecodeIssues161AllReducesThroughTheApi)
{
    InferenceScenario sc = Llama70bTp8();
    StepProgramBuilder builder(sc, Layout(sc.pool.par));
    FakeCollectives api(FakeCollectives::Params{});
    StepStats st = RunStep(api, builder.Build(0, {StepBatch::Decode(64, 128)}));
    size_t allReduces = 0;
    for (const auto& req : api.started)
    {
        ASSERT_EQ(req.kind, CollectiveKind::kAllReduce) << req.tag;
        EXPECT_EQ(req.bytes, 1u << 20) << req.tag;
        EXPECT_EQ(req.ranks, (std::vector<uint32_t>{0, 1, 2, 3, 4, 5, 6, 7}));
        allReduces++;
    }
    EXPECT_EQ(allReduces, 161u);
    // The logits gather: seven sends of 64 x ceil(128256 / 8) x 2 B to group rank 0.
    ASSERT_EQ(api.sends.size(), 7u);
    for (const auto& [src, dst, bytes] : api.sends)
    {
        EXPECT_EQ(dst, 0u);
        EXPECT_NE(src, 0u);
        EXPECT_EQ(bytes, 64u * 16032u * 2u);
    }
    EXPECT_EQ(st.ranks.size(), 8u);
}

// Issue 5 (2): a decode step of Llama-3-70B at TP 8 on H100 takes within 15% of the weight bytes
// per GPU / (HBM bandwidth x efficiency) plus its communication.
TEST(StepExecutor, Llama70bDecodeStepIsWeightStreamingPlusCommunication)
{
    InferenceScenario sc = Llama70bTp8();
    StepProgramBuilder builder(sc, Layout(sc.pool.par));
    FakeCollectives api(FakeCollectives::Params{});
    StepStats st = RunStep(api, builder.Build(0, {StepBatch::Decode(64, 128)}));
    double weightsPerGpu = sc.model.WeightBytes() / 8;
    double memoryPs = weightsPerGpu / (sc.hw.hbmBwBytesPerSec * sc.hw.etaMemory) * 1e12;
    double commPs = 0;
    for (const auto& req : api.started)
    {
        commPs += double(api.CollectiveTimePs(req));
    }
    commPs += double(api.SendTimePs(1, 0, 64u * 16032u * 2u)); // the gather's sends overlap
    // The engine's host work before the forward: the fixed part (2 ms by default) and none per
    // sequence.
    double hostPs = (sc.exec.stepOverheadSec + 64 * sc.exec.sequenceOverheadSec) * 1e12;
    EXPECT_DOUBLE_EQ(hostPs, 2e9);
    double expected = memoryPs + commPs + hostPs;
    double got = double(st.endPs - st.launchPs);
    EXPECT_NEAR(got / expected, 1.0, 0.15)
        << "step " << got / 1e9 << " ms, weights " << memoryPs / 1e9 << " ms + comm "
        << commPs / 1e9 << " ms + host " << hostPs / 1e9 << " ms";
    // Nothing overlaps TP all-reduces in this path: all of it is exposed.
    double gather = double(api.SendTimePs(1, 0, 64u * 16032u * 2u));
    EXPECT_NEAR(RankComm(st.ranks[3], "tp_allreduce"), commPs - gather, 1e3);
    EXPECT_NEAR(RankComm(st.ranks[0], "logits_gather"), gather, 1e3);
}

// vLLM replays the graph captured for the next size up: 1, 2, 4, every 8 to 256, then every 16.
// The padding slots run through the GEMMs: a 100-sequence decode step does 104 tokens' GEMM
// work (and all-reduces 104 tokens' activations), and the host work counts the 100 only.
TEST(StepProgramBuilder, DecodeGraphsRunAtTheCapturedSize)
{
    EXPECT_EQ(CudaGraphBatchSize(1), 1u);
    EXPECT_EQ(CudaGraphBatchSize(2), 2u);
    EXPECT_EQ(CudaGraphBatchSize(3), 4u);
    EXPECT_EQ(CudaGraphBatchSize(5), 8u);
    EXPECT_EQ(CudaGraphBatchSize(100), 104u);
    EXPECT_EQ(CudaGraphBatchSize(256), 256u);
    EXPECT_EQ(CudaGraphBatchSize(257), 272u);
    EXPECT_EQ(CudaGraphBatchSize(512), 512u);

    auto flopsAndAllReduce = [](bool padding)
    {
        InferenceScenario sc = Llama70bTp8();
        sc.exec.cudaGraphPadding = padding;
        sc.exec.sequenceOverheadSec = 10e-6; // so that counting the padding slots would show
        StepProgram p
            = StepProgramBuilder(sc, Layout(sc.pool.par)).Build(0, {StepBatch::Decode(100, 128)});
        double flops = 0;
        uint64_t arBytes = 0;
        double hostPs = 0;
        for (const auto& it : p.ranks[0].items)
        {
            flops += it.flops;
            if (it.category == "tp_allreduce" && arBytes == 0)
            {
                arBytes = it.bytes;
            }
            if (it.name == "engine_overhead")
            {
                hostPs = double(it.durationPs);
            }
        }
        return std::make_tuple(flops, arBytes, hostPs);
    };
    auto [padded, arPadded, hostPadded] = flopsAndAllReduce(true);
    auto [exact, arExact, hostExact] = flopsAndAllReduce(false);
    EXPECT_EQ(arExact, 100u * 8192 * 2);
    EXPECT_EQ(arPadded, 104u * 8192 * 2);
    EXPECT_GT(padded / exact, 1.03); // GEMM FLOPs grow by 4 %; attention by a one-token context
    EXPECT_LT(padded / exact, 1.04);
    EXPECT_DOUBLE_EQ(hostPadded, hostExact);
    EXPECT_DOUBLE_EQ(hostExact, 3e9); // 2 ms + 100 x 10 us
}

// vLLM pads every DP rank to the most tokens across the DP ranks when all of them replay a
// graph (dp_utils.py): an EP group's attention groups run the largest one's graph, and the
// smaller ones dispatch its padding slots too. A step with a prompt in any group runs eagerly
// there, and nothing is padded.
TEST(StepProgramBuilder, DpRanksReplayTheLargestGroupsGraph)
{
    json patch = {
        {"model", "Qwen3-30B-A3B"},
        {"parallelism",
         {{"tp", 1}, {"ep", 2}, {"dp", 2}, {"dp_attention", true}, {"ep_backend", "all-to-all"}}}};
    auto dispatchTokens = [&](bool dpPadding, const StepBatch& other)
    {
        InferenceScenario sc = MakeScenario(patch);
        sc.exec.dpPadding = dpPadding;
        StepProgramBuilder builder(sc, Layout(sc.pool.par, 2));
        const StepProgram prog = builder.Build(0, {StepBatch::Decode(5, 256), other});
        double flops = 0;
        double sent = -1;
        for (const ProgramItem& it : prog.ranks[0].items)
        {
            flops += it.flops;
            if (it.category == "ep_dispatch" && sent < 0)
            {
                sent = double(it.row[1]);
            }
        }
        return std::make_pair(sent, flops);
    };
    // 5 decode sequences replay the graph of 8; the other group's 40 the graph of 40.
    const auto [padded, paddedFlops] = dispatchTokens(true, StepBatch::Decode(40, 256));
    const auto [own, ownFlops] = dispatchTokens(false, StepBatch::Decode(40, 256));
    // One copy per expert (top-8 of 128): 8 / 2 of a token's copies land on the other rank.
    const double h = 2048 * 2;
    EXPECT_NEAR(own, 8 * 4 * h, 1.0);
    EXPECT_NEAR(padded, 40 * 4 * h, 1.0);
    EXPECT_GT(paddedFlops, 4 * ownFlops);
    // A prompt in the other group: this one's graph of 8 stands.
    const auto [eager, eagerFlops] = dispatchTokens(true, StepBatch::Prefill(1, 512));
    EXPECT_NEAR(eager, 8 * 4 * h, 1.0);
    // The key reads and defaults to vLLM's behaviour.
    EXPECT_TRUE(MakeScenario().exec.dpPadding);
    EXPECT_FALSE(
        MakeScenario({{"serving", {{"execution", {{"dp_padding", false}}}}}}).exec.dpPadding);
}

/// A two-rank program by hand: rank 0 computes \p c0 ps, rank 1 \p c1, then an all-reduce.
StepProgram
TwoRankAllReduce(int64_t c0, int64_t c1, uint64_t bytes)
{
    StepProgram p;
    for (uint32_t r = 0; r < 2; ++r)
    {
        RankStepProgram rp;
        rp.rank = r;
        ProgramItem c;
        c.durationPs = r == 0 ? c0 : c1;
        c.name = "work";
        rp.items.push_back(c);
        ProgramItem a;
        a.type = ProgramItem::Type::Comm;
        a.op = CommOp::AllReduce;
        a.category = "tp_allreduce";
        a.key = "ar";
        a.group = {0, 1};
        a.groupIndex = r;
        a.bytes = bytes;
        rp.items.push_back(a);
        p.ranks.push_back(rp);
    }
    return p;
}

// The early rank waits for the late one (sync_wait), then both see the collective's time as
// exposed communication; the step lasts the slower compute plus the collective.
TEST(StepExecutor, AccountsComputeSyncWaitAndExposedCommunication)
{
    FakeCollectives api(FakeCollectives::Params{});
    StepStats st = RunStep(api, TwoRankAllReduce(10000000, 30000000, 4 << 20));
    CollectiveRequest req;
    req.ranks = {0, 1};
    req.bytes = 4 << 20;
    int64_t ar = api.CollectiveTimePs(req);
    EXPECT_EQ(st.endPs - st.launchPs, 30000000 + ar);
    EXPECT_EQ(st.ranks[0].computePs, 10000000);
    EXPECT_EQ(st.ranks[0].syncPs, 20000000);
    EXPECT_EQ(st.ranks[0].commPs.at("tp_allreduce"), ar);
    EXPECT_EQ(st.ranks[1].computePs, 30000000);
    EXPECT_EQ(st.ranks[1].syncPs, 0);
    EXPECT_EQ(st.ranks[1].commPs.at("tp_allreduce"), ar);
}

// A collective whose members never all arrive is reported with the missing rank, not hung.
TEST(StepExecutor, ReportsAStuckCollectiveWithItsMissingMember)
{
    FakeCollectives api(FakeCollectives::Params{});
    StepProgram p = TwoRankAllReduce(1000, 1000, 1024);
    p.ranks[1].items.pop_back(); // rank 1 never joins
    p.ranks[0].items.back().group = {0, 2};
    StepExecutor exec(api);
    bool done = false;
    exec.Submit(std::make_shared<StepProgram>(p), [&](const StepStats&) { done = true; });
    api.Run();
    EXPECT_FALSE(done);
    auto blocked = exec.Blocked();
    ASSERT_EQ(blocked.size(), 1u);
    EXPECT_NE(blocked[0].find("rank 0"), std::string::npos) << blocked[0];
    EXPECT_NE(blocked[0].find("missing: 2"), std::string::npos) << blocked[0];
    EXPECT_EQ(exec.InFlight(), 1u);
}

// Pipeline parallelism: stage 1 receives stage 0's hidden states; its wait for stage 0's compute
// is a bubble (idle), only the transfer itself is exposed pp_send time.
TEST(StepExecutor, PipelineReceiveSplitsBubbleFromTransfer)
{
    InferenceScenario sc = MakeScenario({{"parallelism", {{"tp", 1}, {"pp", 2}}}});
    StepProgramBuilder builder(sc, Layout(sc.pool.par));
    FakeCollectives::Params fp;
    fp.accelsPerServer = 1; // the two stages on different servers
    FakeCollectives api(fp);
    StepBatch b = StepBatch::Decode(32, 256);
    StepProgram prog = builder.Build(0, {b});
    StepStats st = RunStep(api, prog);
    ASSERT_EQ(api.sends.size(), 1u);
    auto [src, dst, bytes] = api.sends[0];
    EXPECT_EQ(src, 0u);
    EXPECT_EQ(dst, 1u);
    EXPECT_EQ(bytes, 32u * 4096u * 2u); // T H b (megatron flavour)
    int64_t transfer = api.SendTimePs(0, 1, bytes);
    const RankStepStats& s1 = st.ranks[1];
    EXPECT_EQ(s1.commPs.at("pp_send"), transfer);
    EXPECT_EQ(s1.syncPs, 0);
    // Stage 1 starts computing only once stage 0 is done and the data arrived.
    EXPECT_EQ(s1.endPs - st.launchPs, st.ranks[0].computePs + transfer + s1.computePs);
}

// KV in host memory: each attention waits for its layer's KV over PCIe (fetched one layer
// ahead), so a long-context decode gets slower than with KV in HBM by about the PCIe time not
// hidden under compute.
TEST(StepExecutor, HostTierKvFetchSlowsLongContextDecode)
{
    InferenceScenario hbm = MakeScenario();
    InferenceScenario host = MakeScenario(
        {{"serving", {{"kv_cache", {{"placement", "host"}, {"bandwidth", "50GB/s"}}}}}});
    StepBatch b = StepBatch::Decode(32, 8192);
    FakeCollectives a1(FakeCollectives::Params{});
    FakeCollectives a2(FakeCollectives::Params{});
    StepStats s1 = RunStep(a1, StepProgramBuilder(hbm, Layout(hbm.pool.par)).Build(0, {b}));
    StepStats s2 = RunStep(a2, StepProgramBuilder(host, Layout(host.pool.par)).Build(0, {b}));
    // KV read per step: 32 sequences x 8192 tokens x 128 KiB (Llama-3-8B), over 50 GB/s.
    double kvBytes = 32.0 * 8193 * 131072;
    double pciePs = kvBytes / 50e9 * 1e12;
    int64_t hbmStep = s1.endPs - s1.launchPs;
    int64_t hostStep = s2.endPs - s2.launchPs;
    EXPECT_GT(double(hostStep), pciePs) << "the PCIe stream bounds the step";
    EXPECT_LT(double(hostStep), pciePs + double(hbmStep)) << "fetches overlap compute";
    EXPECT_GT(s2.ranks[0].commPs.at("kv_fetch"), 0);
}

InferenceScenario
MoeScenario(const std::string& overlap, double nicGbps = 0)
{
    json patch = {{"model", "Qwen3-30B-A3B"},
                  {"parallelism", {{"tp", 4}, {"ep", 8}, {"dp", 2}, {"dp_attention", true}}},
                  {"serving", {{"execution", {{"ep_overlap", overlap}}}}}};
    (void)nicGbps;
    return MakeScenario(patch);
}

// DeepEP-style two-micro-batch overlap hides part of the expert-parallel all-to-alls under the
// other micro-batch's compute, so less EP time is exposed than with blocking all-to-alls.
TEST(StepExecutor, TwoBatchOverlapHidesExpertParallelCommunication)
{
    FakeCollectives::Params fp;
    fp.accelsPerServer = 4; // the EP group spans two servers: dispatch crosses NICs
    auto exposed = [&](const std::string& mode, int64_t& stepPs)
    {
        InferenceScenario sc = MoeScenario(mode);
        StepProgramBuilder builder(sc, Layout(sc.pool.par, 2));
        FakeCollectives api(fp);
        StepBatch b = StepBatch::Prefill(4, 1024);
        StepStats st = RunStep(api, builder.Build(0, {b, b}));
        stepPs = st.endPs - st.launchPs;
        double e = 0;
        for (const auto& r : st.ranks)
        {
            e += RankComm(r, "ep_dispatch") + RankComm(r, "ep_combine");
        }
        return e / double(st.ranks.size());
    };
    int64_t none = 0;
    int64_t two = 0;
    double eNone = exposed("none", none);
    double eTwo = exposed("two_batch", two);
    EXPECT_GT(eNone, 0);
    EXPECT_LT(eTwo, 0.7 * eNone) << "none " << eNone / 1e9 << " ms, two_batch " << eTwo / 1e9;
    EXPECT_LT(two, none);
}

// On DeepEP's kernels the EP all-to-alls reach the Collective API with the kernels' fixed cost
// and copying bound (ep-exchange.h), and survive a program's JSON round trip; NCCL's all-to-all
// carries neither.
TEST(StepExecutor, DeepEpAllToAllsCarryTheirKernelCosts)
{
    auto started = [](const std::string& backend)
    {
        json patch = {{"model", "Qwen3-30B-A3B"},
                      {"parallelism",
                       {{"tp", 4},
                        {"ep", 8},
                        {"dp", 2},
                        {"dp_attention", true},
                        {"ep_backend", backend},
                        {"ep_sms", 12}}}};
        InferenceScenario sc = MakeScenario(patch);
        StepProgramBuilder builder(sc, Layout(sc.pool.par, 2));
        const StepBatch b = StepBatch::Prefill(4, 1024);
        const StepProgram prog = builder.Build(0, {b, b});
        for (const RankStepProgram& r : prog.ranks)
        {
            for (const ProgramItem& it : r.items)
            {
                if (it.type == ProgramItem::Type::Comm)
                {
                    const ProgramItem back
                        = ProgramItem::FromJson(JsonObject(it.ToJson(), "t", ""));
                    EXPECT_EQ(back.kernelLaunchPs, it.kernelLaunchPs);
                    EXPECT_EQ(back.kernelMinPs, it.kernelMinPs);
                    EXPECT_EQ(back.kernelFillPs, it.kernelFillPs);
                }
            }
        }
        FakeCollectives api(FakeCollectives::Params{});
        RunStep(api, prog);
        std::vector<CollectiveRequest> a2a;
        for (const auto& req : api.started)
        {
            if (req.kind == CollectiveKind::kAllToAll)
            {
                a2a.push_back(req);
            }
        }
        return a2a;
    };
    const auto nccl = started("all-to-all");
    ASSERT_FALSE(nccl.empty());
    for (const auto& req : nccl)
    {
        EXPECT_EQ(req.kernelLaunchPs, -1) << req.tag;
        EXPECT_EQ(req.kernelMinPs, 0) << req.tag;
        EXPECT_EQ(req.kernelFillPs, 0) << req.tag;
    }
    const auto deepep = started("deepep-normal");
    ASSERT_EQ(deepep.size(), nccl.size());
    const int64_t dispatchFixed
        = EpKernelMinPs(*EpKernelCostOf(EpBackend::DeepEpNormal, true), EpKernelWork{});
    // The combine's start-up grows with one token (hidden 2048 in bf16): the copies it gathers
    // from the 8 ranks holding any of its 8 of 128 experts (its own included), and its result.
    double missesAll = 1;
    for (int i = 0; i < 8; ++i)
    {
        missesAll *= (112.0 - i) / (128.0 - i);
    }
    EpKernelWork token;
    token.bytesPerCopy = 2 * 2048.0;
    token.copiesPerToken = 8 * (1 - missesAll);
    const int64_t combineStart
        = EpKernelMinPs(*EpKernelCostOf(EpBackend::DeepEpNormal, false), token);
    for (const auto& req : deepep)
    {
        const bool dispatch = req.tag.find("ep_dispatch") != std::string::npos;
        EXPECT_NEAR(double(req.kernelLaunchPs), double(dispatch ? dispatchFixed : combineStart), 1)
            << req.tag;
        // 4 x 1024 tokens per DP group over 4 TP ranks: 1024 per rank, copied on 12 SMs.
        EXPECT_GT(req.kernelMinPs, req.kernelLaunchPs + 10000000) << req.tag;
        EXPECT_GT(req.kernelFillPs, 0) << req.tag;
    }
}

// DeepEP's normal kernels across servers (ep-exchange.h, EpRowCopies): EP 16 over two
// servers of 8, each rank's dispatch row sends to the other server only through the rank of its
// own local index, and nothing to that server's other ranks.
TEST(StepExecutor, DeepEpNormalCrossesServersThroughOneRankEach)
{
    json patch = {{"model", "Qwen3-30B-A3B"},
                  {"parallelism",
                   {{"tp", 1},
                    {"ep", 16},
                    {"dp", 16},
                    {"dp_attention", true},
                    {"ep_backend", "deepep-normal"}}},
                  {"serving", {{"placement", {{"accels_per_server", 8}}}}}};
    InferenceScenario sc = MakeScenario(patch);
    ASSERT_TRUE(sc.placement.servers);
    StepProgramBuilder builder(sc, Layout(sc.pool.par, 16));
    const StepProgram prog
        = builder.Build(0, std::vector<StepBatch>(16, StepBatch::Prefill(2, 256)));
    size_t rows = 0;
    for (const RankStepProgram& r : prog.ranks)
    {
        for (const ProgramItem& it : r.items)
        {
            if (it.type != ProgramItem::Type::Comm || it.category != "ep_dispatch")
            {
                continue;
            }
            ASSERT_EQ(it.row.size(), 16u);
            for (uint32_t j = 0; j < 16; ++j)
            {
                const bool sameServer = j / 8 == r.rank / 8;
                const bool landing = j % 8 == r.rank % 8;
                if (sameServer || landing)
                {
                    EXPECT_GT(it.row[j], 0u) << r.rank << " -> " << j;
                }
                else
                {
                    EXPECT_EQ(it.row[j], 0u) << r.rank << " -> " << j;
                }
            }
            rows++;
        }
    }
    EXPECT_EQ(rows, 16u * 48u); // every rank, every MoE layer
}

// deepep-auto (SGLang's auto mode): a step where any group of the EP group carries prefill
// tokens runs the normal kernels in every group; a decode-only step the low-latency ones.
TEST(StepExecutor, DeepEpAutoPicksTheKernelsPerStepForTheWholeGroup)
{
    json patch = {
        {"model", "Qwen3-30B-A3B"},
        {"parallelism",
         {{"tp", 1}, {"ep", 4}, {"dp", 4}, {"dp_attention", true}, {"ep_backend", "deepep-auto"}}}};
    InferenceScenario sc = MakeScenario(patch);
    StepProgramBuilder builder(sc, Layout(sc.pool.par, 4));
    // The launches alone: Qwen3-30B-A3B's 128 experts on H100's 132 SMs, one warp group each.
    EpKernelWork launch;
    launch.experts = 128;
    launch.gpuSms = 132;
    const int64_t normal = EpKernelMinPs(*EpKernelCostOf(EpBackend::DeepEpNormal, true), launch);
    const int64_t ll = EpKernelMinPs(*EpKernelCostOf(EpBackend::DeepEpLowLatency, true), launch);
    auto dispatchLaunches = [&](const std::vector<StepBatch>& batches)
    {
        std::set<int64_t> launches;
        for (const RankStepProgram& r : builder.Build(0, batches).ranks)
        {
            for (const ProgramItem& it : r.items)
            {
                if (it.type == ProgramItem::Type::Comm && it.category == "ep_dispatch")
                {
                    launches.insert(it.kernelLaunchPs);
                }
            }
        }
        return launches;
    };
    const StepBatch decode = StepBatch::Decode(8, 512);
    EXPECT_EQ(dispatchLaunches({decode, decode, decode, decode}), std::set<int64_t>{ll});
    // One group's prompt chunk puts the whole EP group on the normal kernels.
    EXPECT_EQ(dispatchLaunches({decode, StepBatch::Prefill(1, 256), decode, decode}),
              std::set<int64_t>{normal});
}

// DP groups run different batches: a rank's combine returns each source the outputs of that
// source's tokens (512 of them), not as many as the rank itself ran (2).
TEST(StepExecutor, CombineRowsFollowEachSourcesTokens)
{
    json patch = {{"model", "Qwen3-30B-A3B"},
                  {"parallelism", {{"tp", 1}, {"ep", 4}, {"dp", 4}, {"dp_attention", true}}}};
    InferenceScenario sc = MakeScenario(patch);
    StepProgramBuilder builder(sc, Layout(sc.pool.par, 4));
    const StepBatch small = StepBatch::Decode(2, 256);
    const StepBatch big = StepBatch::Prefill(1, 512);
    const StepProgram prog = builder.Build(0, {small, big, big, big});
    // Uniform routing, one copy per expert: 8 / 4 of a source's tokens land on each rank.
    const double h = 2048 * 2;
    bool seen = false;
    for (const RankStepProgram& r : prog.ranks)
    {
        for (const ProgramItem& it : r.items)
        {
            if (r.rank != 0 || it.type != ProgramItem::Type::Comm || it.layer != 0)
            {
                continue;
            }
            if (it.category == "ep_combine")
            {
                EXPECT_NEAR(double(it.row[1]), 512 * 2.0 * h, 1.0);
                seen = true;
            }
            if (it.category == "ep_dispatch")
            {
                // Rank 0 pads its 2 decode tokens to the graph of 2: 2 tokens out.
                EXPECT_NEAR(double(it.row[1]), 2 * 2.0 * h, 1.0);
            }
        }
    }
    EXPECT_TRUE(seen);
}

// Two micro-batches are two streams: the programs list each collective once per micro-batch.
TEST(StepExecutor, TwoBatchProgramsHaveTwoStreams)
{
    InferenceScenario sc = MoeScenario("two_batch");
    StepProgramBuilder builder(sc, Layout(sc.pool.par, 2));
    StepBatch b = StepBatch::Prefill(4, 1024);
    StepProgram p = builder.Build(0, {b, b});
    ASSERT_EQ(p.ranks.size(), 8u);
    size_t dispatch[2] = {0, 0};
    for (const auto& it : p.ranks[0].items)
    {
        if (it.category == "ep_dispatch")
        {
            dispatch[it.stream]++;
        }
    }
    EXPECT_EQ(p.ranks[0].streams, 2u);
    EXPECT_EQ(dispatch[0], sc.model.NumMoeLayers());
    EXPECT_EQ(dispatch[1], sc.model.NumMoeLayers());
}

} // namespace
} // namespace fabricsim
