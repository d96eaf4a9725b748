#include "step-comm.h"

#include "ep-exchange.h"

#include <cmath>
#include <optional>

namespace fabricsim
{

std::string
StepCollectiveKindName(StepCollectiveKind k)
{
    switch (k)
    {
    case StepCollectiveKind::AllReduce:
        return "all_reduce";
    case StepCollectiveKind::ReduceScatter:
        return "reduce_scatter";
    case StepCollectiveKind::AllGather:
        return "all_gather";
    case StepCollectiveKind::AllToAll:
        return "all_to_all";
    case StepCollectiveKind::Gather:
        return "gather";
    case StepCollectiveKind::Send:
        return "send";
    case StepCollectiveKind::Recv:
        return "recv";
    }
    return "collective";
}

std::string
RankGroupName(RankGroup g)
{
    switch (g)
    {
    case RankGroup::Tp:
        return "tp";
    case RankGroup::Ep:
        return "ep";
    case RankGroup::Pp:
        return "pp";
    }
    return "group";
}

StepComm::StepComm(const ModelSpec& model, const ParallelismSpec& par, const RoutingModel& routing)
    : m_model(model)
    , m_par(par)
{
    if (m_model.moe)
    {
        m_pi = routing.SelectionProbabilities(m_model.moe->numExperts, m_model.moe->topK);
    }
}

void
StepComm::AppendTpReduce(std::vector<CollectiveCall>& out,
                         int32_t layer,
                         int32_t after,
                         double bytes,
                         const std::string& label) const
{
    if (m_par.tp <= 1)
    {
        return;
    }
    CollectiveCall c;
    c.group = RankGroup::Tp;
    c.groupSize = m_par.tp;
    c.layer = layer;
    c.afterOp = after;
    c.bytes = bytes;
    c.label = label;
    if (!m_par.sequenceParallel)
    {
        c.kind = StepCollectiveKind::AllReduce;
        out.push_back(c);
        return;
    }
    c.kind = StepCollectiveKind::ReduceScatter;
    out.push_back(c);
    c.kind = StepCollectiveKind::AllGather;
    out.push_back(c);
}

std::vector<CollectiveCall>
StepComm::Collectives(const StepBatch& batch,
                      const std::vector<ComputeOp>& ops,
                      const RankPosition& pos) const
{
    const double ba = DTypeBytes(m_model.activationDtype);
    const double t = batch.Tokens();
    const double h = m_model.hiddenSize;
    const double hidden = t * h * ba; // T H b
    const bool ep = m_par.EpExchangesTokens();
    // deepep-auto: the normal kernels when the EP group's step carries prefill tokens (the
    // builder says so for the whole group; alone, this rank's batch decides).
    const bool prefill = m_prefillStep.value_or(batch.HasPrefill());
    const EpBackend backend = ResolveEpBackend(m_par.epBackend, prefill);
    // The EP exchange is the same at every MoE layer of the step: each phase built once.
    // Copies per destination and bytes per copy come from the one EP model (ep-exchange.h):
    // per expert (all-to-all, DeepEP low-latency), per rank (DeepEP normal; per node across
    // nodes, forwarded inside them), in the backend's dispatch and combine dtypes.
    struct EpPhase
    {
        std::vector<double> sendBytes;
        double bytes = 0;
        int64_t kernelLaunchPs = -1;
        int64_t kernelMinPs = 0;
        int64_t kernelFillPs = 0;
        double smShare = 0;
    };
    std::optional<EpPhase> epPhases[2];
    auto epPhase = [&](bool dispatch) -> const EpPhase&
    {
        std::optional<EpPhase>& cached = epPhases[dispatch ? 0 : 1];
        if (cached)
        {
            return *cached;
        }
        EpPhase x;
        const double tokensLocal = t / m_par.tp;
        const EpTokenWire wire = EpWireOf(backend, m_model.hiddenSize, ba);
        const uint32_t me = pos.epRank % m_par.ep;
        // Every rank's tokens: the combine returns each source its own tokens' outputs (the
        // builder's, or as many as ours when it gave none).
        std::vector<double> tokens = m_epTokens;
        if (tokens.size() != m_par.ep)
        {
            tokens.assign(m_par.ep, tokensLocal);
        }
        tokens[me] = tokensLocal;
        auto rowOf = [&](const std::vector<double>& rankTokens, bool dispatchRow)
        {
            return EpRowCopies(m_pi,
                               m_par.ep,
                               m_model.moe->topK,
                               wire.perRank,
                               backend == EpBackend::DeepEpNormal ? m_epNodes
                                                                  : std::vector<uint32_t>{},
                               rankTokens,
                               me,
                               dispatchRow,
                               ExpertGroups{m_model.moe->groups, m_model.moe->topkGroups});
        };
        const std::vector<double> copies = rowOf(tokens, dispatch);
        const double perCopy = dispatch ? wire.dispatchBytes : wire.combineBytes;
        double sentCopies = 0;
        double serverCopies = 0; // to ranks in this rank's server
        x.sendBytes.resize(m_par.ep);
        for (uint32_t r = 0; r < m_par.ep; ++r)
        {
            x.sendBytes[r] = copies[r] * perCopy;
            x.bytes += r == me ? 0.0 : x.sendBytes[r];
            sentCopies += r == me ? 0.0 : copies[r];
            const bool local = m_epNodes.empty() || m_epNodes[r] == m_epNodes[me];
            serverCopies += r == me || !local ? 0.0 : copies[r];
        }
        if (auto k = EpKernelCostOf(backend, dispatch))
        {
            EpKernelWork work;
            work.experts = m_model.moe->numExperts;
            work.gpuSms = m_gpuSms;
            work.scaleUpBytesPerSecond = m_gpuScaleUpBps;
            // The start-up (a token's bytes) is known at launch. A token's copies: the row of
            // one token at every rank (its own copies and the ones it relays, as the fit
            // counts them), whatever this step's balance across the ranks.
            work.bytesPerCopy = perCopy;
            double moved = 0;
            for (double c : rowOf(std::vector<double>(m_par.ep, 1.0), true))
            {
                moved += c;
            }
            work.copiesPerToken = tokensLocal > 0 ? moved : 0.0;
            x.kernelLaunchPs = EpKernelMinPs(*k, work);
            // The kernels' own work on this rank's copies and tokens (ep-exchange.h).
            work.copies = sentCopies;
            work.scaleUpCopies = serverCopies;
            work.smBudget = m_par.epSms;
            work.tokens = tokensLocal;
            x.kernelMinPs = EpKernelMinPs(*k, work);
            x.kernelFillPs = EpKernelFillPs(*k, work);
            // The normal kernels run on their SM budget for the whole call; the low-latency
            // ones return their SMs while they wait (DeepEP's receive hook).
            if (k->smBudget && m_gpuSms > 0)
            {
                x.smShare = std::min(1.0, double(m_par.epSms) / m_gpuSms);
            }
        }
        cached = std::move(x);
        return *cached;
    };
    std::vector<CollectiveCall> out;

    double ppBytes = hidden * (m_par.ppSend == PpSendFlavor::Vllm ? 2.0 : 1.0);
    if (pos.ppStage > 0)
    {
        CollectiveCall c;
        c.kind = StepCollectiveKind::Recv;
        c.group = RankGroup::Pp;
        c.groupSize = 2;
        c.afterOp = -1;
        c.bytes = ppBytes;
        c.peerStage = pos.ppStage - 1;
        c.label = "pp_recv";
        out.push_back(c);
    }

    for (size_t i = 0; i < ops.size(); ++i)
    {
        const ComputeOp& op = ops[i];
        int32_t idx = int32_t(i);
        bool lastOfLayer = i + 1 == ops.size() || ops[i + 1].layer != op.layer;
        switch (op.kind)
        {
        case OpKind::Embedding:
            AppendTpReduce(out, -1, idx, hidden, "embedding");
            break;
        case OpKind::QkvProj:
            if (m_model.qkNormAcrossHeads && m_par.tp > 1)
            {
                // q's and k's fp32 variance per token, summed over the TP ranks before the
                // norms apply (vLLM's MiniMaxText01RMSNormTP.forward_qk: one all-reduce).
                CollectiveCall c;
                c.kind = StepCollectiveKind::AllReduce;
                c.group = RankGroup::Tp;
                c.groupSize = m_par.tp;
                c.layer = op.layer;
                c.afterOp = idx;
                c.bytes = t * 2 * 4.0;
                c.label = "qk_norm";
                out.push_back(c);
            }
            break;
        case OpKind::OutProj:
            if (ep && m_par.tp > 1 && m_par.sequenceParallel)
            {
                // Each rank keeps its T / tp slice for the dispatch: reduce-scatter alone.
                CollectiveCall c;
                c.kind = StepCollectiveKind::ReduceScatter;
                c.groupSize = m_par.tp;
                c.layer = op.layer;
                c.afterOp = idx;
                c.bytes = hidden;
                c.label = "attn_out";
                if (m_model.IsMoeLayer(uint32_t(op.layer)))
                {
                    out.push_back(c);
                    break;
                }
            }
            AppendTpReduce(out, op.layer, idx, hidden, "attn_out");
            break;
        case OpKind::DenseMlp:
            AppendTpReduce(out, op.layer, idx, hidden, "mlp_out");
            break;
        case OpKind::Router:
        case OpKind::MoeExperts:
            if (!ep)
            {
                break;
            }
            {
                const bool dispatch = op.kind == OpKind::Router;
                const double tokensLocal = t / m_par.tp;
                CollectiveCall c;
                c.group = RankGroup::Ep;
                c.groupSize = m_par.ep;
                c.layer = op.layer;
                c.afterOp = idx;
                c.label = dispatch ? "moe_dispatch" : "moe_combine";
                if (backend == EpBackend::AllGatherReduceScatter)
                {
                    // Every EP rank receives every token of the group (all_gatherv); each
                    // rank's partial outputs for all of them are summed back to the tokens'
                    // own ranks (reduce_scatterv).
                    c.kind = dispatch ? StepCollectiveKind::AllGather
                                      : StepCollectiveKind::ReduceScatter;
                    c.bytes = m_par.ep * tokensLocal * h * ba;
                }
                else
                {
                    const EpPhase& x = epPhase(dispatch);
                    c.kind = StepCollectiveKind::AllToAll;
                    c.sendBytes = x.sendBytes;
                    c.bytes = x.bytes;
                    c.kernelLaunchPs = x.kernelLaunchPs;
                    c.kernelMinPs = x.kernelMinPs;
                    c.kernelFillPs = x.kernelFillPs;
                    c.smShare = x.smShare;
                }
                out.push_back(c);
            }
            break;
        default:
            break;
        }
        if (op.layer >= 0 && lastOfLayer && m_model.IsMoeLayer(uint32_t(op.layer)))
        {
            if (!ep)
            {
                AppendTpReduce(out, op.layer, idx, hidden, "moe_out");
            }
            else if (m_par.tp > 1)
            {
                CollectiveCall c;
                c.kind = StepCollectiveKind::AllGather;
                c.groupSize = m_par.tp;
                c.layer = op.layer;
                c.afterOp = idx;
                c.bytes = hidden;
                c.label = "moe_out";
                out.push_back(c);
            }
        }
        if (op.kind == OpKind::LmHead && m_par.tp > 1)
        {
            CollectiveCall c;
            c.kind = StepCollectiveKind::Gather;
            c.groupSize = m_par.tp;
            c.afterOp = idx;
            c.bytes
                = batch.SamplingSequences() * std::ceil(double(m_model.vocabSize) / m_par.tp) * ba;
            c.label = "logits";
            out.push_back(c);
        }
    }

    if (pos.ppStage + 1 < m_par.pp)
    {
        CollectiveCall c;
        c.kind = StepCollectiveKind::Send;
        c.group = RankGroup::Pp;
        c.groupSize = 2;
        c.afterOp = int32_t(ops.size()) - 1;
        c.bytes = ppBytes;
        c.peerStage = pos.ppStage + 1;
        c.label = "pp_send";
        out.push_back(c);
    }
    return out;
}

} // namespace fabricsim
