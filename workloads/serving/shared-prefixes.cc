#include "shared-prefixes.h"

#include "input-error.h"
#include "prefix-cache.h"
#include "request-source.h"
#include "unit-conversions.h"

#include <cmath>

namespace fabricsim
{

bool
SystemPromptSpec::Has(uint64_t i, uint64_t& which) const
{
    if (tokens == 0)
    {
        return false;
    }
    // Spread evenly: exactly floor(n f) of the first n requests have one.
    const auto before = uint64_t(std::floor(double(i) * fraction));
    if (uint64_t(std::floor(double(i + 1) * fraction)) == before)
    {
        return false;
    }
    which = before % prompts;
    return true;
}

SystemPromptSpec
ReadSystemPrompt(const JsonObject& requests)
{
    SystemPromptSpec s;
    auto o = requests.OptionalObject("system_prompt");
    if (!o)
    {
        return s;
    }
    o->CheckKeys({"tokens", "fraction", "prompts"});
    s.tokens = o->Uint("tokens", 1);
    if (s.tokens > LengthDistribution::kMaxTokens)
    {
        throw fabricsim::InputError(o->File(),
                                    o->Field("tokens"),
                                    "a token count of at most 10^12",
                                    std::to_string(s.tokens));
    }
    s.fraction = o->OptionalNumber("fraction", 1, 0, 1);
    s.prompts = o->OptionalUint("prompts", 1, 1);
    return s;
}

ConversationSpec
ReadConversation(const JsonObject& requests)
{
    ConversationSpec c;
    auto o = requests.OptionalObject("conversation");
    if (!o)
    {
        return c;
    }
    o->CheckKeys({"turns", "think_time_s", "turn_tokens"});
    c.turns = o->Uint("turns", 1);
    c.thinkSec = o->OptionalNumber("think_time_s", 0, 0, units::kMaxSeconds);
    if (const nlohmann::json* t = o->Find("turn_tokens"))
    {
        c.turnTokens = LengthDistribution::FromJson(*t, o->File(), o->Field("turn_tokens"));
    }
    return c;
}

void
ComposePrompt(Request& r,
              uint64_t userTokens,
              const SystemPromptSpec& systemPrompt,
              bool withSystemPrompt,
              uint64_t which,
              const Request* previous)
{
    r.content.clear();
    uint64_t prompt = 0;
    if (previous)
    {
        r.content = previous->content;
        r.content.push_back({ContentId(ContentKind::Answer, previous->id), previous->outputTokens});
        prompt = previous->promptTokens + previous->outputTokens;
    }
    else if (withSystemPrompt)
    {
        r.content.push_back({ContentId(ContentKind::SystemPrompt, which), systemPrompt.tokens});
        prompt = systemPrompt.tokens;
    }
    r.content.push_back({ContentId(ContentKind::Unique, r.id), userTokens});
    r.promptTokens = units::CheckedAdd(prompt, userTokens, "prompt tokens");
    if (r.promptTokens > LengthDistribution::kMaxTokens)
    {
        units::ThrowOverflow("conversation prompt tokens (at most 10^12)",
                             std::to_string(r.promptTokens));
    }
}

} // namespace fabricsim
