/*
 * Roofline cost of the compute ops one rank runs in one inference step.
 */
#ifndef FABRICSIM_WORKLOADS_ROOFLINE_H
#define FABRICSIM_WORKLOADS_ROOFLINE_H

#include "hardware-spec.h"
#include "kernel-tables.h"
#include "model-spec.h"
#include "parallelism-spec.h"
#include "routing-model.h"
#include "step-batch.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fabricsim
{

/**
 * \brief What a compute op is. The order of a layer's ops is the order they run in.
 */
enum class OpKind
{
    Encoder,       //!< multimodal encoder stage (before the LLM)
    Embedding,     //!< token embedding lookup (vocab-parallel)
    QkvProj,       //!< input RMSNorm + Q/K/V projections (MLA: q_a/q_b/kv_a/kv_b)
    Attention,     //!< RoPE, KV-cache write, attention over cached + new tokens
    OutProj,       //!< attention output projection (row-parallel; TP all-reduce follows)
    DenseMlp,      //!< post-attention RMSNorm + gated MLP (TP all-reduce follows)
    Router,        //!< post-attention RMSNorm + MoE gate + top-k
    MoeExperts,    //!< routed experts on this rank (EP dispatch before, combine after)
    SharedExperts, //!< shared expert(s)
    LmHead         //!< final RMSNorm + LM head on the sampled positions
};

/// Short lower-case name of \p k ("qkv_proj", "moe_experts", ...).
std::string OpKindName(OpKind k);

/**
 * \brief One kernel call a roofline op stands for, in the shape the measured kernel tables key
 * it by (kernel-tables.h): GEMM m x n x k; attention batch x isl new tokens over `cached` tokens
 * with the heads on this rank; fused MoE tokens entering the layer (before top-k), hidden, the
 * full per-expert width, top-k, experts, expert TP and EP.
 */
struct KernelShape
{
    KernelOp op = KernelOp::Gemm; //!< which table
    const char* name = "";        //!< "qkv_proj", "o_proj", "gate_up", "down", "lm_head", ...
    DType dtype = DType::Bf16;    //!< math dtype
    bool blockScaled = false; //!< GEMM / MoE: fp8 weights with block scales (vLLM's block kernels)
    uint64_t m = 0;           //!< GEMM rows (tokens)
    uint64_t n = 0;           //!< GEMM output features
    uint64_t k = 0;           //!< GEMM input features
    uint64_t batch = 0;       //!< attention: sequences
    uint64_t isl = 0;         //!< attention: new tokens per sequence
    uint64_t cached = 0;      //!< attention: cached tokens per sequence (mean for decode)
    uint32_t heads = 0;       //!< attention: query heads on this rank
    uint32_t kvHeads = 0;     //!< attention: KV heads on this rank
    uint32_t headDim = 0;     //!< attention: head size (q/k)
    uint64_t window = 0;      //!< attention: keys a query sees on a sliding layer (0: all)
    uint64_t tokens = 0;      //!< MoE: tokens entering the layer on this rank
    uint32_t hidden = 0;      //!< MoE: hidden size
    uint32_t inter = 0;       //!< MoE: full per-expert FFN width
    uint32_t topk = 0;        //!< MoE: experts per token
    uint32_t experts = 0;     //!< MoE: routed experts of the model
    uint32_t tp = 1;          //!< MoE: expert tensor parallelism
    uint32_t ep = 1;          //!< MoE: expert parallelism
    double bytes = 0;         //!< elementwise: bytes read + written (its size variable)
};

/**
 * \brief One compute op on one rank with its roofline cost.
 */
struct ComputeOp
{
    OpKind kind = OpKind::QkvProj;   //!< what it is
    int32_t layer = -1;              //!< global layer index; -1 for encoder / embedding / LM head
    double flops = 0;                //!< floating-point operations on this rank
    double weightBytes = 0;          //!< weight bytes read from HBM
    double kvBytes = 0;              //!< KV-cache bytes read + written
    double activationBytes = 0;      //!< activation bytes read + written
    uint32_t kernels = 1;            //!< kernel launches it stands for
    double computeNs = 0;            //!< flops / (peak x eta_c)
    double memoryNs = 0;             //!< bytes / (HBM bw x eta_m)
    double kernelNs = 0;             //!< GPU time of its kernels: max(computeNs, memoryNs), or
                                     //!< their calibrated sum (hardware.compute_calibration)
    double timeNs = 0;               //!< kernelNs + kernels x launch overhead (calibrated: the
                                     //!< larger of kernelNs and the launches, which overlap it)
    bool calibrated = false;         //!< kernelNs from measured kernels (graph gaps included)
    std::vector<KernelShape> shapes; //!< the measured-table kernels it stands for (see docs)
    /// Its memory-bound kernels besides (RMSNorm, q/k norm, rotary, SiLU-and-mul): priced when
    /// the calibration has an elementwise curve, else left in the shapes' graph time as before.
    std::vector<KernelShape> elementwise;

    /// Total HBM bytes moved.
    double Bytes() const
    {
        return weightBytes + kvBytes + activationBytes;
    }

    /// True when the memory term wins.
    bool MemoryBound() const
    {
        return memoryNs >= computeNs;
    }
};

/// Fill computeNs, memoryNs, timeNs of \p op on \p hw, its math at \p dtype's peak: the one
/// roofline formula of every op.
void CostOp(const HardwareSpec& hw, ComputeOp& op, DType dtype);

/**
 * \brief Which rank the ops are for: its pipeline stage and its index in its EP group.
 */
struct RankPosition
{
    uint32_t ppStage = 0; //!< pipeline stage
    uint32_t epRank = 0;  //!< index in the EP group (which experts it holds)
};

/**
 * \brief Turns a step batch into the per-rank compute ops of a model on an accelerator under a
 * parallel layout. Op cost: max(FLOPs / (peak x eta_c), bytes / (HBM bw x eta_m)) plus
 * kernels x launch overhead. GEMMs run at the fp8 peak when weights are fp8 (W8A8), else at
 * the activation dtype's; attention at the activation dtype's.
 *
 * Sharding: attention heads and MLP / LM-head / embedding widths by tp; layers by pp; experts
 * by ep (or by tp when ep = 1). MoE: with ep > 1 an EP group gathers the tokens of
 * ep / tp attention groups, each rank dispatching T / tp of them; the shared expert is
 * replicated and runs on those T / tp tokens. The same batch is assumed for every attention
 * group of an EP group.
 */
class Roofline
{
  public:
    /**
     * \param model the model
     * \param hw the accelerator
     * \param par the parallel layout (validated by the caller)
     * \param routing expert routing distribution
     */
    Roofline(const ModelSpec& model,
             const HardwareSpec& hw,
             const ParallelismSpec& par,
             const RoutingModel& routing = RoutingModel());

    /**
     * \brief Ops of layer \p layer on one rank, in execution order: qkv_proj, attention,
     * out_proj, then dense_mlp, or router, moe_experts, shared_experts.
     */
    std::vector<ComputeOp> LayerOps(uint32_t layer,
                                    const StepBatch& batch,
                                    uint32_t epRank = 0) const;

    /**
     * \brief All ops of a step on one rank: encoder (stage 0, when the batch has images or
     * audio), embedding (stage 0), the stage's layers, LM head (last stage).
     */
    std::vector<ComputeOp> StepOps(const StepBatch& batch, const RankPosition& pos = {}) const;

    /// Sum of timeNs over \p ops.
    static double TotalTimeNs(const std::vector<ComputeOp>& ops);

    /// Tokens whose expert work meets in one EP group: T x ep / tp (T when ep = 1).
    double TokensPerEpGroup(const StepBatch& batch) const;

    /// Tokens one rank routes and dispatches: T / tp when ep > 1, else T.
    double TokensRoutedPerRank(const StepBatch& batch) const;

    /// Per-expert selection probabilities of the routing model (empty for dense models).
    const std::vector<double>& SelectionProbabilities() const;

    /// Fill computeNs, memoryNs, timeNs of \p op; GEMM math at \p dtype.
    void Cost(ComputeOp& op, DType dtype) const;

  private:
    /// The q/k/v projections, attention and output projection of a full or sliding \p layer.
    void AppendAttentionOps(std::vector<ComputeOp>& ops,
                            uint32_t layer,
                            const StepBatch& batch) const;

    /**
     * \brief A linear-attention (Gated DeltaNet) \p layer: in_proj (q, k, v, gate z, beta,
     * alpha), the mixer (conv1d, the gated delta rule: a chunked scan over a prompt chunk, a
     * recurrent step in decode, the gated RMSNorm), out_proj.
     */
    void AppendLinearOps(std::vector<ComputeOp>& ops, uint32_t layer, const StepBatch& batch) const;

    /// The attention op of \p layer (full or sliding-window) for \p batch.
    ComputeOp AttentionOp(uint32_t layer, const StepBatch& batch) const;

    /// Ops of the MoE block of \p layer on EP rank \p epRank.
    void AppendMoeOps(std::vector<ComputeOp>& ops,
                      uint32_t layer,
                      const StepBatch& batch,
                      uint32_t epRank) const;

    ModelSpec m_model;        //!< the model
    HardwareSpec m_hw;        //!< the accelerator
    ParallelismSpec m_par;    //!< the layout
    RoutingModel m_routing;   //!< routing distribution
    std::vector<double> m_pi; //!< per-expert selection probabilities
};

} // namespace fabricsim

#endif
