/*
 * The collectives one rank issues in one inference step, each placed after the compute op it
 * follows, so that an executor can interleave them with the roofline ops.
 */
#ifndef FABRICSIM_WORKLOADS_STEP_COMM_H
#define FABRICSIM_WORKLOADS_STEP_COMM_H

#include "model-spec.h"
#include "parallelism-spec.h"
#include "roofline.h"
#include "routing-model.h"
#include "step-batch.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fabricsim
{

/**
 * \brief Collective operation kinds a step issues.
 */
enum class StepCollectiveKind
{
    AllReduce,
    ReduceScatter,
    AllGather,
    AllToAll,
    Gather,
    Send,
    Recv
};

/// Lower-case name ("all_reduce", "all_to_all", ...).
std::string StepCollectiveKindName(StepCollectiveKind k);

/**
 * \brief Which rank group a collective runs over.
 */
enum class RankGroup
{
    Tp, //!< the tp ranks of one attention group
    Ep, //!< the ep ranks sharing one expert set
    Pp  //!< a pair of neighbouring pipeline stages
};

/// Lower-case name ("tp", "ep", "pp").
std::string RankGroupName(RankGroup g);

/**
 * \brief One collective call of one rank in a step.
 *
 * Sizes follow the nccl-tests convention: all-reduce = buffer size; reduce-scatter = input
 * size; all-gather = output size; gather = this rank's contribution; all-to-all = bytes this
 * rank sends to other ranks (sendBytes has the full row, own entry included); send / recv =
 * bytes moved.
 */
struct CollectiveCall
{
    StepCollectiveKind kind = StepCollectiveKind::AllReduce; //!< what
    RankGroup group = RankGroup::Tp;                         //!< over which ranks
    uint32_t groupSize = 1;                                  //!< ranks in the group
    int32_t layer = -1;            //!< layer it belongs to (-1: embedding, LM head, PP boundary)
    int32_t afterOp = -1;          //!< index in the rank's op list it follows; -1: before the first
    double bytes = 0;              //!< message size (see above)
    std::vector<double> sendBytes; //!< all-to-all: bytes to each group rank (own entry local)
    /// EP exchange on DeepEP's kernels (ep-exchange.h): their fixed cost in place of NCCL's
    /// launch (-1: none), and the rank's earliest result after the start (its SM-bound copying)
    int64_t kernelLaunchPs = -1;
    int64_t kernelMinPs = 0;
    int64_t kernelFillPs = 0; //!< their pipeline's fill (CollectiveRequest::kernelFillPs)
    /// Share of the GPU's SMs its kernels hold from launch to completion, taken from the
    /// rank's compute (DeepEP normal: ep_sms / SMs; 0: none modelled)
    double smShare = 0;
    uint32_t peerStage = 0; //!< send / recv: the other pipeline stage
    std::string label;      //!< e.g. "attn_out", "mlp_out", "moe_dispatch", "logits"
};

/**
 * \brief Builds the collectives of a step for one rank.
 *
 * - TP (tp > 1): an all-reduce of T H b after the embedding, after each attention out_proj and
 *   after each MLP / MoE block (ep = 1): 2 L / pp + 1 per stage-0 rank; with sequence_parallel
 *   each becomes a reduce-scatter then an all-gather of T H b at the same place. A gather of
 *   S ceil(V / tp) b after the LM head.
 * - EP (ep > 1): per MoE layer a dispatch all-to-all after the router and a combine all-to-all
 *   after the routed experts, T_local = T / tp tokens per rank, each (token, expert) pair one
 *   copy of H b; per-destination bytes from the routing model. With the
 *   allgather-reducescatter backend the dispatch is an all-gather and the combine a
 *   reduce-scatter over the EP group, each of ep T_local H b (every rank sees every token). With tp
 * > 1 the MoE output is all-gathered over TP (T H b) after the layer's last op (the attention
 * all-reduce stays, or with sequence_parallel becomes a reduce-scatter alone).
 * - PP: a recv before the first op (stage > 0) and a send after the last op (stage < pp - 1)
 *   of T H b (Megatron) or 2 T H b (vLLM: hidden state and residual).
 * b is the activation dtype's size.
 */
class StepComm
{
  public:
    /**
     * \param model the model
     * \param par the parallel layout (validated)
     * \param routing expert routing distribution
     */
    StepComm(const ModelSpec& model,
             const ParallelismSpec& par,
             const RoutingModel& routing = RoutingModel());

    /**
     * \brief The collectives of \p batch on the rank at \p pos, whose compute ops (from
     * Roofline::StepOps with the same batch and position) are \p ops; ordered by position.
     */
    std::vector<CollectiveCall> Collectives(const StepBatch& batch,
                                            const std::vector<ComputeOp>& ops,
                                            const RankPosition& pos = {}) const;

    /**
     * \brief The node of each EP rank (EP order: attention group x tp + tp rank), for DeepEP's
     * normal kernels, which cross nodes once per node and forward inside them
     * (EpRowCopies), and the low-latency dispatch, whose copying is its copies inside the
     * node (EpKernelWork::scaleUpCopies). Empty (the default): one node.
     */
    void SetEpNodes(std::vector<uint32_t> nodes)
    {
        m_epNodes = std::move(nodes);
    }

    /**
     * \brief Tokens each EP rank runs through the MoE layers this step (EP order), so that a
     * combine returns each source its own tokens' outputs and relays carry their senders'
     * tokens. Empty (the default): every rank as many as the one asked about.
     */
    void SetEpTokens(std::vector<double> tokens)
    {
        m_epTokens = std::move(tokens);
    }

    /// Whether the EP group's step carries prefill tokens in any of its groups (deepep-auto
    /// picks DeepEP's kernels by it); unset, each rank's own batch decides.
    void SetPrefillStep(std::optional<bool> prefill)
    {
        m_prefillStep = prefill;
    }

    /// The GPU's SMs (0: unknown): DeepEP's normal kernels hold ep_sms of them while in flight,
    /// taken from the rank's compute (CollectiveCall::smShare).
    void SetGpuSms(uint32_t sms)
    {
        m_gpuSms = sms;
    }

    /// The GPU's scale-up bandwidth a direction (0: unknown): DeepEP's low-latency dispatch
    /// copies at a share of it (EpKernelCost::scaleUpShare).
    void SetGpuScaleUp(double bytesPerSecond)
    {
        m_gpuScaleUpBps = bytesPerSecond;
    }

  private:
    /// Append a TP all-reduce (or reduce-scatter + all-gather) of \p bytes after op \p after.
    void AppendTpReduce(std::vector<CollectiveCall>& out,
                        int32_t layer,
                        int32_t after,
                        double bytes,
                        const std::string& label) const;

    ModelSpec m_model;                 //!< the model
    ParallelismSpec m_par;             //!< the layout
    std::vector<double> m_pi;          //!< per-expert selection probabilities
    std::vector<uint32_t> m_epNodes;   //!< node of each EP rank (empty: one node)
    std::optional<bool> m_prefillStep; //!< the EP group's step carries prefill tokens
    std::vector<double> m_epTokens;    //!< tokens of each EP rank (empty: as many as ours)
    uint32_t m_gpuSms = 0;             //!< SMs of the GPU (0: unknown)
    double m_gpuScaleUpBps = 0;        //!< scale-up bandwidth of the GPU (0: unknown)
};

} // namespace fabricsim

#endif
