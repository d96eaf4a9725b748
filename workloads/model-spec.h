/*
 * Model specification read from a HuggingFace config.json (dense GQA, MoE, MLA), with built-in
 * presets and the derived figures the roofline and the serving loop need.
 */
#ifndef FABRICSIM_WORKLOADS_MODEL_SPEC_H
#define FABRICSIM_WORKLOADS_MODEL_SPEC_H

#include "dtype.h"
#include "encoder-spec.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fabricsim
{

/**
 * \brief Attention flavour: grouped-query / multi-head (Llama, Mixtral, Qwen) or multi-head
 * latent attention (DeepSeek-V2/V3).
 */
enum class AttentionKind
{
    Gqa,
    Mla
};

/**
 * \brief What a layer's token mixer keeps per sequence: full attention (a KV entry per token),
 * sliding-window attention (the last `slidingWindow` tokens' KV), or linear attention (a fixed
 * recurrent state).
 */
enum class LayerKind : uint8_t
{
    Full,
    Sliding,
    Linear
};

/// "full", "sliding" or "linear".
const char* LayerKindName(LayerKind k);

/**
 * \brief Multi-head latent attention dimensions (DeepSeek field names in comments).
 */
struct MlaSpec
{
    uint32_t kvLoraRank = 0;    //!< kv_lora_rank: latent KV width cached per token and layer
    uint32_t qLoraRank = 0;     //!< q_lora_rank: 0 (null) means a direct q projection
    uint32_t qkRopeHeadDim = 0; //!< qk_rope_head_dim: decoupled RoPE key width (also cached)
    uint32_t qkNopeHeadDim = 0; //!< qk_nope_head_dim
    uint32_t vHeadDim = 0;      //!< v_head_dim
};

/// Which linear attention a model's linear layers run.
enum class LinearKind : uint8_t
{
    GatedDeltaNet, //!< Qwen3-Next, Qwen3.5: delta rule with gates, a causal conv1d before it
    Lightning      //!< MiniMax-Text-01 / M1: decayed linear attention in blocks, output gate
};

/**
 * \brief A linear-attention layer's dimensions: Gated DeltaNet (Qwen3-Next, Qwen3.5; config
 * keys in comments). Keys and queries have numKeyHeads heads, values numValueHeads. Lightning
 * attention (MiniMax attn_type_list 0): n_h heads of head_dim for q, k and v, no conv.
 */
struct LinearAttentionSpec
{
    LinearKind kind = LinearKind::GatedDeltaNet; //!< which recurrence
    uint32_t blockSize = 0;     //!< lightning attention's block (config block_size, 256)
    uint32_t numKeyHeads = 0;   //!< linear_num_key_heads
    uint32_t numValueHeads = 0; //!< linear_num_value_heads
    uint32_t keyHeadDim = 0;    //!< linear_key_head_dim
    uint32_t valueHeadDim = 0;  //!< linear_value_head_dim
    uint32_t convKernel = 0;    //!< linear_conv_kernel_dim: the causal conv1d's width
    /// mamba_ssm_dtype: the recurrent state's dtype (Qwen3.5: float32); none = activations'.
    std::optional<DType> stateDtype;

    /// Width of q (and of k): heads x key head size.
    uint64_t KeyDim() const
    {
        return uint64_t(numKeyHeads) * keyHeadDim;
    }

    /// Width of v (and of the output gate z).
    uint64_t ValueDim() const
    {
        return uint64_t(numValueHeads) * valueHeadDim;
    }

    /// Channels the conv1d runs over: q, k and v (none for lightning attention).
    uint64_t ConvDim() const
    {
        return convKernel > 0 ? 2 * KeyDim() + ValueDim() : 0;
    }
};

/**
 * \brief Mixture-of-experts part of a model.
 */
struct MoeSpec
{
    uint32_t numExperts = 0;         //!< routed experts E
    uint32_t topK = 0;               //!< experts per token k (num_experts_per_tok)
    uint32_t expertIntermediate = 0; //!< routed expert MLP width I_e
    uint32_t numSharedExperts = 0;   //!< DeepSeek n_shared_experts (0 when none)
    uint64_t sharedIntermediate = 0; //!< total width of the shared-expert MLP (0 when none)
    bool sharedExpertGate = false;   //!< Qwen2-MoE style sigmoid gate on the shared expert (H x 1)
    std::vector<bool> moeLayer;      //!< per layer: true if its MLP is the MoE block
    /// Group-limited routing (DeepSeek-V2/V3 n_group / topk_group): the experts form this many
    /// equal groups and a token's experts lie in topkGroups of them; 0 / 0 when the model
    /// routes over all experts (no n_group, n_group 1, topk_method "greedy").
    uint32_t groups = 0;
    uint32_t topkGroups = 0; //!< groups a token's experts lie in (topk_group)
};

/**
 * \brief A decoder-only LLM as the simulator sees it: shapes, dtypes, parameter counts, KV size.
 *
 * Built from a HuggingFace config.json object as is (see FromConfig for the fields read), from
 * a file, or from a built-in preset (Preset; the presets are themselves config.json objects).
 * Counts are exact for the architectures named; layer norms, q/k norms and biases included.
 */
struct ModelSpec
{
    std::string name;               //!< display name
    std::string modelType;          //!< HF model_type ("llama", "mixtral", "qwen3_moe", ...)
    uint32_t hiddenSize = 0;        //!< H
    uint32_t numLayers = 0;         //!< L
    uint32_t numHeads = 0;          //!< n_h (query heads)
    uint32_t numKvHeads = 0;        //!< n_kv (GQA; equals n_h for MHA)
    uint32_t headDim = 0;           //!< d (GQA); qk_nope + qk_rope for MLA
    uint32_t intermediateSize = 0;  //!< dense MLP width I (0 when no dense layer exists)
    uint32_t vocabSize = 0;         //!< V
    bool tieWordEmbeddings = false; //!< LM head shares the embedding matrix
    bool qkNorm = false;            //!< RMSNorm on q and k (Qwen3: per head)
    /// The q and k norms span every head (MiniMax-M2's qk_norm_type "per_layer"): their
    /// variance is all-reduced over the TP group once a layer.
    bool qkNormAcrossHeads = false;
    bool qkvBias = false; //!< bias on q, k, v projections (Qwen2, attention_bias)
    bool outBias = false; //!< bias on the output projection (attention_bias)
    AttentionKind attention = AttentionKind::Gqa; //!< GQA or MLA
    MlaSpec mla;                                  //!< MLA dimensions (attention == Mla)
    std::optional<MoeSpec> moe;                   //!< MoE block, if any
    std::optional<EncoderSpec> encoder;           //!< multimodal encoder stage, if any
    DType weightDtype = DType::Bf16;     //!< weights (torch_dtype; fp8 with an fp8 quant config)
    DType activationDtype = DType::Bf16; //!< activations and communication payloads
    DType kvCacheDtype = DType::Bf16;    //!< KV cache elements
    /// fp8 weights scaled per block of this edge (quantization_config.weight_block_size, e.g.
    /// 128 for DeepSeek's and MiniMax's 128 x 128); 0 = one scale per tensor.
    uint32_t weightBlockSize = 0;
    /// The config's keys the reader passed over, sorted ("text_config.key" when nested): keys
    /// that do not change what fabricsim computes (rope_theta, rms_norm_eps, vision_config).
    /// Keys that would change it and are not modelled are refused instead.
    std::vector<std::string> ignoredKeys;
    /// Per layer, what its attention keeps (config layer_types, sliding_window with
    /// sliding_window_pattern or max_window_layers); empty when every layer is full.
    std::vector<LayerKind> layerKinds;
    /// Keys a sliding layer's query attends to, its own included (sliding_window); 0 = none.
    uint32_t slidingWindow = 0;
    /// RMSNorms per layer: 2 (before attention and MLP), 4 for Gemma 2/3's sandwich norms.
    uint32_t normsPerLayer = 2;
    /// Linear-attention layers' dimensions (when layerKinds has Linear layers).
    std::optional<LinearAttentionSpec> linear;
    /// Full attention's output is gated by sigmoid(x W_g), W_g fused into q_proj
    /// (attn_output_gate; Qwen3-Next and Qwen3.5).
    bool attnOutputGate = false;

    /**
     * \brief Parse a HuggingFace config.json object as is. Reads: hidden_size,
     * num_hidden_layers, num_attention_heads, num_key_value_heads (default n_h), head_dim
     * (default H / n_h), intermediate_size, vocab_size, tie_word_embeddings (default false),
     * model_type, torch_dtype or dtype (default bfloat16), quantization_config.quant_method
     * ("fp8" makes weights fp8), attention_bias; MoE: num_local_experts | num_experts |
     * n_routed_experts, num_experts_per_tok, n_group, topk_group, topk_method,
     * moe_intermediate_size, n_shared_experts,
     * shared_expert_intermediate_size, first_k_dense_replace, moe_layer_freq,
     * decoder_sparse_step, mlp_only_layers; MLA: kv_lora_rank, q_lora_rank, qk_rope_head_dim,
     * qk_nope_head_dim, v_head_dim. fabricsim extensions: name, weight_dtype,
     * activation_dtype, kv_cache_dtype, qk_norm, encoder. A multimodal checkpoint's language
     * model is read from text_config (the checkpoint-wide dtype, quantization and names may sit
     * outside it). Keys that change cost and are not modelled are refused
     * (RefuseUnmodelledKeys); the others not read are listed in ignoredKeys.
     * \param config the JSON object
     * \param file where it came from, for errors ("" for inline)
     * \param prefix path of the object inside the file, for errors
     */
    static ModelSpec FromConfig(const nlohmann::json& config,
                                const std::string& file = "",
                                const std::string& prefix = "");

    /// Read and parse a config.json file.
    static ModelSpec FromFile(const std::string& path);

    /**
     * \brief A built-in model by case-insensitive name (punctuation and an "org/" prefix are
     * ignored: "llama-3-70b", "meta-llama/Llama-3-70B"). InputError if unknown.
     */
    static ModelSpec Preset(const std::string& name);

    /// The config.json object behind a preset; InputError if unknown.
    static nlohmann::json PresetConfig(const std::string& name);

    /// Names of the built-in presets, in table order.
    static std::vector<std::string> PresetNames();

    /**
     * \brief The model field of a scenario: a preset name or a path to a config.json (string),
     * an object {"preset": name, ...overrides} (the overrides are HF or extension fields merged
     * over the preset's config), {"config": path, ...overrides}, or an inline config object.
     */
    static ModelSpec Load(const nlohmann::json& v,
                          const std::string& file = "",
                          const std::string& field = "model");

    /// What layer \p layer (0-based) keeps.
    LayerKind KindOf(uint32_t layer) const;
    /// Layers of kind \p k.
    uint32_t NumLayersOf(LayerKind k) const;
    /// Keys a query at position \p pos (0-based) of layer \p layer attends to: pos + 1, capped
    /// at the window on a sliding layer.
    uint64_t KeysAt(uint32_t layer, uint64_t pos) const;
    /// KV tokens layer \p layer holds for a sequence of \p tokens tokens (min(tokens, window) on
    /// a sliding layer).
    uint64_t KvTokensHeld(uint32_t layer, uint64_t tokens) const;
    /// KV-cache bytes one sequence of \p tokens tokens holds, whole model.
    double KvBytesPerSequence(uint64_t tokens) const;

    /// True if layer \p layer (0-based) uses the MoE block.
    bool IsMoeLayer(uint32_t layer) const;
    /// Number of MoE layers.
    uint32_t NumMoeLayers() const;
    /// Query/key head width used in attention scores (d, or qk_nope + qk_rope for MLA).
    uint32_t QkHeadDim() const;
    /// Value head width (d, or v_head_dim for MLA).
    uint32_t VHeadDim() const;

    /// Attention block parameters of a full or sliding layer (projections, biases, q/k or MLA
    /// norms, output gate).
    uint64_t AttentionParams() const;
    /**
     * \brief Parameters of a linear-attention (Gated DeltaNet) layer: in_proj H (2 K + 2 V +
     * 2 n_v) (q, k, v, the gate z, beta and alpha), the conv1d (2 K + V) w, dt_bias and A_log
     * 2 n_v, the gated RMSNorm d_v, out_proj V H; K, V the key and value widths.
     */
    uint64_t LinearAttentionParams() const;
    /// The token mixer's parameters of layer \p layer: linear or attention.
    uint64_t MixerParams(uint32_t layer) const;
    /**
     * \brief Bytes of state one sequence keeps in a linear layer: the recurrent state
     * n_v d_k d_v (at mamba_ssm_dtype, else the activation dtype) and the conv1d's last w - 1
     * inputs (2 K + V, at the activation dtype: vLLM's mamba cache dtype "auto"). Divided by
     * tp on a TP rank.
     */
    double LinearStateBytesPerLayer() const;
    /// Layer-norm parameters per layer (input and post-attention RMSNorm: 2 H; Gemma 4 H).
    uint64_t LayerNormParams() const;
    /// Dense gated MLP parameters (3 H I).
    uint64_t DenseMlpParams() const;
    /// One routed expert (3 H I_e).
    uint64_t ExpertParams() const;
    /// All routed experts of one MoE layer (E x 3 H I_e).
    uint64_t ExpertsParams() const;
    /// Shared expert(s) of one MoE layer (3 H I_shared, + H for a shared-expert gate).
    uint64_t SharedExpertParams() const;
    /// Router of one MoE layer (H x E).
    uint64_t RouterParams() const;
    /// All parameters of layer \p layer.
    uint64_t LayerParams(uint32_t layer) const;
    /// Parameters of layer \p layer one token uses (top-k experts + shared + router).
    uint64_t LayerActiveParams(uint32_t layer) const;
    /// Input embedding (V x H).
    uint64_t EmbeddingParams() const;
    /// LM head (V x H; 0 when tied to the embedding).
    uint64_t LmHeadParams() const;
    /// Final RMSNorm (H).
    uint64_t FinalNormParams() const;
    /// Total parameters (excluding an encoder and DeepSeek's MTP module).
    uint64_t TotalParams() const;
    /// Parameters one token touches (embedding and LM head included, as model cards count).
    uint64_t ActiveParams() const;
    /// Bytes of all weights: the linear layers and experts at weightDtype, the rest (embedding,
    /// LM head, routers, norms) at EdgeWeightDtype.
    double WeightBytes() const;
    /**
     * \brief The dtype of the weights an fp8 checkpoint leaves unquantised, as vLLM's fp8 methods
     * do: the embedding and LM head (not linear layers), the MoE routers (built without a quant
     * config) and the norms. weightDtype when that is not fp8.
     */
    DType EdgeWeightDtype() const;
    /// Parameters at EdgeWeightDtype: embedding, LM head, final norm, every layer's norms and
    /// every MoE layer's router.
    uint64_t EdgeParams() const;
    /// Whether the linear layers' and experts' fp8 weights are block-scaled (weightBlockSize).
    bool BlockScaledFp8() const
    {
        return weightDtype == DType::Fp8 && weightBlockSize > 0;
    }

    /**
     * \brief KV-cache bytes per token for the whole model: 2 L n_kv d b (GQA) or
     * L (kv_lora_rank + qk_rope_head_dim) b (MLA), b = bytes of kvCacheDtype, L the layers with
     * attention (linear layers keep a state instead).
     */
    double KvBytesPerToken() const;
    /// KV-cache bytes per token of one attention layer on one TP rank.
    double KvBytesPerLayerPerRank(uint32_t tp) const;
    /// KV-cache bytes per token for one layer.
    double KvBytesPerTokenPerLayer() const;
    /**
     * \brief KV heads one TP rank holds: n_kv / min(tp, n_kv) (replicated when tp > n_kv);
     * for MLA the latent cache is not sharded (returns 1: one latent "head").
     */
    uint32_t KvHeadsPerRank(uint32_t tp) const;
    /// KV-cache bytes per token on one TP rank (÷ min(tp, n_kv); MLA not sharded).
    double KvBytesPerTokenPerRank(uint32_t tp) const;
};

} // namespace fabricsim

#endif
