/*
 * How a model is split over ranks: tensor, pipeline, expert and data parallelism.
 */
#ifndef FABRICSIM_WORKLOADS_PARALLELISM_SPEC_H
#define FABRICSIM_WORKLOADS_PARALLELISM_SPEC_H

#include "model-spec.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace fabricsim
{

/**
 * \brief What a pipeline stage sends to the next one per step.
 */
enum class PpSendFlavor
{
    Megatron, //!< hidden states only: T H b
    Vllm      //!< hidden states and residual: 2 T H b
};

/// How an EP group moves tokens to their experts and back.
enum class EpBackend
{
    AllToAll,               //!< dispatch and combine as all-to-alls of each token's copies
    AllGatherReduceScatter, //!< every token to every EP rank (all-gather), results summed back
                            //!< (reduce-scatter): vLLM's default without DeepEP
    DeepEpNormal,           //!< DeepEP's normal kernels: a token once per rank holding any of
                            //!< its experts, fp8 with scales; combine bf16, one per such rank
    DeepEpLowLatency,       //!< DeepEP's low-latency kernels: one fp8 copy per chosen expert,
                            //!< combine bf16 per copy
    DeepEpAuto, //!< SGLang's --deepep-mode auto: the normal kernels for a step that carries
                //!< prefill tokens in any group of the EP group, low latency for decode-only steps
    TpAllReduce //!< no token exchange: the experts sharded over the TP group, every rank routes
                //!< all the step's tokens to its own, one TP all-reduce sums the MoE output
                //!< (vLLM's --enable-expert-parallel at data_parallel_size 1, where it runs no
                //!< all-to-all kernels)
};

/// The DeepEP kernels \p b runs for a step (\p prefill: a step carrying prefill tokens);
/// every backend but deepep-auto is itself.
EpBackend ResolveEpBackend(EpBackend b, bool prefill);

/// The JSON name ("all-to-all", "allgather-reducescatter", "deepep-normal",
/// "deepep-low-latency", "deepep-auto", "tp-allreduce").
std::string EpBackendName(EpBackend b);

/**
 * \brief Parallel layout of one model replica set.
 *
 * Ranks: world = tp x pp x dp. Within a PP stage, tp ranks run attention on one batch (one
 * "attention group"); dp groups run separate batches. MoE layers:
 *  - ep = 1: every rank holds all experts, each sharded over tp (like a dense MLP);
 *  - ep > 1: each expert lives whole on one rank (expert tensor parallelism 1) and the E
 *    experts are spread over ep ranks; without dp_attention ep must equal tp (EP inside one
 *    attention group); with dp_attention ep must be tp x m with m dividing dp (the EP group
 *    spans m attention groups, which run the MoE layers in lock step, as vLLM / SGLang DP
 *    attention). Replicas of the expert set: (tp x dp) / ep.
 *
 * JSON: {"tp": 8, "pp": 1, "ep": 1, "dp": 1, "dp_attention": false,
 *        "sequence_parallel": false, "pp_send": "megatron" | "vllm", "pp_layers": [..],
 *        "ep_backend": "all-to-all" | "allgather-reducescatter" | "deepep-normal"
 *                      | "deepep-low-latency"}
 * (all optional, default 1 / false / "megatron" / even split / "all-to-all").
 */
struct ParallelismSpec
{
    uint32_t tp = 1;               //!< tensor-parallel size
    uint32_t pp = 1;               //!< pipeline stages
    uint32_t ep = 1;               //!< expert-parallel size (MoE)
    uint32_t dp = 1;               //!< data-parallel attention groups per stage
    bool dpAttention = false;      //!< MoE layers shared across dp groups (EP over tp x dp)
    bool sequenceParallel = false; //!< TP all-reduce as reduce-scatter + all-gather
    PpSendFlavor ppSend = PpSendFlavor::Megatron; //!< bytes sent between stages
    EpBackend epBackend = EpBackend::AllToAll;    //!< EP token exchange
    /// SMs DeepEP's normal kernels get (its Buffer.num_sms, default 20): they copy no faster.
    uint32_t epSms = 20;
    std::vector<uint32_t> ppLayers; //!< explicit layers per stage (empty: default split)

    /// Parse (no model checks; call Validate). Errors name \p file and \p prefix.
    static ParallelismSpec FromJson(const nlohmann::json& j,
                                    const std::string& file = "",
                                    const std::string& prefix = "parallelism");

    /**
     * \brief Check the layout against \p model: tp divides n_h; n_kv and tp divide one another
     * (GQA); tp divides I (dense) and I_e (MoE with ep = 1); pp <= L and an explicit pp_layers
     * sums to L; ep > 1 needs an MoE model, ep divides E and follows the rule in the class
     * comment; dp_attention needs an MoE model. InputError naming the field otherwise.
     */
    void Validate(const ModelSpec& model,
                  const std::string& file = "",
                  const std::string& prefix = "parallelism") const;

    /// tp x pp x dp.
    uint32_t WorldSize() const;

    /**
     * \brief Layers of each stage. Explicit ppLayers if given; else L / pp each with the
     * L mod pp extra layers going one each to the stages just before the last (the last stage
     * also runs the LM head), as vLLM's get_pp_indices.
     */
    std::vector<uint32_t> LayersPerStage(const ModelSpec& model) const;

    /// First layer index of \p stage.
    uint32_t FirstLayer(const ModelSpec& model, uint32_t stage) const;

    /// Experts per EP rank: E / ep (all E when ep = 1).
    uint32_t ExpertsPerRank(const ModelSpec& model) const;

    /// Tensor split of each expert: tp when ep = 1, else 1.
    uint32_t ExpertTp() const;
    /// Whether the EP group moves tokens to their experts (dispatch and combine): ep > 1 on
    /// every backend but tp-allreduce, whose ranks all hold every token.
    bool EpExchangesTokens() const
    {
        return ep > 1 && epBackend != EpBackend::TpAllReduce;
    }

    /// Attention groups whose tokens meet in one EP group: ep / tp when ep > 1, else 1.
    uint32_t AttentionGroupsPerEpGroup() const;
};

} // namespace fabricsim

#endif
