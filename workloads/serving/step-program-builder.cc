// The workloads layer's StepCollectiveKind is mapped to the executor's operations here.
#include "step-program-builder.h"

#include "step-comm.h"
#include "unit-conversions.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

namespace fabricsim
{

namespace
{

int64_t
NsToPs(double ns)
{
    return units::NsToPs(ns, "compute op time");
}

std::string
Category(const CollectiveCall& c)
{
    switch (c.kind)
    {
    case StepCollectiveKind::AllReduce:
        return "tp_allreduce";
    case StepCollectiveKind::ReduceScatter:
        return c.group == RankGroup::Ep ? "ep_combine" : "tp_reduce_scatter";
    case StepCollectiveKind::AllGather:
        return c.group == RankGroup::Ep ? "ep_dispatch" : "tp_allgather";
    case StepCollectiveKind::Gather:
        return "logits_gather";
    case StepCollectiveKind::AllToAll:
        return c.label == "moe_combine" ? "ep_combine" : "ep_dispatch";
    case StepCollectiveKind::Send:
    case StepCollectiveKind::Recv:
        return "pp_send";
    }
    return "other";
}

CommOp
ToCommOp(StepCollectiveKind k)
{
    switch (k)
    {
    case StepCollectiveKind::AllReduce:
        return CommOp::AllReduce;
    case StepCollectiveKind::ReduceScatter:
        return CommOp::ReduceScatter;
    case StepCollectiveKind::AllGather:
        return CommOp::AllGather;
    case StepCollectiveKind::AllToAll:
        return CommOp::AllToAll;
    case StepCollectiveKind::Gather:
        return CommOp::Gather;
    case StepCollectiveKind::Send:
        return CommOp::Send;
    case StepCollectiveKind::Recv:
        return CommOp::Recv;
    }
    return CommOp::AllReduce;
}

bool
Blocking(const ProgramItem& it)
{
    return it.type == ProgramItem::Type::Wait
           || (it.type == ProgramItem::Type::Comm && !it.async && !it.detached);
}

/// Split after each blocking item, so that segments end where a stream would stall.
std::vector<std::vector<ProgramItem>>
Segments(std::vector<ProgramItem> items)
{
    std::vector<std::vector<ProgramItem>> out(1);
    for (auto& it : items)
    {
        bool stall = Blocking(it);
        out.back().push_back(std::move(it));
        if (stall)
        {
            out.emplace_back();
        }
    }
    if (out.back().empty())
    {
        out.pop_back();
    }
    return out;
}

/// Split the sequences into two halves of about equal tokens (indexes into the batch).
std::pair<std::vector<size_t>, std::vector<size_t>>
SplitHalves(const StepBatch& b)
{
    double total = b.Tokens();
    double acc = 0;
    std::vector<size_t> a;
    std::vector<size_t> c;
    for (size_t i = 0; i < b.sequences.size(); ++i)
    {
        bool toA = i == 0 || (c.empty() && acc < total / 2 && i + 1 < b.sequences.size());
        (toA ? a : c).push_back(i);
        acc += b.sequences[i].newTokens;
    }
    return {a, c};
}

StepBatch
Subset(const StepBatch& b, const std::vector<size_t>& idx, bool withMedia)
{
    StepBatch s;
    for (size_t i : idx)
    {
        s.sequences.push_back(b.sequences[i]);
    }
    if (withMedia)
    {
        s.images = b.images;
        s.audioSeconds = b.audioSeconds;
    }
    return s;
}

} // namespace

std::vector<KvRoute>
PlanKvRoutes(const ModelSpec& model,
             const ParallelismSpec& prefill,
             const EngineLayout& decode,
             uint32_t decodeGroup)
{
    const ParallelismSpec& d = decode.par;
    auto stageOf = [&](const ParallelismSpec& p, uint32_t layer)
    {
        auto layers = p.LayersPerStage(model);
        uint32_t acc = 0;
        for (uint32_t s = 0; s < p.pp; ++s)
        {
            acc += layers[s];
            if (layer < acc)
            {
                return s;
            }
        }
        return p.pp - 1;
    };
    double perLayer = model.KvBytesPerLayerPerRank(d.tp);
    std::vector<KvRoute> out;
    for (uint32_t l = 0; l < model.numLayers; ++l)
    {
        uint32_t sp = stageOf(prefill, l);
        uint32_t sd = stageOf(d, l);
        for (uint32_t td = 0; td < d.tp; ++td)
        {
            uint32_t host = decode.Host(decodeGroup, sd, td);
            if (prefill.tp <= d.tp)
            {
                out.push_back({l, sp, td * prefill.tp / d.tp, host, perLayer});
            }
            else
            {
                uint32_t k = prefill.tp / d.tp;
                for (uint32_t i = 0; i < k; ++i)
                {
                    out.push_back({l, sp, td * k + i, host, perLayer / k});
                }
            }
        }
    }
    return out;
}

StepProgramBuilder::StepProgramBuilder(const InferenceScenario& sc, const EngineLayout& layout)
    : m_sc(sc)
    , m_layout(layout)
    , m_roofline(std::make_unique<Roofline>(sc.model, sc.hw, layout.par, sc.routing))
{
}

namespace
{

/// Ops and collectives of one rank position, shared by the tp ranks that have the same ones.
struct RankWork
{
    std::vector<ComputeOp> ops;
    std::vector<CollectiveCall> calls;
};

/// Items of rank (g, s, t) for \p batch as micro-batch \p mb on stream \p stream.
std::vector<ProgramItem>
RankItems(const InferenceScenario& sc,
          const EngineLayout& layout,
          const RankWork& work,
          uint64_t step,
          const StepBatch& batch,
          uint32_t g,
          uint32_t s,
          uint32_t t,
          uint32_t mb,
          uint32_t stream,
          bool graphs,
          const std::vector<LayerwiseKvSend>& sends,
          const std::vector<size_t>& seqIndex,
          double prefillHostSec)
{
    const ParallelismSpec& par = layout.par;
    const uint32_t me = layout.Host(g, s, t);
    const std::vector<ComputeOp>& ops = work.ops;
    const std::vector<CollectiveCall>& calls = work.calls;
    const std::string prefix = "s" + std::to_string(step) + "/";
    const std::string mbTag = "/m" + std::to_string(mb) + "/";
    std::map<std::string, uint32_t> counter;

    auto commItem = [&](const CollectiveCall& c)
    {
        ProgramItem it;
        it.type = ProgramItem::Type::Comm;
        it.stream = stream;
        it.name = c.label;
        it.layer = c.layer;
        it.op = ToCommOp(c.kind);
        it.category = Category(c);
        std::string groupName;
        if (c.group == RankGroup::Tp)
        {
            groupName = "tp" + std::to_string(g) + "." + std::to_string(s);
            for (uint32_t k = 0; k < par.tp; ++k)
            {
                it.group.push_back(layout.Host(g, s, k));
            }
            it.groupIndex = t;
        }
        else if (c.group == RankGroup::Ep)
        {
            groupName = "ep" + std::to_string(s);
            for (uint32_t gg = 0; gg < layout.groups; ++gg)
            {
                for (uint32_t k = 0; k < par.tp; ++k)
                {
                    it.group.push_back(layout.Host(gg, s, k));
                }
            }
            it.groupIndex = g * par.tp + t;
            for (double b : c.sendBytes)
            {
                it.row.push_back(units::RoundCount(b, "all-to-all bytes"));
            }
            it.kernelLaunchPs = c.kernelLaunchPs;
            it.kernelMinPs = c.kernelMinPs;
            it.kernelFillPs = c.kernelFillPs;
            it.smShare = c.smShare;
        }
        else
        {
            uint32_t lo = c.kind == StepCollectiveKind::Send ? s : s - 1;
            groupName
                = "pp" + std::to_string(g) + "." + std::to_string(lo) + "." + std::to_string(t);
            it.group = {layout.Host(g, lo, t), layout.Host(g, lo + 1, t)};
            it.groupIndex = c.kind == StepCollectiveKind::Send ? 0 : 1;
        }
        it.key = prefix + groupName + mbTag + std::to_string(counter[groupName]++);
        it.bytes = units::RoundCount(c.bytes, "collective bytes");
        return it;
    };

    const bool tier = sc.kv.placement != KvPlacement::Hbm;
    auto fetchItem = [&](const ComputeOp& attn)
    {
        ProgramItem it;
        it.type = ProgramItem::Type::Comm;
        it.stream = stream;
        it.op = CommOp::KvFetch;
        it.category = "kv_fetch";
        it.name = "kv_fetch";
        it.layer = attn.layer;
        it.key = prefix + "kv" + std::to_string(me) + mbTag + std::to_string(attn.layer);
        it.bytes = units::RoundCount(attn.kvBytes, "KV fetch bytes");
        it.async = true;
        it.group = {me};
        if (sc.kv.placement == KvPlacement::Remote)
        {
            const auto& pool = sc.kv.poolHosts;
            it.fetchFrom = pool[me % pool.size()];
        }
        else
        {
            it.tierBwBytesPerSec = sc.kv.tierBwBytesPerSec;
        }
        return it;
    };
    // Attention op of each layer, to fetch its KV one layer ahead.
    std::map<int32_t, size_t> attnOf;
    for (size_t i = 0; i < ops.size(); ++i)
    {
        if (ops[i].kind == OpKind::Attention)
        {
            attnOf[ops[i].layer] = i;
        }
    }

    std::vector<ProgramItem> items;
    // The engine's host work for the step (scheduling, input preparation, sampling and output
    // processing): the GPU waits for it before the first stage's forward.
    const double hostSec = sc.exec.stepOverheadSec
                           + sc.exec.sequenceOverheadSec * double(batch.sequences.size())
                           + prefillHostSec;
    if (s == 0 && mb == 0 && hostSec > 0)
    {
        ProgramItem h;
        h.type = ProgramItem::Type::Compute;
        h.stream = stream;
        h.name = "engine_overhead";
        h.durationPs = NsToPs(hostSec * 1e9);
        items.push_back(h);
    }
    size_t next = 0;
    auto flushCalls = [&](int32_t after)
    {
        while (next < calls.size() && calls[next].afterOp == after)
        {
            items.push_back(commItem(calls[next++]));
        }
    };
    flushCalls(-1);
    if (tier && !attnOf.empty())
    {
        items.push_back(fetchItem(ops[attnOf.begin()->second]));
    }
    for (size_t i = 0; i < ops.size(); ++i)
    {
        const ComputeOp& op = ops[i];
        bool firstOfLayer = op.layer >= 0 && (i == 0 || ops[i - 1].layer != op.layer);
        if (tier && firstOfLayer)
        {
            auto nxt = attnOf.find(op.layer + 1);
            if (nxt != attnOf.end())
            {
                items.push_back(fetchItem(ops[nxt->second]));
            }
        }
        if (tier && op.kind == OpKind::Attention)
        {
            ProgramItem w;
            w.type = ProgramItem::Type::Wait;
            w.stream = stream;
            w.key = prefix + "kv" + std::to_string(me) + mbTag + std::to_string(op.layer);
            items.push_back(w);
        }
        ProgramItem c;
        c.type = ProgramItem::Type::Compute;
        c.stream = stream;
        c.name = OpKindName(op.kind);
        c.layer = op.layer;
        // Calibrated kernels were timed inside graphs: their gaps are in kernelNs already.
        double ns = !graphs ? op.timeNs
                    : op.calibrated
                        ? op.kernelNs
                        : op.kernelNs + op.kernels * sc.exec.graphKernelOverheadSec * 1e9;
        c.durationPs = NsToPs(ns);
        c.flops = op.flops;
        c.hbmBytes = op.Bytes();
        items.push_back(c);

        bool lastOfLayer = op.layer >= 0 && (i + 1 == ops.size() || ops[i + 1].layer != op.layer);
        if (lastOfLayer)
        {
            // The layer's KV is complete: ship it to the decode pool (detached).
            for (const auto& snd : sends)
            {
                if (snd.group != g)
                {
                    continue;
                }
                auto pos = std::find(seqIndex.begin(), seqIndex.end(), snd.sequence);
                if (pos == seqIndex.end())
                {
                    continue;
                }
                double q = batch.sequences[size_t(pos - seqIndex.begin())].newTokens;
                for (const auto& r : snd.routes)
                {
                    if (int32_t(r.layer) != op.layer || r.srcStage != s || r.srcTp != t)
                    {
                        continue;
                    }
                    ProgramItem k;
                    k.type = ProgramItem::Type::Comm;
                    k.stream = stream;
                    k.op = CommOp::KvSend;
                    k.category = "kv_transfer";
                    k.name = "kv_layer";
                    k.layer = op.layer;
                    k.group = {me, r.dstHost};
                    k.groupIndex = 0;
                    k.bytes = units::RoundCount(q * r.bytesPerToken, "KV transfer bytes");
                    k.detached = true;
                    k.transferId = snd.transferId;
                    k.key = prefix + "kvx" + std::to_string(snd.transferId) + "/"
                            + std::to_string(me) + ">" + std::to_string(r.dstHost) + "/"
                            + std::to_string(op.layer);
                    if (k.bytes > 0)
                    {
                        items.push_back(k);
                    }
                }
            }
        }
        flushCalls(int32_t(i));
    }
    return items;
}

} // namespace

uint32_t
CudaGraphBatchSize(uint32_t n)
{
    // vLLM's default capture sizes: 1, 2, 4, then every 8 up to 256, then every 16.
    if (n <= 2)
    {
        return n;
    }
    if (n <= 4)
    {
        return 4;
    }
    if (n <= 256)
    {
        return (n + 7) / 8 * 8;
    }
    return (n + 15) / 16 * 16;
}

StepProgram
StepProgramBuilder::Build(uint64_t step,
                          const std::vector<StepBatch>& batches,
                          const std::vector<LayerwiseKvSend>& sends) const
{
    const ParallelismSpec& par = m_layout.par;
    StepProgram prog;
    prog.step = step;

    // Two micro-batches only when every group can split, so EP members stay matched.
    bool split = m_sc.exec.epOverlap == EpOverlap::TwoBatch && par.EpExchangesTokens();
    for (const auto& b : batches)
    {
        split = split && b.sequences.size() >= 2;
    }

    StepComm comm(m_sc.model, par, m_sc.routing);
    comm.SetGpuSms(m_sc.hw.sms);
    comm.SetGpuScaleUp(m_sc.hw.scaleUpBwBytesPerSec);
    // One EP group runs one kind of DeepEP kernels a step: the normal ones if any of its groups
    // carries prefill tokens (SGLang's auto mode agrees on it across DP ranks).
    comm.SetPrefillStep(std::any_of(
        batches.begin(), batches.end(), [](const StepBatch& b) { return b.HasPrefill(); }));
    // Each group's micro-batches (padded to its CUDA graph's size), first for all groups: an EP
    // collective's rows need every member's tokens.
    struct GroupParts
    {
        bool graphs = false;
        std::vector<size_t> all, a, b; //!< sequence indices: all, micro-batch A, micro-batch B
        std::vector<StepBatch> parts;  //!< the micro-batches run
    };
    std::vector<GroupParts> groupParts;
    for (uint32_t g = 0; g < m_layout.groups; ++g)
    {
        const StepBatch& batch = batches.at(g);
        GroupParts gp;
        gp.graphs = m_sc.exec.cudaGraphs && batch.images == 0 && batch.audioSeconds == 0
                    && batch.sequences.size() <= m_sc.exec.cudaGraphMaxBatch
                    && std::all_of(batch.sequences.begin(),
                                   batch.sequences.end(),
                                   [](const SequenceWork& w)
                                   { return w.newTokens == 1 && w.cachedTokens > 0; });
        gp.all.resize(batch.sequences.size());
        for (size_t i = 0; i < gp.all.size(); ++i)
        {
            gp.all[i] = i;
        }
        if (split)
        {
            std::tie(gp.a, gp.b) = SplitHalves(batch);
        }
        gp.parts = {split ? Subset(batch, gp.a, true) : batch};
        if (gp.graphs && !split && m_sc.exec.cudaGraphPadding)
        {
            // The graph replayed is the one captured for the next size up: its padding slots
            // run through every GEMM (one token each, a one-token context, no sampling).
            const uint32_t n = uint32_t(batch.sequences.size());
            gp.parts[0].sequences.resize(CudaGraphBatchSize(n), SequenceWork{1, 1, false});
        }
        if (split)
        {
            gp.parts.push_back(Subset(batch, gp.b, false));
        }
        groupParts.push_back(std::move(gp));
    }
    // DP padding: when every attention group of the EP group replays a graph, all replay the
    // largest one's size (vLLM pads each DP rank to the most tokens across the DP ranks when
    // their synced CUDA-graph mode is on), so the smaller groups run and send padding slots.
    const bool allGraphs = std::all_of(
        groupParts.begin(), groupParts.end(), [](const GroupParts& gp) { return gp.graphs; });
    if (m_sc.exec.dpPadding && m_sc.exec.cudaGraphPadding && !split && par.ep > 1
        && groupParts.size() > 1 && allGraphs)
    {
        size_t most = 0;
        for (const GroupParts& gp : groupParts)
        {
            most = std::max(most, gp.parts[0].sequences.size());
        }
        for (GroupParts& gp : groupParts)
        {
            gp.parts[0].sequences.resize(most, SequenceWork{1, 1, false});
        }
    }
    // Tokens of each EP rank (group x tp + tp rank) per micro-batch.
    std::vector<std::vector<double>> epTokens(split ? 2 : 1);
    for (size_t mb = 0; mb < epTokens.size(); ++mb)
    {
        for (const GroupParts& gp : groupParts)
        {
            for (uint32_t t = 0; t < par.tp; ++t)
            {
                epTokens[mb].push_back(gp.parts[mb].Tokens() / par.tp);
            }
        }
    }
    for (uint32_t g = 0; g < m_layout.groups; ++g)
    {
        const StepBatch& batch = batches.at(g);
        const GroupParts& gp = groupParts[g];
        const bool graphs = gp.graphs;
        const std::vector<size_t>& all = gp.all;
        const std::vector<size_t>& a = gp.a;
        const std::vector<size_t>& b = gp.b;
        const std::vector<StepBatch>& parts = gp.parts;
        // A step with prompt work: its fixed and per-prompt-token engine time, on the first
        // stage of the group's step (a prompt chunk is more than one new token or none cached,
        // as the graph test above reads a decode).
        double prefillHost = 0;
        bool promptWork = false;
        for (const SequenceWork& w : batch.sequences)
        {
            if (w.newTokens != 1 || w.cachedTokens == 0)
            {
                if (!promptWork)
                {
                    prefillHost = m_sc.exec.prefillOverheadSec;
                    promptWork = true;
                }
                prefillHost += m_sc.exec.prefillTokenOverheadSec * double(w.newTokens);
            }
        }
        for (uint32_t s = 0; s < par.pp; ++s)
        {
            if (par.ep > 1 && m_sc.placement.servers)
            {
                // DeepEP's normal kernels cross servers once per server (StepComm).
                std::vector<uint32_t> nodes;
                for (uint32_t gg = 0; gg < m_layout.groups; ++gg)
                {
                    for (uint32_t k = 0; k < par.tp; ++k)
                    {
                        nodes.push_back(m_layout.Host(gg, s, k)
                                        / std::max<uint32_t>(1, m_sc.placement.accelsPerServer));
                    }
                }
                comm.SetEpNodes(std::move(nodes));
            }
            // The tp ranks of a stage share ops and collectives unless they hold other experts.
            std::map<std::pair<size_t, uint32_t>, RankWork> works;
            auto work = [&](size_t mb, uint32_t t) -> const RankWork&
            {
                RankPosition pos{s, par.ep > 1 ? g * par.tp + t : 0};
                auto key = std::make_pair(mb, pos.epRank);
                auto it = works.find(key);
                if (it == works.end())
                {
                    RankWork w;
                    w.ops = m_roofline->StepOps(parts[mb], pos);
                    if (par.ep > 1)
                    {
                        comm.SetEpTokens(epTokens[mb]);
                    }
                    w.calls = comm.Collectives(parts[mb], w.ops, pos);
                    it = works.emplace(key, std::move(w)).first;
                }
                return it->second;
            };
            for (uint32_t t = 0; t < par.tp; ++t)
            {
                RankStepProgram rp;
                rp.rank = m_layout.Host(g, s, t);
                if (!split)
                {
                    rp.items = RankItems(m_sc,
                                         m_layout,
                                         work(0, t),
                                         step,
                                         batch,
                                         g,
                                         s,
                                         t,
                                         0,
                                         0,
                                         graphs,
                                         sends,
                                         all,
                                         prefillHost);
                }
                else
                {
                    auto segA = Segments(RankItems(m_sc,
                                                   m_layout,
                                                   work(0, t),
                                                   step,
                                                   parts[0],
                                                   g,
                                                   s,
                                                   t,
                                                   0,
                                                   0,
                                                   graphs,
                                                   sends,
                                                   a,
                                                   prefillHost));
                    auto segB = Segments(RankItems(m_sc,
                                                   m_layout,
                                                   work(1, t),
                                                   step,
                                                   parts[1],
                                                   g,
                                                   s,
                                                   t,
                                                   1,
                                                   1,
                                                   graphs,
                                                   sends,
                                                   b,
                                                   0));
                    rp.streams = 2;
                    for (size_t k = 0; k < std::max(segA.size(), segB.size()); ++k)
                    {
                        for (auto* seg : {&segA, &segB})
                        {
                            if (k < seg->size())
                            {
                                for (auto& it : (*seg)[k])
                                {
                                    rp.items.push_back(std::move(it));
                                }
                            }
                        }
                    }
                }
                prog.ranks.push_back(std::move(rp));
            }
        }
    }
    return prog;
}

} // namespace fabricsim
