/*
 * Builds the per-rank programs of an engine step from the roofline compute ops and the
 * collectives the step issues, with CUDA-graph decode, KV-tier fetches, layer-wise KV sends and
 * two-micro-batch overlap for expert parallelism.
 */
#ifndef FABRICSIM_SERVING_STEP_PROGRAM_BUILDER_H
#define FABRICSIM_SERVING_STEP_PROGRAM_BUILDER_H

#include "inference-scenario.h"
#include "roofline.h"
#include "step-batch.h"
#include "step-program.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace fabricsim
{

/**
 * \brief Ranks of one engine: `groups` attention groups in lock step (the attention groups of
 * one EP group with dp_attention, else 1), each tp x pp ranks.
 */
struct EngineLayout
{
    ParallelismSpec par;         //!< the pool's layout
    uint32_t groups = 1;         //!< attention groups of the engine
    std::vector<uint32_t> hosts; //!< host of (group x pp + stage) x tp + tpRank

    /// Host of tp rank \p t of stage \p s in group \p g.
    uint32_t Host(uint32_t g, uint32_t s, uint32_t t) const
    {
        return hosts.at((size_t(g) * par.pp + s) * par.tp + t);
    }
};

/**
 * \brief Where one layer's KV of one decode rank comes from in the prefill pool.
 */
struct KvRoute
{
    uint32_t layer = 0;       //!< layer
    uint32_t srcStage = 0;    //!< prefill stage holding the layer
    uint32_t srcTp = 0;       //!< prefill tp rank sending
    uint32_t dstHost = 0;     //!< decode host receiving
    double bytesPerToken = 0; //!< bytes per prompt token of this route
};

/**
 * \brief Routes of every layer from a prefill attention group (layout \p prefill) to group
 * \p decodeGroup of a decode engine. Decode tp rank t' receives its KV shard
 * (KvBytesPerTokenPerRank(tp_d) / L per layer) from prefill tp rank t' tp_p / tp_d, or in equal
 * parts from the tp_p / tp_d prefill ranks holding its heads when tp_p > tp_d.
 */
std::vector<KvRoute> PlanKvRoutes(const ModelSpec& model,
                                  const ParallelismSpec& prefill,
                                  const EngineLayout& decode,
                                  uint32_t decodeGroup);

/**
 * \brief A sequence of a prefill step whose KV goes to the decode pool layer by layer.
 */
struct LayerwiseKvSend
{
    uint32_t group = 0;          //!< attention group of the engine
    size_t sequence = 0;         //!< index in that group's batch
    int64_t transferId = 0;      //!< transfer the sends belong to
    std::vector<KvRoute> routes; //!< where each layer goes
};

/// The CUDA graph vLLM replays for a decode batch of \p n: its default capture sizes are 1, 2,
/// 4, every 8 up to 256, then every 16.
uint32_t CudaGraphBatchSize(uint32_t n);

/**
 * \brief Turns the batches of an engine step into a StepProgram (see the file comment).
 *
 * Per rank, items follow the roofline op order; each collective of StepComm follows the op it
 * comes after. Collective keys carry the step, group and per-group sequence number so that the
 * executor can match the members. A decode-only step of at most cuda_graph_max_batch sequences
 * costs its kernels' time (kernelNs) + kernels x graph_kernel_overhead per op instead of the launch
 * overhead, at the captured size (CudaGraphBatchSize) when cuda_graph_padding is on. With KV in a
 * tier, each attention waits for a fetch of its KV bytes issued one layer earlier. With ep_overlap
 * two_batch (and ep > 1, at least two sequences per group) each batch is split into two
 * micro-batches on two streams; their segments alternate so that one's communication runs under the
 * other's compute.
 */
class StepProgramBuilder
{
  public:
    /**
     * \param sc the scenario (model, hardware, routing, kv, execution options)
     * \param layout the engine's ranks
     */
    StepProgramBuilder(const InferenceScenario& sc, const EngineLayout& layout);

    /**
     * \brief The programs of step \p step for \p batches (one per attention group of the
     * engine); \p sends lists layer-wise KV transfers of prefilled sequences.
     */
    StepProgram Build(uint64_t step,
                      const std::vector<StepBatch>& batches,
                      const std::vector<LayerwiseKvSend>& sends = {}) const;

    /// The layout.
    const EngineLayout& Layout() const
    {
        return m_layout;
    }

  private:
    InferenceScenario m_sc;               //!< scenario (copied: the builder outlives parsing)
    EngineLayout m_layout;                //!< ranks
    std::unique_ptr<Roofline> m_roofline; //!< compute costs
};

} // namespace fabricsim

#endif
