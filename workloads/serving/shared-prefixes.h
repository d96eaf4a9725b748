/*
 * Requests that share their first tokens: a system prompt shared by a fraction of the requests,
 * and multi-turn conversations whose every prompt repeats the conversation so far. Prefix
 * caching (serving.kv_cache.prefix_caching) skips what an earlier request computed.
 */
#ifndef FABRICSIM_SERVING_SHARED_PREFIXES_H
#define FABRICSIM_SERVING_SHARED_PREFIXES_H

#include "json-reader.h"
#include "length-distribution.h"

#include <cstdint>

namespace fabricsim
{

struct Request;

/**
 * \brief serving.requests.system_prompt: {"tokens": P, "fraction": f, "prompts": k}. Requests
 * (conversations) i with floor((i + 1) f) > floor(i f) begin with one of k system prompts of P
 * tokens, the m-th of them with prompt m mod k; their prompt is P + prompt_tokens.
 */
struct SystemPromptSpec
{
    uint64_t tokens = 0;  //!< P (0: none)
    double fraction = 1;  //!< share of requests (conversations) with one
    uint64_t prompts = 1; //!< distinct system prompts

    /// True for request (conversation) \p i; \p which is then its prompt.
    bool Has(uint64_t i, uint64_t& which) const;
};

/**
 * \brief serving.requests.conversation: {"turns": N, "think_time_s": t, "turn_tokens": dist}.
 * requests.count counts conversations, each of N requests: turn 1 is an ordinary request
 * (sent at the rate's times); turn k + 1 is sent t seconds after turn k's last token, its
 * prompt turn k's prompt and answer followed by turn_tokens new tokens (default: the
 * prompt_tokens distribution).
 */
struct ConversationSpec
{
    uint64_t turns = 1;                           //!< requests a conversation (1: none)
    double thinkSec = 0;                          //!< user's time between turns
    std::optional<LengthDistribution> turnTokens; //!< new tokens of turns 2.. (unset: prompt's)
};

/// Read system_prompt (absent: none) from \p requests.
SystemPromptSpec ReadSystemPrompt(const JsonObject& requests);

/// Read conversation (absent: one turn) from \p requests.
ConversationSpec ReadConversation(const JsonObject& requests);

/**
 * \brief Build request \p r's content (ContentSpan runs) and prompt from its own
 * \p userTokens: a system prompt (\p systemPrompt, index \p which) when it has one, then its
 * own tokens; turn k + 1 of a conversation (\p previous, else null) starts with turn k's
 * content and answer.
 */
void ComposePrompt(Request& r,
                   uint64_t userTokens,
                   const SystemPromptSpec& systemPrompt,
                   bool withSystemPrompt,
                   uint64_t which,
                   const Request* previous);

} // namespace fabricsim

#endif
