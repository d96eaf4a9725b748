#include "model-spec.h"

#include "input-error.h"
#include "json-read.h"
#include "model-config-keys.h"
#include "model-layer-kinds.h"

#include <unistd.h>

#include <algorithm>

namespace fabricsim
{

using nlohmann::json;

namespace
{

/// A dtype field (string); \p def when absent.
DType
ReadDType(const JsonObject& o, const std::string& key, DType def)
{
    const json* v = o.Find(key);
    if (!v)
    {
        return def;
    }
    std::optional<DType> t = v->is_string() ? ParseDType(v->get<std::string>()) : std::nullopt;
    if (!t)
    {
        throw fabricsim::InputError(o.File(),
                                    o.Field(key),
                                    "a dtype (bfloat16, float16, float32, float8_e4m3fn, fp8)",
                                    DescribeJson(*v));
    }
    return *t;
}

/// DeepSeek's group-limited routing: topk_group of n_group expert groups per token, unless
/// topk_method is the plain "greedy" (which ignores the groups) or the groups limit nothing.
void
ReadExpertGroups(const JsonObject& o, MoeSpec& m)
{
    const uint64_t groups = o.OptionalUint("n_group", 1, 1);
    if (groups <= 1)
    {
        return;
    }
    if (m.numExperts % groups != 0)
    {
        throw fabricsim::InputError(o.File(),
                                    o.Field("n_group"),
                                    "a divisor of the " + std::to_string(m.numExperts)
                                        + " routed experts",
                                    std::to_string(groups));
    }
    const uint64_t topk = o.OptionalUint("topk_group", groups, 1, groups);
    if (const json* method = o.Find("topk_method");
        method && method->is_string() && method->get<std::string>() == "greedy")
    {
        return;
    }
    if (topk < groups)
    {
        m.groups = uint32_t(groups);
        m.topkGroups = uint32_t(topk);
    }
}

/// The MoE block, or nothing for a dense model.
std::optional<MoeSpec>
ReadMoe(const JsonObject& o, uint32_t layers)
{
    const char* expertKey = nullptr;
    for (const char* k : {"n_routed_experts", "num_experts", "num_local_experts"})
    {
        if (o.Find(k) && o.OptionalUint(k, 0) > 0)
        {
            expertKey = k;
            break;
        }
    }
    if (!expertKey)
    {
        return std::nullopt;
    }
    MoeSpec m;
    m.numExperts = uint32_t(o.Uint(expertKey, 1));
    m.topK = uint32_t(o.Uint("num_experts_per_tok", 1));
    if (m.topK > m.numExperts)
    {
        throw fabricsim::InputError(o.File(),
                                    o.Field("num_experts_per_tok"),
                                    "at most " + std::string(expertKey) + " = "
                                        + std::to_string(m.numExperts),
                                    std::to_string(m.topK));
    }
    ReadExpertGroups(o, m);
    if (o.Find("moe_intermediate_size"))
    {
        m.expertIntermediate = uint32_t(o.Uint("moe_intermediate_size", 1));
    }
    else
    {
        m.expertIntermediate = uint32_t(o.Uint("intermediate_size", 1));
    }
    m.numSharedExperts = uint32_t(o.OptionalUint("n_shared_experts", 0));
    m.sharedIntermediate = uint64_t(m.numSharedExperts) * m.expertIntermediate;
    uint64_t qwenShared = o.OptionalUint("shared_expert_intermediate_size", 0);
    if (qwenShared > 0)
    {
        m.sharedIntermediate += qwenShared;
        m.sharedExpertGate = true;
    }
    // DeepSeek: MoE from layer first_k_dense_replace on, every moe_layer_freq-th layer.
    uint64_t firstDense = o.OptionalUint("first_k_dense_replace", 0);
    uint64_t freq = o.OptionalUint("moe_layer_freq", 1, 1);
    // Qwen: MoE every decoder_sparse_step-th layer (1-based), except mlp_only_layers.
    uint64_t step = o.OptionalUint("decoder_sparse_step", 1, 1);
    std::vector<bool> mlpOnly(layers, false);
    if (const json* v = o.Find("mlp_only_layers"))
    {
        if (!v->is_array())
        {
            throw fabricsim::InputError(o.File(),
                                        o.Field("mlp_only_layers"),
                                        "an array of layer indices",
                                        DescribeJson(*v));
        }
        for (size_t i = 0; i < v->size(); ++i)
        {
            const json& e = (*v)[i];
            const std::optional<uint64_t> l = JsonObject::AsUint(e);
            if (!l || *l >= layers)
            {
                throw fabricsim::InputError(o.File(),
                                            JsonIndex(o.Field("mlp_only_layers"), i),
                                            "a layer index in [0, " + std::to_string(layers) + ")",
                                            DescribeJson(e));
            }
            mlpOnly[size_t(*l)] = true;
        }
    }
    m.moeLayer.resize(layers);
    for (uint32_t l = 0; l < layers; ++l)
    {
        m.moeLayer[l] = l >= firstDense && l % freq == 0 && (l + 1) % step == 0 && !mlpOnly[l];
    }
    return m;
}

/// Where a key of a possibly nested config is read: the text model's object, or the outer one
/// for the checkpoint-wide keys (dtype, quantization, names) the text model lacks.
struct ConfigSource
{
    const JsonObject& text;  //!< the model's object (text_config when nested)
    const JsonObject& outer; //!< the whole config
    bool nested;             //!< text is text_config

    const JsonObject& operator()(const char* key) const
    {
        return nested && !text.Has(key) ? outer : text;
    }
};

/// Weight, activation and KV dtypes, and fp8 block scales, into \p m.
void
ReadDtypes(const ConfigSource& at, ModelSpec& m)
{
    const char* dtypeKey = at("torch_dtype").Has("torch_dtype") ? "torch_dtype" : "dtype";
    DType base = ReadDType(at(dtypeKey), dtypeKey, DType::Bf16);
    if (base == DType::Fp8)
    {
        // An fp8 checkpoint still computes activations and the KV cache in 16 bit by default.
        m.weightDtype = DType::Fp8;
        base = DType::Bf16;
    }
    else
    {
        m.weightDtype = base;
    }
    if (const json* q = at("quantization_config").Find("quantization_config"))
    {
        if (q->is_object() && q->value("quant_method", "") == "fp8")
        {
            m.weightDtype = DType::Fp8;
            // Block scales ([128, 128] for DeepSeek's and MiniMax's checkpoints) select vLLM's
            // block-scaled kernels, which cost other than per-tensor ones.
            const JsonObject qo = at("quantization_config").Object("quantization_config");
            if (qo.Has("weight_block_size"))
            {
                const std::vector<uint64_t> b
                    = qo.UintArray("weight_block_size", true, 1, 1u << 16);
                if (b.size() != 2)
                {
                    throw InputError(qo.File(),
                                     qo.Field("weight_block_size"),
                                     "two block edges, [rows, columns]",
                                     std::to_string(b.size()) + " values");
                }
                m.weightBlockSize = uint32_t(b[0]);
            }
        }
    }
    m.activationDtype = base;
    m.kvCacheDtype = base;
    m.weightDtype = ReadDType(at("weight_dtype"), "weight_dtype", m.weightDtype);
    m.activationDtype = ReadDType(at("activation_dtype"), "activation_dtype", m.activationDtype);
    m.kvCacheDtype = ReadDType(at("kv_cache_dtype"), "kv_cache_dtype", m.kvCacheDtype);
}

/// An override of a preset or config must name a key of the model: a misspelt one (hiden_size)
/// would otherwise be ignored and the run go on with the base value.
void
CheckOverrideKeys(const JsonObject& o, const json& base, const char* refKey)
{
    std::vector<std::string> known = ModelConfigKeysRead();
    for (auto it = base.begin(); it != base.end(); ++it)
    {
        known.push_back(it.key());
    }
    if (const json* t = NestedTextConfig(JsonObject(base, "", "")))
    {
        for (auto it = t->begin(); it != t->end(); ++it)
        {
            known.push_back(it.key());
        }
    }
    for (auto it = o.Json().begin(); it != o.Json().end(); ++it)
    {
        if (it.key() != refKey && std::find(known.begin(), known.end(), it.key()) == known.end())
        {
            o.Fail(it.key(),
                   "a config.json key of the model (one fabricsim reads or the base config has)",
                   "unknown key \"" + it.key() + "\"" + DidYouMean(it.key(), known));
        }
    }
}

} // namespace

ModelSpec
ModelSpec::FromConfig(const json& c, const std::string& file, const std::string& prefix)
{
    if (!c.is_object())
    {
        throw fabricsim::InputError(file, prefix, "a config.json object", DescribeJson(c));
    }
    const JsonObject outer(c, file, prefix);
    const json* text = NestedTextConfig(outer);
    // Keys the model type's config class fills in when config.json leaves them out.
    json typed = ModelTypeDefaults(
        (text ? JsonObject(*text, file, prefix) : outer).OptionalString("model_type", ""));
    typed.merge_patch(text ? *text : c);
    const JsonObject o(typed, file, text ? JsonPath(prefix, "text_config") : prefix);
    // A nested config keeps checkpoint-wide keys (dtype, quantization, names) outside.
    const ConfigSource at{o, outer, text != nullptr};
    RefuseUnmodelledKeys(o);
    if (text)
    {
        RefuseUnmodelledKeys(outer);
    }
    ModelSpec m;
    m.ignoredKeys = IgnoredConfigKeys(c);
    m.modelType = o.OptionalString("model_type", "");
    m.hiddenSize = uint32_t(o.Uint("hidden_size", 1));
    m.numLayers = uint32_t(o.Uint("num_hidden_layers", 1));
    m.numHeads = uint32_t(o.Uint("num_attention_heads", 1));
    m.numKvHeads = uint32_t(o.OptionalUint("num_key_value_heads", m.numHeads, 1));
    m.vocabSize = uint32_t(o.Uint("vocab_size", 1));
    // Gemma's config classes tie the LM head to the embedding unless told otherwise.
    m.tieWordEmbeddings
        = at("tie_word_embeddings")
              .OptionalBool("tie_word_embeddings", m.modelType.rfind("gemma", 0) == 0);

    if (o.Find("kv_lora_rank"))
    {
        m.attention = AttentionKind::Mla;
        m.mla.kvLoraRank = uint32_t(o.Uint("kv_lora_rank", 1));
        m.mla.qLoraRank = uint32_t(o.OptionalUint("q_lora_rank", 0));
        m.mla.qkRopeHeadDim = uint32_t(o.Uint("qk_rope_head_dim", 1));
        m.mla.qkNopeHeadDim = uint32_t(o.Uint("qk_nope_head_dim", 1));
        m.mla.vHeadDim = uint32_t(o.Uint("v_head_dim", 1));
        m.headDim = m.mla.qkNopeHeadDim + m.mla.qkRopeHeadDim;
    }
    else
    {
        if (m.numHeads % m.numKvHeads != 0)
        {
            throw fabricsim::InputError(file,
                                        o.Field("num_key_value_heads"),
                                        "a divisor of num_attention_heads "
                                            + std::to_string(m.numHeads),
                                        std::to_string(m.numKvHeads));
        }
        if (o.Find("head_dim"))
        {
            m.headDim = uint32_t(o.Uint("head_dim", 1));
        }
        else if (m.hiddenSize % m.numHeads != 0)
        {
            throw fabricsim::InputError(file,
                                        o.Field("head_dim"),
                                        "head_dim (hidden_size " + std::to_string(m.hiddenSize)
                                            + " is not a multiple of num_attention_heads)",
                                        "nothing (field missing)");
        }
        else
        {
            m.headDim = m.hiddenSize / m.numHeads;
        }
    }

    bool qwen2 = m.modelType.rfind("qwen2", 0) == 0;
    bool attentionBias = o.OptionalBool("attention_bias", false);
    m.qkvBias = attentionBias || qwen2;
    m.outBias = attentionBias;
    // MiniMax-M2's use_qk_norm with qk_norm_type "per_layer": one RMSNorm over every head's q
    // (and one over k), not one per head. Its elements are split over the TP ranks, so vLLM
    // all-reduces the variances (MiniMaxText01RMSNormTP.forward_qk: q's and k's together).
    const bool useQkNorm = o.OptionalBool("use_qk_norm", false);
    const std::string qkNormType = o.OptionalString("qk_norm_type", "per_head");
    if (qkNormType != "per_head" && qkNormType != "per_layer")
    {
        throw fabricsim::InputError(o.File(),
                                    o.Field("qk_norm_type"),
                                    "\"per_head\" or \"per_layer\"",
                                    "\"" + qkNormType + "\"");
    }
    m.qkNormAcrossHeads = useQkNorm && qkNormType == "per_layer";
    m.qkNorm = o.OptionalBool("qk_norm",
                              m.modelType.rfind("qwen3", 0) == 0
                                  || m.modelType.rfind("gemma3", 0) == 0 || useQkNorm);
    ReadLayerKinds(o, m);

    m.moe = ReadMoe(o, m.numLayers);
    bool anyDense = !m.moe || m.NumMoeLayers() < m.numLayers;
    if (anyDense)
    {
        m.intermediateSize = uint32_t(o.Uint("intermediate_size", 1));
    }
    else
    {
        m.intermediateSize = uint32_t(o.OptionalUint("intermediate_size", 0));
    }

    ReadDtypes(at, m);

    if (at("encoder").Has("encoder"))
    {
        m.encoder = EncoderSpec::FromJson(at("encoder").Object("encoder"));
        m.encoder->llmHiddenSize = m.hiddenSize;
    }

    m.name = at("name").OptionalString("name", "");
    if (m.name.empty())
    {
        m.name = at("_name_or_path").OptionalString("_name_or_path", "");
    }
    if (m.name.empty())
    {
        const json* a = at("architectures").Find("architectures");
        if (a && a->is_array() && !a->empty() && (*a)[0].is_string())
        {
            m.name = (*a)[0].get<std::string>();
        }
    }
    if (m.name.empty())
    {
        m.name = file.empty() ? "custom" : file;
    }
    return m;
}

ModelSpec
ModelSpec::FromFile(const std::string& path)
{
    return FromConfig(LoadJsonFile(path), path);
}

ModelSpec
ModelSpec::Preset(const std::string& name)
{
    return FromConfig(PresetConfig(name), "", "preset " + name);
}

ModelSpec
ModelSpec::Load(const json& v, const std::string& file, const std::string& field)
{
    if (v.is_string())
    {
        std::string s = v.get<std::string>();
        auto names = PresetNames();
        for (const auto& n : names)
        {
            if (NormalizeName(n) == NormalizeName(s))
            {
                return Preset(n);
            }
        }
        std::string path = (!s.empty() && s[0] != '/') ? DirOf(file) + s : s;
        if (::access(path.c_str(), F_OK) == 0) // the reader says what is wrong with it, if anything
        {
            return FromFile(path);
        }
        std::string list;
        for (const auto& n : names)
        {
            list += (list.empty() ? "" : ", ") + n;
        }
        throw fabricsim::InputError(file,
                                    field,
                                    "a model preset (" + list + ") or a path to a config.json",
                                    "\"" + s + "\"");
    }
    if (!v.is_object())
    {
        throw fabricsim::InputError(
            file, field, "a preset name, a path or an object", DescribeJson(v));
    }
    JsonObject o(v, file, field);
    if (o.Has("preset") || o.Has("config"))
    {
        bool isPreset = o.Has("preset");
        const char* key = isPreset ? "preset" : "config";
        std::string ref = o.OptionalString(key, "");
        json base;
        std::string baseFile = file;
        if (isPreset)
        {
            try
            {
                base = PresetConfig(ref);
            }
            catch (const fabricsim::InputError& e)
            {
                throw fabricsim::InputError(file, o.Field(key), e.Expected(), e.Found());
            }
        }
        else
        {
            baseFile = (!ref.empty() && ref[0] != '/') ? DirOf(file) + ref : ref;
            base = LoadJsonFile(baseFile);
        }
        CheckOverrideKeys(o, base, key);
        json overrides = v;
        overrides.erase(key);
        MergeModelOverrides(base, overrides);
        return FromConfig(base, file, field);
    }
    return FromConfig(v, file, field);
}

bool
ModelSpec::IsMoeLayer(uint32_t layer) const
{
    return moe && layer < moe->moeLayer.size() && moe->moeLayer[layer];
}

uint32_t
ModelSpec::NumMoeLayers() const
{
    return moe ? uint32_t(std::count(moe->moeLayer.begin(), moe->moeLayer.end(), true)) : 0;
}

uint32_t
ModelSpec::QkHeadDim() const
{
    return attention == AttentionKind::Mla ? mla.qkNopeHeadDim + mla.qkRopeHeadDim : headDim;
}

uint32_t
ModelSpec::VHeadDim() const
{
    return attention == AttentionKind::Mla ? mla.vHeadDim : headDim;
}

uint64_t
ModelSpec::AttentionParams() const
{
    uint64_t h = hiddenSize;
    uint64_t nh = numHeads;
    if (attention == AttentionKind::Mla)
    {
        uint64_t qk = QkHeadDim();
        uint64_t q = mla.qLoraRank > 0
                         ? h * mla.qLoraRank + mla.qLoraRank + uint64_t(mla.qLoraRank) * nh * qk
                         : h * nh * qk;
        uint64_t kvA = h * (mla.kvLoraRank + mla.qkRopeHeadDim) + mla.kvLoraRank;
        uint64_t kvB = uint64_t(mla.kvLoraRank) * nh * (mla.qkNopeHeadDim + mla.vHeadDim);
        uint64_t o = nh * mla.vHeadDim * h;
        return q + kvA + kvB + o;
    }
    uint64_t d = headDim;
    uint64_t qkvOut = (nh + 2 * uint64_t(numKvHeads)) * d;
    uint64_t p = h * qkvOut + nh * d * h;
    if (qkvBias)
    {
        p += qkvOut;
    }
    if (outBias)
    {
        p += h;
    }
    if (attnOutputGate)
    {
        p += h * nh * d; // the gate's half of q_proj
    }
    if (qkNorm)
    {
        // A weight per element of q and k across heads, else one head's worth each.
        p += qkNormAcrossHeads ? (nh + uint64_t(numKvHeads)) * d : 2 * d;
    }
    return p;
}

uint64_t
ModelSpec::LayerNormParams() const
{
    return uint64_t(normsPerLayer) * hiddenSize;
}

uint64_t
ModelSpec::DenseMlpParams() const
{
    return 3 * uint64_t(hiddenSize) * intermediateSize;
}

uint64_t
ModelSpec::ExpertParams() const
{
    return moe ? 3 * uint64_t(hiddenSize) * moe->expertIntermediate : 0;
}

uint64_t
ModelSpec::ExpertsParams() const
{
    return moe ? uint64_t(moe->numExperts) * ExpertParams() : 0;
}

uint64_t
ModelSpec::SharedExpertParams() const
{
    if (!moe)
    {
        return 0;
    }
    return 3 * uint64_t(hiddenSize) * moe->sharedIntermediate
           + (moe->sharedExpertGate ? hiddenSize : 0);
}

uint64_t
ModelSpec::RouterParams() const
{
    return moe ? uint64_t(hiddenSize) * moe->numExperts : 0;
}

uint64_t
ModelSpec::LayerParams(uint32_t layer) const
{
    uint64_t p = MixerParams(layer) + LayerNormParams();
    if (IsMoeLayer(layer))
    {
        return p + RouterParams() + ExpertsParams() + SharedExpertParams();
    }
    return p + DenseMlpParams();
}

uint64_t
ModelSpec::LayerActiveParams(uint32_t layer) const
{
    uint64_t p = MixerParams(layer) + LayerNormParams();
    if (IsMoeLayer(layer))
    {
        return p + RouterParams() + uint64_t(moe->topK) * ExpertParams() + SharedExpertParams();
    }
    return p + DenseMlpParams();
}

uint64_t
ModelSpec::EmbeddingParams() const
{
    return uint64_t(vocabSize) * hiddenSize;
}

uint64_t
ModelSpec::LmHeadParams() const
{
    return tieWordEmbeddings ? 0 : uint64_t(vocabSize) * hiddenSize;
}

uint64_t
ModelSpec::FinalNormParams() const
{
    return hiddenSize;
}

uint64_t
ModelSpec::TotalParams() const
{
    uint64_t p = EmbeddingParams() + LmHeadParams() + FinalNormParams();
    for (uint32_t l = 0; l < numLayers; ++l)
    {
        p += LayerParams(l);
    }
    return p;
}

uint64_t
ModelSpec::ActiveParams() const
{
    uint64_t p = EmbeddingParams() + LmHeadParams() + FinalNormParams();
    for (uint32_t l = 0; l < numLayers; ++l)
    {
        p += LayerActiveParams(l);
    }
    return p;
}

DType
ModelSpec::EdgeWeightDtype() const
{
    return weightDtype == DType::Fp8 ? activationDtype : weightDtype;
}

uint64_t
ModelSpec::EdgeParams() const
{
    uint64_t p = EmbeddingParams() + LmHeadParams() + FinalNormParams();
    for (uint32_t l = 0; l < numLayers; ++l)
    {
        p += LayerNormParams() + (IsMoeLayer(l) ? RouterParams() : 0);
    }
    return p;
}

double
ModelSpec::WeightBytes() const
{
    const uint64_t edge = EdgeParams();
    return double(TotalParams() - edge) * DTypeBytes(weightDtype)
           + double(edge) * DTypeBytes(EdgeWeightDtype());
}

double
ModelSpec::KvBytesPerTokenPerLayer() const
{
    double b = DTypeBytes(kvCacheDtype);
    if (attention == AttentionKind::Mla)
    {
        return double(mla.kvLoraRank + mla.qkRopeHeadDim) * b;
    }
    return 2.0 * numKvHeads * headDim * b;
}

double
ModelSpec::KvBytesPerToken() const
{
    return double(numLayers - NumLayersOf(LayerKind::Linear)) * KvBytesPerTokenPerLayer();
}

double
ModelSpec::KvBytesPerLayerPerRank(uint32_t tp) const
{
    // L x per-layer / shards / L: the order these figures have always been computed in.
    const double all = double(numLayers) * KvBytesPerTokenPerLayer();
    if (attention == AttentionKind::Mla)
    {
        return all / numLayers;
    }
    return all / double(std::max<uint32_t>(1, std::min(tp, numKvHeads))) / numLayers;
}

uint32_t
ModelSpec::KvHeadsPerRank(uint32_t tp) const
{
    if (attention == AttentionKind::Mla)
    {
        return 1;
    }
    uint32_t shards = std::max<uint32_t>(1, std::min(tp, numKvHeads));
    return (numKvHeads + shards - 1) / shards;
}

double
ModelSpec::KvBytesPerTokenPerRank(uint32_t tp) const
{
    if (attention == AttentionKind::Mla)
    {
        return KvBytesPerToken();
    }
    return KvBytesPerToken() / double(std::max<uint32_t>(1, std::min(tp, numKvHeads)));
}

} // namespace fabricsim
