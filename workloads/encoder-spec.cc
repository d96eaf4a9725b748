#include "encoder-spec.h"

#include "input-error.h"

namespace fabricsim
{

using nlohmann::json;

namespace
{

/// First present key among \p keys as a required integer.
uint64_t
RequireAny(const JsonObject& o, std::initializer_list<const char*> keys)
{
    for (const char* k : keys)
    {
        if (o.Has(k))
        {
            return o.Uint(k, 1);
        }
    }
    return o.Uint(*keys.begin(), 1);
}

} // namespace

EncoderSpec
EncoderSpec::FromJson(const JsonObject& o)
{
    EncoderSpec e;
    e.modality = o.OptionalString("modality", "vision");
    if (e.modality != "vision" && e.modality != "audio")
    {
        throw fabricsim::InputError(
            o.File(), o.Field("modality"), "\"vision\" or \"audio\"", "\"" + e.modality + "\"");
    }
    e.numLayers = uint32_t(RequireAny(o, {"num_hidden_layers", "depth"}));
    e.hiddenSize = uint32_t(RequireAny(o, {"hidden_size", "embed_dim"}));
    e.numHeads = uint32_t(RequireAny(o, {"num_attention_heads", "num_heads"}));
    if (e.hiddenSize % e.numHeads != 0)
    {
        throw fabricsim::InputError(o.File(),
                                    o.Field("num_attention_heads"),
                                    "a divisor of hidden_size " + std::to_string(e.hiddenSize),
                                    std::to_string(e.numHeads));
    }
    e.intermediateSize = uint32_t(o.OptionalUint("intermediate_size", 4ULL * e.hiddenSize, 1));
    e.gatedMlp = o.OptionalBool("gated_mlp", false);
    double merge = double(o.OptionalUint("spatial_merge_size", 1, 1));
    if (e.modality == "vision")
    {
        if (o.Has("tokens_per_image"))
        {
            e.tokensPerImage = double(o.Uint("tokens_per_image", 1));
        }
        else if (o.Has("image_size") || o.Has("patch_size"))
        {
            uint64_t image = o.Uint("image_size", 1);
            uint64_t patch = o.Uint("patch_size", 1);
            if (image % patch != 0)
            {
                throw fabricsim::InputError(o.File(),
                                            o.Field("patch_size"),
                                            "a divisor of image_size " + std::to_string(image),
                                            std::to_string(patch));
            }
            e.tokensPerImage = double((image / patch) * (image / patch));
        }
        else
        {
            throw fabricsim::InputError(o.File(),
                                        o.Field("tokens_per_image"),
                                        "patch tokens per image (or image_size and patch_size)",
                                        "nothing (field missing)");
        }
        e.outputTokensPerImage = o.OptionalNumber(
            "output_tokens_per_image", e.tokensPerImage / (merge * merge), 1e-9, 1e12);
    }
    else
    {
        if (!o.Has("tokens_per_audio_second"))
        {
            throw fabricsim::InputError(o.File(),
                                        o.Field("tokens_per_audio_second"),
                                        "encoder tokens per second of audio",
                                        "nothing (field missing)");
        }
        e.tokensPerAudioSecond = o.OptionalNumber("tokens_per_audio_second", 0, 1e-9, 1e9);
        e.outputTokensPerAudioSecond = o.OptionalNumber(
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
