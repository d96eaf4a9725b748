/*
 * Optional multimodal encoder stage (vision or audio transformer) in front of the LLM.
 */
#ifndef FABRICSIM_WORKLOADS_ENCODER_SPEC_H
#define FABRICSIM_WORKLOADS_ENCODER_SPEC_H

#include "json-reader.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace fabricsim
{

/**
 * \brief A ViT-style or Whisper-style encoder: a stack of bidirectional transformer layers over
 * the patch (or audio frame) tokens of one item, then a projector into the LLM's hidden size.
 *
 * JSON (the "encoder" block of a model config):
 *   modality              "vision" (default) or "audio"
 *   num_hidden_layers     layers (alias "depth")
 *   hidden_size           width (alias "embed_dim")
 *   num_attention_heads   heads (alias "num_heads")
 *   intermediate_size     MLP width (default 4 x hidden_size)
 *   gated_mlp             true for SwiGLU-style MLPs (3 matrices), default false (2 matrices)
 *   tokens_per_image      patch tokens per image; or image_size and patch_size: (image/patch)^2
 *   output_tokens_per_image tokens handed to the LLM per image (default: tokens_per_image /
 *                         spatial_merge_size^2, spatial_merge_size default 1)
 *   tokens_per_audio_second, output_tokens_per_audio_second  the audio equivalents
 */
struct EncoderSpec
{
    std::string modality = "vision"; //!< "vision" or "audio"
    uint32_t numLayers = 0;          //!< transformer layers
    uint32_t hiddenSize = 0;         //!< encoder width
    uint32_t numHeads = 0;           //!< attention heads
    uint32_t intermediateSize = 0;   //!< MLP width
    bool gatedMlp = false;           //!< gated MLP (3 matrices) or plain (2)
    double tokensPerImage = 0;       //!< encoder tokens per image (vision)
    double outputTokensPerImage = 0; //!< LLM tokens per image after merge / projector (vision)
    double tokensPerAudioSecond = 0; //!< encoder tokens per second of audio (audio)
    double outputTokensPerAudioSecond = 0; //!< LLM tokens per second of audio (audio)
    uint32_t llmHiddenSize = 0; //!< the LLM's hidden size (projector output), set by ModelSpec

    /**
     * \brief Parse an "encoder" block; errors name its file and path.
     */
    static EncoderSpec FromJson(const JsonObject& o);

    /// Parameters of one layer: 4 H^2 (QKV + out) + (2 or 3) H I + 2 H (norms).
    uint64_t LayerParams() const;
    /// Parameters of the projector: a linear map from the merged features to the LLM hidden size.
    uint64_t ProjectorParams() const;
    /// Total parameters (layers + projector).
    uint64_t TotalParams() const;

    /**
     * \brief FLOPs to encode \p tokens tokens into \p outputTokens LLM tokens:
     * layers x (2 N P_layer + 4 N^2 H) + 2 N_out P_projector (full bidirectional attention).
     */
    double Flops(double tokens, double outputTokens) const;
    /// FLOPs per image (vision).
    double FlopsPerImage() const;
    /// FLOPs per second of audio (audio; attention taken over one-second windows).
    double FlopsPerAudioSecond() const;

  private:
    /// Merge factor: encoder tokens per LLM token (1 when unknown).
    double MergeFactor() const;
};

} // namespace fabricsim

#endif
