/*
 * Measured per-kernel latency tables (aiconfigurator's vLLM collections, as in
 * data/compute): GEMM, context (prefill) attention, generation (decode) attention
 * and fused MoE, milliseconds per call on one GPU. The reader checks each table's columns and
 * values; the compute calibration fits and checks the roofline against them.
 */
#ifndef FABRICSIM_WORKLOADS_KERNEL_TABLES_H
#define FABRICSIM_WORKLOADS_KERNEL_TABLES_H

#include <cstdint>
#include <string>
#include <vector>

namespace fabricsim
{

/// Which kernel a table times (its op_name).
enum class KernelOp
{
    Gemm,                //!< "gemm": Y[m,n] = X[m,k] W[n,k]^T
    ContextAttention,    //!< "context_attention": causal prefill over isl new tokens
    GenerationAttention, //!< "generation_attention": one query token over step + 1 cached
    Moe,                 //!< "moe": one FusedMoE layer on one GPU, no communication
    Elementwise          //!< "elementwise": a memory-bound kernel over the tokens (RMSNorm,
                         //!< rotary embedding, SiLU-and-mul) priced by the bytes it moves
};

/// The op_name ("gemm", ...).
std::string KernelOpName(KernelOp op);

/// The op of op_name \p name; false when it is none of the five.
bool ParseKernelOp(const std::string& name, KernelOp& op);

/// One GEMM call.
struct GemmTime
{
    std::string dtype; //!< gemm_dtype: "bfloat16", "fp8" (per-tensor), ...
    uint64_t m = 0;    //!< tokens
    uint64_t n = 0;    //!< output features
    uint64_t k = 0;    //!< input features
    double ms = 0;     //!< latency per call
};

/// One attention call (context: isl new tokens each, step 0; generation: isl 1, step cached).
struct AttentionTime
{
    uint64_t batch = 0;   //!< batch_size
    uint64_t isl = 0;     //!< new tokens per sequence
    uint32_t heads = 0;   //!< query heads on this GPU
    uint32_t kvHeads = 0; //!< KV heads on this GPU
    uint32_t headDim = 0; //!< head_dim
    uint64_t step = 0;    //!< tokens already cached per sequence
    std::string dtype;    //!< attn_dtype
    std::string kvDtype;  //!< kv_cache_dtype
    uint64_t window = 0;  //!< window_size (0: full attention)
    double ms = 0;        //!< latency per call
};

/// One fused-MoE layer call.
struct MoeTime
{
    std::string dtype;        //!< moe_dtype: "bfloat16", "fp8", "fp8_block", ...
    uint64_t tokens = 0;      //!< num_tokens entering the layer on this GPU (before top-k)
    uint32_t hidden = 0;      //!< hidden_size
    uint32_t inter = 0;       //!< inter_size: the full per-expert FFN width
    uint32_t topk = 0;        //!< experts per token
    uint32_t experts = 0;     //!< routed experts of the model
    uint32_t tp = 1;          //!< moe_tp_size
    uint32_t ep = 1;          //!< moe_ep_size
    std::string distribution; //!< "balanced", "power_law_1.01", ...
    double ms = 0;            //!< latency per call
};

/// One elementwise kernel call: bytes read + written over num_tokens tokens.
struct ElementwiseTime
{
    std::string kernel;  //!< which ("rms_norm", "silu_and_mul", "rotary_emb", ...)
    std::string dtype;   //!< dtype: "bfloat16", ...
    uint64_t tokens = 0; //!< num_tokens
    double bytes = 0;    //!< HBM bytes read and written per call (activations and weights)
    double ms = 0;       //!< latency per call
};

/// One table: every row of one op on one device.
struct KernelTable
{
    std::string file;                         //!< where it was read
    KernelOp op = KernelOp::Gemm;             //!< its op
    std::string device;                       //!< CUDA device name ("NVIDIA H100 80GB HBM3")
    std::string framework;                    //!< "VLLM"
    std::string version;                      //!< framework version ("0.24.0")
    std::vector<GemmTime> gemm;               //!< rows of a GEMM table
    std::vector<AttentionTime> attention;     //!< rows of an attention table
    std::vector<MoeTime> moe;                 //!< rows of a MoE table
    std::vector<ElementwiseTime> elementwise; //!< rows of an elementwise table

    /// Rows of whichever kind the table holds.
    size_t Size() const
    {
        return gemm.size() + attention.size() + moe.size() + elementwise.size();
    }
};

/**
 * \brief Read a kernel table (CSV with the columns of data/compute/README.md). The
 * op comes from the op_name column, which must be the same on every row, as must device,
 * framework and version. InputError naming the file, "line N column", the expected and the
 * found for a missing column, a bad value (zero sizes, topk > experts, both moe_tp_size and
 * moe_ep_size above 1, heads not a multiple of KV heads, latency not positive) or an empty
 * table.
 */
KernelTable ReadKernelTable(const std::string& path);

} // namespace fabricsim

#endif
