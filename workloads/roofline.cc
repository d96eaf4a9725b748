#include "roofline.h"

#include "compute-calibration.h"

#include <algorithm>
#include <cmath>

namespace fabricsim
{

std::string
OpKindName(OpKind k)
{
    switch (k)
    {
    case OpKind::Encoder:
        return "encoder";
    case OpKind::Embedding:
        return "embedding";
    case OpKind::QkvProj:
        return "qkv_proj";
    case OpKind::Attention:
        return "attention";
    case OpKind::OutProj:
        return "out_proj";
    case OpKind::DenseMlp:
        return "dense_mlp";
    case OpKind::Router:
        return "router";
    case OpKind::MoeExperts:
        return "moe_experts";
    case OpKind::SharedExperts:
        return "shared_experts";
    case OpKind::LmHead:
        return "lm_head";
    }
    return "op";
}

Roofline::Roofline(const ModelSpec& model,
                   const HardwareSpec& hw,
                   const ParallelismSpec& par,
                   const RoutingModel& routing)
    : m_model(model)
    , m_hw(hw)
    , m_par(par)
    , m_routing(routing)
{
    if (m_model.moe)
    {
        m_pi = m_routing.SelectionProbabilities(m_model.moe->numExperts, m_model.moe->topK);
    }
}

const std::vector<double>&
Roofline::SelectionProbabilities() const
{
    return m_pi;
}

void
Roofline::Cost(ComputeOp& op, DType dtype) const
{
    CostOp(m_hw, op, dtype);
    if (m_hw.computeCalibration)
    {
        CalibrateOp(m_hw, *m_hw.computeCalibration, op);
    }
}

void
CostOp(const HardwareSpec& hw, ComputeOp& op, DType dtype)
{
    op.computeNs = op.flops / hw.EffectiveFlops(dtype) * 1e9;
    op.memoryNs = op.Bytes() / hw.EffectiveHbmBw() * 1e9;
    op.kernelNs = std::max(op.computeNs, op.memoryNs);
    op.timeNs = op.kernelNs + op.kernels * hw.launchOverheadSec * 1e9;
}

double
Roofline::TokensPerEpGroup(const StepBatch& batch) const
{
    return batch.Tokens() * m_par.AttentionGroupsPerEpGroup();
}

double
Roofline::TokensRoutedPerRank(const StepBatch& batch) const
{
    return m_par.EpExchangesTokens() ? batch.Tokens() / m_par.tp : batch.Tokens();
}

namespace
{

KernelShape
Gemm(const char* name, double m, double n, double k, DType dtype, bool blockScaled = false)
{
    KernelShape g;
    g.op = KernelOp::Gemm;
    g.name = name;
    g.dtype = dtype;
    g.blockScaled = blockScaled;
    g.m = uint64_t(std::llround(m));
    g.n = uint64_t(std::llround(n));
    g.k = uint64_t(std::llround(k));
    return g;
}

/// A memory-bound kernel over \p tokens moving \p bytes (read + written).
KernelShape
Elementwise(const char* name, double tokens, double bytes, DType dtype)
{
    KernelShape e;
    e.op = KernelOp::Elementwise;
    e.name = name;
    e.dtype = dtype;
    e.tokens = uint64_t(std::llround(tokens));
    e.bytes = bytes;
    return e;
}

/// Keys the new queries of \p s see in all: each query at position p sees p + 1, capped at
/// \p window (0: no cap). Without a cap q (c + (q + 1) / 2).
double
AttendedKeys(const SequenceWork& s, uint64_t window)
{
    const double q = s.newTokens;
    const double c = double(s.cachedTokens);
    if (window == 0)
    {
        return q * (c + (q + 1) / 2);
    }
    // Queries at p = c .. c + q - 1; the first a of them (p + 1 <= window) see p + 1 keys.
    const double w = double(window);
    const double a = std::clamp(w - c, 0.0, q);
    return a * c + a * (a + 1) / 2 + (q - a) * w;
}

/// RMSNorm fused with the residual add over \p tokens x \p width: reads the input and the
/// residual, writes both.
KernelShape
AddRmsNorm(const char* name, double tokens, double width, double ba, DType dtype)
{
    return Elementwise(name, tokens, 4 * tokens * width * ba, dtype);
}

/// What every op of a layer is priced with: tp, weight and activation bytes, the GEMM dtype,
/// block-scaled fp8, the step's tokens and the hidden size.
struct LayerFigures
{
    double tp;
    double bw;
    double ba;
    DType gemm;
    bool block;
    double t;
    double h;
};

LayerFigures
FiguresOf(const ModelSpec& m, const ParallelismSpec& par, const StepBatch& batch)
{
    return {double(par.tp),
            DTypeBytes(m.weightDtype),
            DTypeBytes(m.activationDtype),
            m.weightDtype == DType::Fp8 ? DType::Fp8 : m.activationDtype,
            m.BlockScaledFp8(),
            batch.Tokens(),
            double(m.hiddenSize)};
}

} // namespace

std::vector<ComputeOp>
Roofline::LayerOps(uint32_t layer, const StepBatch& batch, uint32_t epRank) const
{
    const ModelSpec& m = m_model;
    const auto [tp, bw, ba, gemm, block, t, h] = FiguresOf(m, m_par, batch);
    const int32_t l = int32_t(layer);
    std::vector<ComputeOp> ops;

    if (m.KindOf(layer) == LayerKind::Linear)
    {
        AppendLinearOps(ops, layer, batch);
    }
    else
    {
        AppendAttentionOps(ops, layer, batch);
    }

    if (m.IsMoeLayer(layer))
    {
        AppendMoeOps(ops, layer, batch, epRank);
        return ops;
    }
    ComputeOp mlp;
    mlp.kind = OpKind::DenseMlp;
    mlp.layer = l;
    mlp.kernels = 4;
    double mlpParams = double(m.DenseMlpParams()) / tp;
    mlp.shapes = {Gemm("gate_up", t, 2.0 * m.intermediateSize / tp, h, gemm, block),
                  Gemm("down", t, h, double(m.intermediateSize) / tp, gemm, block)};
    mlp.elementwise
        = {AddRmsNorm("post_attention_layernorm", t, h, ba, m.activationDtype),
           Elementwise("silu_and_mul", t, 3 * t * m.intermediateSize / tp * ba, m.activationDtype)};
    mlp.flops = 2 * t * mlpParams;
    mlp.weightBytes = (mlpParams + h) * bw;
    mlp.activationBytes = t * (2 * h + 3 * m.intermediateSize / tp) * ba;
    Cost(mlp, gemm);
    ops.push_back(mlp);
    return ops;
}

void
Roofline::AppendAttentionOps(std::vector<ComputeOp>& ops,
                             uint32_t layer,
                             const StepBatch& batch) const
{
    const ModelSpec& m = m_model;
    const auto [tp, bw, ba, gemm, block, t, h] = FiguresOf(m, m_par, batch);
    const double headsPerRank = m.numHeads / tp;
    const double dqk = m.QkHeadDim();
    const double dv = m.VHeadDim();
    const int32_t l = int32_t(layer);

    // Q/K/V projections. MLA: the down projections (q_a, kv_a) are replicated on every TP
    // rank, the up projections (q_b, kv_b) and o are split by heads.
    ComputeOp qkv;
    qkv.kind = OpKind::QkvProj;
    qkv.layer = l;
    double qkvParams;
    double qkvOut;
    if (m.attention == AttentionKind::Mla)
    {
        const MlaSpec& a = m.mla;
        double down = h * (a.qLoraRank + a.kvLoraRank + a.qkRopeHeadDim);
        double up
            = (a.qLoraRank > 0 ? double(a.qLoraRank) * m.numHeads * dqk : h * m.numHeads * dqk)
              + double(a.kvLoraRank) * m.numHeads * (a.qkNopeHeadDim + a.vHeadDim);
        if (a.qLoraRank == 0)
        {
            down = h * (a.kvLoraRank + a.qkRopeHeadDim);
        }
        qkvParams = down + up / tp;
        qkvOut = headsPerRank * (2 * dqk + dv);
        qkv.kernels = 4;
        qkv.shapes = {Gemm("qkv_a", t, down / h, h, gemm, block)};
        if (a.qLoraRank > 0)
        {
            qkv.shapes.push_back(Gemm("q_b", t, headsPerRank * dqk, a.qLoraRank, gemm, block));
        }
        else
        {
            qkv.shapes.push_back(Gemm("q_proj", t, headsPerRank * dqk, h, gemm, block));
        }
        qkv.shapes.push_back(Gemm(
            "kv_b", t, headsPerRank * (a.qkNopeHeadDim + a.vHeadDim), a.kvLoraRank, gemm, block));
    }
    else
    {
        double kvHeads = m.KvHeadsPerRank(m_par.tp);
        // An output gate's weights are fused into q_proj: twice the query width.
        const double gate = m.attnOutputGate ? headsPerRank : 0;
        qkvOut = (headsPerRank + gate + 2 * kvHeads) * m.headDim;
        qkvParams = h * qkvOut;
        qkv.kernels = 2;
        qkv.shapes = {Gemm("qkv_proj", t, qkvOut, h, gemm, block)};
    }
    qkv.elementwise = {AddRmsNorm("input_layernorm", t, h, ba, m.activationDtype)};
    if (m.qkNorm)
    {
        // Qwen3: RMSNorm over each head's q and k, two kernels, in place.
        qkv.elementwise.push_back(
            Elementwise("q_norm", t, 2 * t * headsPerRank * m.headDim * ba, m.activationDtype));
        qkv.elementwise.push_back(
            Elementwise("k_norm",
                        t,
                        2 * t * double(m.KvHeadsPerRank(m_par.tp)) * m.headDim * ba,
                        m.activationDtype));
    }
    qkv.flops = 2 * t * qkvParams;
    qkv.weightBytes = (qkvParams + h) * bw;
    qkv.activationBytes = t * (h + qkvOut) * ba;
    Cost(qkv, gemm);
    ops.push_back(qkv);

    ops.push_back(AttentionOp(layer, batch));

    // Output projection (row-parallel).
    ComputeOp out;
    out.kind = OpKind::OutProj;
    out.layer = l;
    double outParams = headsPerRank * dv * h;
    out.shapes = {Gemm("o_proj", t, h, headsPerRank * dv, gemm, block)};
    out.flops = 2 * t * outParams;
    out.weightBytes = outParams * bw;
    out.activationBytes = t * (headsPerRank * dv + h) * ba;
    Cost(out, gemm);
    ops.push_back(out);
}

void
Roofline::AppendLinearOps(std::vector<ComputeOp>& ops, uint32_t layer, const StepBatch& batch) const
{
    const ModelSpec& m = m_model;
    const LinearAttentionSpec& a = *m.linear;
    const auto [tp, bw, ba, gemm, block, t, h] = FiguresOf(m, m_par, batch);
    // TP splits the key and value heads (and with them the conv channels and the state).
    const double key = a.KeyDim() / tp;
    const double value = a.ValueDim() / tp;
    const double heads = a.numValueHeads / tp;
    const double conv = a.ConvDim() / tp;
    const double dk = a.keyHeadDim;
    const double dv = a.valueHeadDim;
    const int32_t l = int32_t(layer);

    ComputeOp in;
    in.kind = OpKind::QkvProj;
    in.layer = l;
    in.kernels = 2;
    const bool lightning = a.kind == LinearKind::Lightning;
    // Gated DeltaNet: q, k, v, z, beta, alpha; lightning: q, k, v and the output gate.
    const double inOut = lightning ? 4 * value : 2 * key + 2 * value + 2 * heads;
    in.shapes = {Gemm("in_proj_qkvz", t, inOut, h, gemm, block)};
    in.elementwise = {AddRmsNorm("input_layernorm", t, h, ba, m.activationDtype)};
    in.flops = 2 * t * h * inOut;
    in.weightBytes = (h * inOut + h) * bw;
    in.activationBytes = t * (h + inOut) * ba;
    Cost(in, gemm);
    ops.push_back(in);

    // The mixer: conv1d, the gated delta rule, the gated RMSNorm. FLOPs a token and value head:
    // a chunk of C = 64 (FLA's chunked kernel) 6 C d_k + 4 C d_v + 6 d_k d_v (K K^T, the WY
    // products, the intra-chunk scores and values; v - W S, q S and the state update), a
    // decode step 7 d_k d_v (decay, S^T k, the rank-1 update, S q). It reads and writes the
    // sequence's state once a step. No measured table covers it: never calibrated.
    ComputeOp mix;
    mix.kind = OpKind::Attention;
    mix.layer = l;
    mix.kernels = 4;
    const double state = m.LinearStateBytesPerLayer() / tp;
    for (const auto& s : batch.sequences)
    {
        const double q = s.newTokens;
        const bool decode = s.newTokens == 1 && s.cachedTokens > 0;
        double perToken;
        if (lightning)
        {
            // Blocks of B: the intra-block scores and values 2 B d, q S and k^T v 4 d^2; a
            // decode token the decayed update and q S, 5 d^2.
            const double block = std::min(q, double(a.blockSize));
            perToken = decode ? 5 * dk * dv : 2 * block * dk + 4 * dk * dv;
        }
        else
        {
            const double chunk = std::min(q, 64.0);
            perToken = decode ? 7 * dk * dv : 6 * chunk * dk + 4 * chunk * dv + 6 * dk * dv;
        }
        mix.flops += heads * q * perToken + 2 * q * conv * a.convKernel;
        mix.kvBytes += (s.cachedTokens > 0 ? 2 : 1) * state;
    }
    // q, k, v in and out of the conv (lightning: read once), the output, the gate and the
    // normed output.
    mix.activationBytes = t * ((lightning ? 3 * value : 2 * conv) + 3 * value) * ba;
    Cost(mix, m.activationDtype);
    ops.push_back(mix);

    ComputeOp out;
    out.kind = OpKind::OutProj;
    out.layer = l;
    out.shapes = {Gemm("out_proj", t, h, value, gemm, block)};
    out.flops = 2 * t * value * h;
    out.weightBytes = value * h * bw;
    out.activationBytes = t * (value + h) * ba;
    Cost(out, gemm);
    ops.push_back(out);
}

ComputeOp
Roofline::AttentionOp(uint32_t layer, const StepBatch& batch) const
{
    const ModelSpec& m = m_model;
    const double ba = DTypeBytes(m.activationDtype);
    const double t = batch.Tokens();
    const double headsPerRank = m.numHeads / double(m_par.tp);
    const double dqk = m.QkHeadDim();
    const double dv = m.VHeadDim();
    // Attention: 2 n_h (d_qk + d_v) x the keys its q new queries see (q (c + (q + 1) / 2) on a
    // full layer; capped at the window on a sliding one).
    ComputeOp attn;
    attn.kind = OpKind::Attention;
    attn.layer = int32_t(layer);
    attn.kernels = 2;
    double kvPerToken = m.KvBytesPerLayerPerRank(m_par.tp);
    KernelShape attnShape;
    attnShape.heads = uint32_t(std::llround(headsPerRank));
    attnShape.kvHeads
        = m.attention == AttentionKind::Mla ? attnShape.heads : m.KvHeadsPerRank(m_par.tp);
    attnShape.headDim = uint32_t(dqk);
    attnShape.dtype = m.activationDtype;
    const bool sliding = m.KindOf(layer) == LayerKind::Sliding;
    attnShape.window = sliding ? m.slidingWindow : 0;
    KernelShape decode = attnShape;
    decode.op = KernelOp::GenerationAttention;
    decode.name = "decode_attention";
    decode.isl = 1;
    for (const auto& s : batch.sequences)
    {
        double q = s.newTokens;
        double c = double(s.cachedTokens);
        attn.flops += 2 * headsPerRank * (dqk + dv) * AttendedKeys(s, attnShape.window);
        // Reads the cached keys it sees (a sliding layer: the last window - 1), writes q.
        const double read = sliding ? std::min(c, double(m.slidingWindow) - 1) : c;
        attn.kvBytes += (read + q) * kvPerToken;
        if (s.newTokens == 1 && s.cachedTokens > 0)
        {
            decode.batch++;
            decode.cached += s.cachedTokens;
        }
        else
        {
            // A prompt chunk: causal over its new tokens, after its cached prefix.
            KernelShape prefill = attnShape;
            prefill.op = KernelOp::ContextAttention;
            prefill.name = "prefill_attention";
            prefill.batch = 1;
            prefill.isl = s.newTokens;
            prefill.cached = s.cachedTokens;
            attn.shapes.push_back(prefill);
        }
    }
    if (decode.batch > 0)
    {
        decode.cached /= decode.batch; // the tables key decode by one context length
        attn.shapes.push_back(decode);
    }
    attn.activationBytes = t * headsPerRank * (dqk + dv) * ba;
    {
        // Rotary embedding in place on q and k (MLA: the decoupled rope part only).
        const double ropeDim = m.attention == AttentionKind::Mla ? m.mla.qkRopeHeadDim : dqk;
        const double ropeHeads = headsPerRank + attnShape.kvHeads;
        attn.elementwise
            = {Elementwise("rotary_emb", t, 2 * t * ropeHeads * ropeDim * ba, m.activationDtype)};
    }
    if (m.attnOutputGate)
    {
        // sigmoid(gate) * output: reads both, writes one.
        attn.elementwise.push_back(
            Elementwise("attn_output_gate", t, 3 * t * headsPerRank * dv * ba, m.activationDtype));
    }
    Cost(attn, m.activationDtype);
    return attn;
}

void
Roofline::AppendMoeOps(std::vector<ComputeOp>& ops,
                       uint32_t layer,
                       const StepBatch& batch,
                       uint32_t epRank) const
{
    const ModelSpec& m = m_model;
    const MoeSpec& moe = *m.moe;
    const double bw = DTypeBytes(m.weightDtype);
    const double ba = DTypeBytes(m.activationDtype);
    const DType gemm = m.weightDtype == DType::Fp8 ? DType::Fp8 : m.activationDtype;
    const bool block = m.BlockScaledFp8();
    const double h = m.hiddenSize;
    const double etp = m_par.ExpertTp();
    const double routed = TokensRoutedPerRank(batch);
    const int32_t l = int32_t(layer);

    ComputeOp router;
    router.kind = OpKind::Router;
    router.layer = l;
    router.kernels = 3;
    // vLLM builds the router without a quant config: 16-bit weights and math.
    const DType edge = m.EdgeWeightDtype();
    router.shapes = {Gemm("router", routed, moe.numExperts, h, edge)};
    router.elementwise
        = {AddRmsNorm("post_attention_layernorm", batch.Tokens(), h, ba, m.activationDtype)};
    router.flops = 2 * routed * double(m.RouterParams());
    router.weightBytes = (double(m.RouterParams()) + h) * DTypeBytes(edge);
    router.activationBytes = routed * (h + moe.numExperts) * ba;
    Cost(router, edge);
    ops.push_back(router);

    // Routed experts held by this rank, hit by the tokens of the whole EP group.
    uint32_t local = m_par.ExpertsPerRank(m);
    uint32_t first = (epRank % m_par.ep) * local;
    double groupTokens = TokensPerEpGroup(batch);
    double assignments = ExpectedAssignments(m_pi, first, local, groupTokens);
    double hit = ExpectedDistinctExperts(m_pi, first, local, groupTokens);
    double expertParams = double(m.ExpertParams()) / etp;
    ComputeOp experts;
    experts.kind = OpKind::MoeExperts;
    experts.layer = l;
    experts.kernels = 3;
    KernelShape fused;
    fused.op = KernelOp::Moe;
    fused.name = "fused_moe";
    fused.dtype = gemm;
    fused.blockScaled = block;
    fused.tokens = uint64_t(std::llround(groupTokens));
    fused.hidden = m.hiddenSize;
    fused.inter = moe.expertIntermediate;
    fused.topk = moe.topK;
    fused.experts = moe.numExperts;
    fused.tp = uint32_t(etp);
    fused.ep = m_par.ep;
    experts.shapes = {fused};
    experts.flops = 2 * assignments * expertParams;
    experts.weightBytes = hit * expertParams * bw;
    experts.activationBytes = assignments * (2 * h + 3 * moe.expertIntermediate / etp) * ba;
    Cost(experts, gemm);
    ops.push_back(experts);

    if (moe.sharedIntermediate > 0)
    {
        // Split by tp like a dense MLP without a token exchange; replicated on each EP rank
        // when tokens are dispatched.
        double shardTp = m_par.EpExchangesTokens() ? 1.0 : double(m_par.tp);
        double sharedParams = double(m.SharedExpertParams()) / shardTp;
        ComputeOp shared;
        shared.kind = OpKind::SharedExperts;
        shared.layer = l;
        shared.kernels = 3;
        const double sharedWidth = double(moe.sharedIntermediate) / shardTp;
        shared.shapes = {Gemm("shared_gate_up", routed, 2 * sharedWidth, h, gemm, block),
                         Gemm("shared_down", routed, h, sharedWidth, gemm, block)};
        shared.elementwise = {Elementwise(
            "shared_silu_and_mul", routed, 3 * routed * sharedWidth * ba, m.activationDtype)};
        shared.flops = 2 * routed * sharedParams;
        shared.weightBytes = sharedParams * bw;
        shared.activationBytes
            = routed * (2 * h + 3 * double(moe.sharedIntermediate) / shardTp) * ba;
        Cost(shared, gemm);
        ops.push_back(shared);
    }
}

std::vector<ComputeOp>
Roofline::StepOps(const StepBatch& batch, const RankPosition& pos) const
{
    const ModelSpec& m = m_model;
    const double tp = m_par.tp;
    const double bw = DTypeBytes(m.weightDtype);
    const double ba = DTypeBytes(m.activationDtype);
    const DType gemm = m.weightDtype == DType::Fp8 ? DType::Fp8 : m.activationDtype;
    const double t = batch.Tokens();
    const double h = m.hiddenSize;
    std::vector<ComputeOp> ops;
    bool first = pos.ppStage == 0;
    bool last = pos.ppStage + 1 == m_par.pp;

    if (first && m.encoder && (batch.images > 0 || batch.audioSeconds > 0))
    {
        // Encoder split by tp like the LLM (its own collectives are not modelled yet).
        const EncoderSpec& e = *m.encoder;
        ComputeOp enc;
        enc.kind = OpKind::Encoder;
        enc.kernels = 8 * e.numLayers;
        enc.flops
            = (batch.images * e.FlopsPerImage() + batch.audioSeconds * e.FlopsPerAudioSecond())
              / tp;
        enc.weightBytes = double(e.TotalParams()) / tp * bw;
        double tokens
            = batch.images * e.tokensPerImage + batch.audioSeconds * e.tokensPerAudioSecond;
        enc.activationBytes = e.numLayers * tokens * 4.0 * e.hiddenSize * ba;
        Cost(enc, gemm);
        ops.push_back(enc);
    }
    if (first)
    {
        // Vocab-parallel lookup: each rank gathers the rows in its vocab shard (T / tp on
        // average) and writes a T x H partial sum (TP all-reduce follows).
        ComputeOp emb;
        emb.kind = OpKind::Embedding;
        emb.weightBytes = t * h / tp * DTypeBytes(m.EdgeWeightDtype());
        emb.activationBytes = t * h * ba;
        Cost(emb, m.activationDtype);
        ops.push_back(emb);
    }
    uint32_t firstLayer = m_par.FirstLayer(m, pos.ppStage);
    uint32_t count = m_par.LayersPerStage(m)[pos.ppStage];
    for (uint32_t l = firstLayer; l < firstLayer + count; ++l)
    {
        auto layerOps = LayerOps(l, batch, pos.epRank);
        ops.insert(ops.end(), layerOps.begin(), layerOps.end());
    }
    double s = batch.SamplingSequences();
    if (last && s > 0)
    {
        double vShard = double(m.vocabSize) / tp;
        ComputeOp head;
        head.kind = OpKind::LmHead;
        head.kernels = 2;
        // The LM head is no linear layer to vLLM's fp8 methods: it stays 16 bit.
        const DType edge = m.EdgeWeightDtype();
        head.shapes = {Gemm("lm_head", s, vShard, h, edge)};
        head.elementwise
            = {AddRmsNorm("final_layernorm", batch.Tokens(), h, ba, m.activationDtype)};
        head.flops = 2 * s * h * vShard;
        head.weightBytes = (h * vShard + h) * DTypeBytes(edge);
        head.activationBytes = s * (h + vShard) * ba;
        Cost(head, edge);
        ops.push_back(head);
    }
    return ops;
}

double
Roofline::TotalTimeNs(const std::vector<ComputeOp>& ops)
{
    double t = 0;
    for (const auto& op : ops)
    {
        t += op.timeNs;
    }
    return t;
}

} // namespace fabricsim
