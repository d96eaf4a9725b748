#include "encoder-spec.h"

#include "input-error.h"

namespace fabricsim
{

using nlohmann::json;

namespace
{

/// First present key among \p keys as a required integer.
uint64_t
RequireAny(const json& j, std::initializer_list<const char*> keys, const JsonWhere& where)
{
    for (const char* k : keys)
    {
        if (FindField(j, k))
        {
            return JsonObject(j, where.file, where.prefix).Uint(k, 1);
        }
    }
    return JsonObject(j, where.file, where.prefix).Uint(*keys.begin(), 1);
}

} // namespace

EncoderSpec
EncoderSpec::FromJson(const json& j, const JsonWhere& where)
{
    if (!j.is_object())
    {
        throw fabricsim::InputError(where.file, where.prefix, "an object", DescribeJson(j));
    }
    EncoderSpec e;
    e.modality = JsonObject(j, where.file, where.prefix).OptionalString("modality", "vision");
    if (e.modality != "vision" && e.modality != "audio")
    {
        throw fabricsim::InputError(where.file,
                                    where.Field("modality"),
                                    "\"vision\" or \"audio\"",
                                    "\"" + e.modality + "\"");
    }
    e.numLayers = uint32_t(RequireAny(j, {"num_hidden_layers", "depth"}, where));
    e.hiddenSize = uint32_t(RequireAny(j, {"hidden_size", "embed_dim"}, where));
    e.numHeads = uint32_t(RequireAny(j, {"num_attention_heads", "num_heads"}, where));
    if (e.hiddenSize % e.numHeads != 0)
    {
        throw fabricsim::InputError(where.file,
                                    where.Field("num_attention_heads"),
                                    "a divisor of hidden_size " + std::to_string(e.hiddenSize),
                                    std::to_string(e.numHeads));
    }
    e.intermediateSize = uint32_t(JsonObject(j, where.file, where.prefix)
                                      .OptionalUint("intermediate_size", 4ULL * e.hiddenSize, 1));
    e.gatedMlp = JsonObject(j, where.file, where.prefix).OptionalBool("gated_mlp", false);
    double merge
        = double(JsonObject(j, where.file, where.prefix).OptionalUint("spatial_merge_size", 1, 1));
    if (e.modality == "vision")
    {
        if (FindField(j, "tokens_per_image"))
        {
            e.tokensPerImage
                = double(JsonObject(j, where.file, where.prefix).Uint("tokens_per_image", 1));
        }
        else if (FindField(j, "image_size") || FindField(j, "patch_size"))
        {
            uint64_t image = JsonObject(j, where.file, where.prefix).Uint("image_size", 1);
            uint64_t patch = JsonObject(j, where.file, where.prefix).Uint("patch_size", 1);
            if (image % patch != 0)
            {
                throw fabricsim::InputError(where.file,
                                            where.Field("patch_size"),
                                            "a divisor of image_size " + std::to_string(image),
                                            std::to_string(patch));
            }
            e.tokensPerImage = double((image / patch) * (image / patch));
        }
        else
        {
            throw fabricsim::InputError(where.file,
                                        where.Field("tokens_per_image"),
                                        "patch tokens per image (or image_size and patch_size)",
                                        "nothing (field missing)");
        }
        e.outputTokensPerImage
            = JsonObject(j, where.file, where.prefix)
                  .OptionalNumber(
                      "output_tokens_per_image", e.tokensPerImage / (merge * merge), 1e-9, 1e12);
    }
    else
    {
        if (!FindField(j, "tokens_per_audio_second"))
        {
            throw fabricsim::InputError(where.file,
                                        where.Field("tokens_per_audio_second"),
                                        "encoder tokens per second of audio",
                                        "nothing (field missing)");
        }
        e.tokensPerAudioSecond = JsonObject(j, where.file, where.prefix)
                                     .OptionalNumber("tokens_per_audio_second", 0, 1e-9, 1e9);
        e.outputTokensPerAudioSecond
            = JsonObject(j, where.file, where.prefix)
                  .OptionalNumber(
                      "output_tokens_per_audio_second", e.tokensPerAudioSecond / merge, 1e-9, 1e9);
    }
    return e;
}

uint64_t
EncoderSpec::LayerParams() const
{
    uint64_t h = hiddenSize;
    return 4 * h * h + (gatedMlp ? 3 : 2) * h * intermediateSize + 2 * h;
}

double
EncoderSpec::MergeFactor() const
{
    if (modality == "vision" && outputTokensPerImage > 0)
    {
        return tokensPerImage / outputTokensPerImage;
    }
    if (modality == "audio" && outputTokensPerAudioSecond > 0)
    {
        return tokensPerAudioSecond / outputTokensPerAudioSecond;
    }
    return 1.0;
}

uint64_t
EncoderSpec::ProjectorParams() const
{
    return uint64_t(double(hiddenSize) * MergeFactor() * double(llmHiddenSize));
}

uint64_t
EncoderSpec::TotalParams() const
{
    return uint64_t(numLayers) * LayerParams() + ProjectorParams();
}

double
EncoderSpec::Flops(double tokens, double outputTokens) const
{
    double h = hiddenSize;
    double perLayer = 2.0 * tokens * double(LayerParams()) + 4.0 * tokens * tokens * h;
    return double(numLayers) * perLayer + 2.0 * outputTokens * double(ProjectorParams());
}

double
EncoderSpec::FlopsPerImage() const
{
    return Flops(tokensPerImage, outputTokensPerImage);
}

double
EncoderSpec::FlopsPerAudioSecond() const
{
    return Flops(tokensPerAudioSecond, outputTokensPerAudioSecond);
}

} // namespace fabricsim
