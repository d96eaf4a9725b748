/*
 * Where requests come from: a synthetic Poisson (or evenly spaced) source with token-count
 * distributions, or a request trace file (CSV or JSON lines).
 */
#ifndef FABRICSIM_SERVING_REQUEST_SOURCE_H
#define FABRICSIM_SERVING_REQUEST_SOURCE_H

#include "length-distribution.h"
#include "prefix-cache.h"
#include "shared-prefixes.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace fabricsim
{

/**
 * \brief One inference request as the serving loop sees it.
 */
struct Request
{
    uint64_t id = 0;           //!< index in arrival order
    int64_t arrivalPs = 0;     //!< arrival time
    uint64_t promptTokens = 1; //!< prompt length (text tokens, before the encoder's tokens)
    uint64_t outputTokens = 1; //!< tokens to generate (>= 1)
    double images = 0;         //!< images to encode (multimodal)
    double audioSeconds = 0;   //!< seconds of audio to encode (multimodal)
    /// What the prompt's tokens are, in order (empty: its own tokens, shared with no one).
    std::vector<ContentSpan> content;
    /// The conversation's previous turn (kNoTurn: none): this one is sent thinkPs after that
    /// one's last token, not at arrivalPs.
    uint64_t previousTurn = kNoTurn;
    int64_t thinkPs = 0; //!< the user's time before sending it (a later turn)

    static constexpr uint64_t kNoTurn = UINT64_MAX; //!< previousTurn of a first request
};

/**
 * \brief How a trace's rows are written. Mooncake's (kvcache-ai/Mooncake FAST25-release
 * traces): "timestamp" in ms, "input_length", "output_length", and "hash_ids", one id per
 * block of hashBlockTokens prompt tokens (the last one partial), equal ids for equal prefixes.
 */
struct TraceFormat
{
    bool mooncake = false;          //!< Mooncake's rows rather than the generic columns
    uint64_t hashBlockTokens = 512; //!< tokens a hash id covers (Mooncake: 512)
};

/**
 * \brief The "requests" object of a serving scenario.
 *
 * Synthetic: {"rate_per_s": r, "count": n, "prompt_tokens": dist, "output_tokens": dist,
 * "arrival": "poisson" | "uniform", "images": x, "audio_seconds": y, "seed": s, "concurrency": c,
 * "warmup": w, "system_prompt": {...}, "conversation": {...}} (shared-prefixes.h). rate 0 makes
 * every request arrive at time 0 (offline batch). A benchmark client's closed loop: "concurrency"
 * keeps at most c requests in flight (the next is sent when one finishes; the rate's times are then
 * the earliest sends), "warmup" runs w more requests first, left out of the metrics, and sends the
 * measured ones once all of them are done. Trace:
 * {"trace": path} with optional "time_scale" (multiplies arrival times) and "limit" (first n
 * requests).
 */
struct RequestSpec
{
    bool fromTrace = false;        //!< read a trace file instead of sampling
    std::string tracePath;         //!< trace path (resolved against the scenario file)
    double timeScale = 1;          //!< trace arrival time multiplier
    uint64_t limit = 0;            //!< trace: keep the first n (0 = all)
    TraceFormat traceFormat;       //!< trace: how its rows are written
    double ratePerSec = 1;         //!< mean arrival rate (0: all at time 0)
    bool poisson = true;           //!< Poisson (exponential gaps) or evenly spaced arrivals
    uint64_t count = 1;            //!< requests to generate
    LengthDistribution prompt;     //!< prompt length distribution
    LengthDistribution output;     //!< output length distribution
    double images = 0;             //!< images per request
    double audioSeconds = 0;       //!< seconds of audio per request
    uint64_t seed = 1;             //!< random seed (default: the scenario's seed)
    uint64_t concurrency = 0;      //!< closed loop: at most this many in flight (0: open loop)
    uint64_t warmup = 0;           //!< warm-up requests run first, outside the metrics
    SystemPromptSpec systemPrompt; //!< a system prompt shared by a fraction of the requests
    ConversationSpec conversation; //!< multi-turn conversations (count counts conversations)

    /**
     * \brief Parse; \p file is the scenario file (also the base of a relative trace path),
     * \p field the object's path; \p defaultSeed the scenario's seed.
     */
    static RequestSpec FromJson(const nlohmann::json& j,
                                const std::string& file,
                                const std::string& field,
                                uint64_t defaultSeed);
};

/**
 * \brief Generate (or load) the requests of \p spec, sorted by arrival, ids 0..n-1. With
 * warm-up requests, ids 0..w-1 are those (their times from 0) and the measured ones follow, their
 * times again from 0 (the start of the measured phase).
 */
std::vector<Request> GenerateRequests(const RequestSpec& spec);

/**
 * \brief Read a request trace.
 *
 * CSV: a header line naming the columns, then one request per line. JSON lines: one object per
 * line. Columns / keys (aliases in brackets): arrival time in seconds "arrival_s" [arrival,
 * arrival_time, timestamp] or "arrival_ms"; "prompt_tokens" [input_tokens, prompt_len,
 * num_prompt_tokens, input_toks]; "output_tokens" [generated_tokens, output_len,
 * num_output_tokens, output_toks]; optional "images" and "audio_seconds"; other columns are
 * ignored. Blank lines and lines starting with '#' are skipped. Arrivals must not decrease.
 * When the first arrival is past the clock's 106 days it is a wall-clock timestamp (vLLM's
 * requests.jsonl: arrival_time in epoch seconds): every arrival is then taken relative to it,
 * so the first request arrives at 0. Errors name the file and "line N/column". \p limit > 0 keeps
 * the first \p limit requests (the rest is not read). Requests that would not fit the memory limit
 * (CheckServingFitsMemory) are refused at the line where they stop fitting. A generic row with
 * "hash_ids" is refused (a Mooncake trace read as generic would take its ms for seconds).
 * Mooncake's rows (\p format) give each request content: one run per hash id
 * (ContentKind::TraceBlock), so requests whose ids begin alike share those tokens.
 */
std::vector<Request> LoadRequestTrace(const std::string& path,
                                      double timeScale = 1,
                                      uint64_t limit = 0,
                                      const TraceFormat& format = TraceFormat());

} // namespace fabricsim

#endif
