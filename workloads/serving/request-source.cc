#include "request-source.h"

#include "input-error.h"
#include "json-reader.h"
#include "serving-memory.h"
#include "unit-conversions.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <optional>
#include <sstream>

namespace fabricsim
{

using nlohmann::json;

namespace
{

const char* const kArrivalS[] = {"arrival_s", "arrival", "arrival_time", "timestamp"};
const char* const kPrompt[]
    = {"prompt_tokens", "input_tokens", "prompt_len", "num_prompt_tokens", "input_toks"};
const char* const kOutput[]
    = {"output_tokens", "generated_tokens", "output_len", "num_output_tokens", "output_toks"};

std::string
Trim(const std::string& s)
{
    size_t a = s.find_first_not_of(" \t\r\n");
    size_t b = s.find_last_not_of(" \t\r\n");
    return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

std::string
Directory(const std::string& file)
{
    size_t slash = file.find_last_of('/');
    return slash == std::string::npos ? "" : file.substr(0, slash + 1);
}

/// A trace row: named cells as JSON values (CSV cells parsed as numbers).
struct TraceRow
{
    json cells;
    size_t line;
};

double
NumberCell(
    const TraceRow& row, const std::string& key, const std::string& file, bool integer, double min)
{
    const json& v = row.cells[key];
    std::string field = JsonPath("line " + std::to_string(row.line), key);
    std::string expected = integer ? "an integer >= " + std::to_string(int64_t(min))
                                   : "a number >= " + std::to_string(int64_t(min));
    if (!v.is_number())
    {
        throw fabricsim::InputError(file, field, expected, DescribeJson(v));
    }
    double x = v.get<double>();
    if (!std::isfinite(x) || x < min || (integer && x != std::floor(x)))
    {
        throw fabricsim::InputError(file, field, expected, DescribeJson(v));
    }
    return x;
}

const char*
FindKey(const json& cells, const char* const* keys, size_t n)
{
    for (size_t i = 0; i < n; ++i)
    {
        if (cells.contains(keys[i]))
        {
            return keys[i];
        }
    }
    return nullptr;
}

/// \p epochBase: unset until the first row; then that row's arrival when it was a wall-clock
/// timestamp (past the clock's 106 days: vLLM's arrival_time in epoch seconds), which every
/// arrival is then taken relative to, else 0.
Request
RowToRequest(const TraceRow& row,
             const std::string& file,
             double timeScale,
             std::optional<double>& epochBase)
{
    Request r;
    std::string where = "line " + std::to_string(row.line);
    if (row.cells.contains("hash_ids"))
    {
        throw fabricsim::InputError(file,
                                    JsonPath(where, "hash_ids"),
                                    "a generic trace row (a Mooncake trace needs requests.format "
                                    "\"mooncake\": its timestamps are ms)",
                                    "hash_ids");
    }
    double arrivalS = 0;
    if (const char* k = FindKey(row.cells, kArrivalS, 4))
    {
        arrivalS = NumberCell(row, k, file, false, 0);
    }
    else if (row.cells.contains("arrival_ms"))
    {
        arrivalS = NumberCell(row, "arrival_ms", file, false, 0) / 1e3;
    }
    else
    {
        throw fabricsim::InputError(
            file, where, "an arrival time column (arrival_s or arrival_ms)", "none");
    }
    if (!epochBase)
    {
        epochBase = arrivalS > units::kMaxSeconds ? arrivalS : 0.0;
    }
    // Rebased before any scaling or conversion: an epoch second (1.8e9 s) in picoseconds
    // overflows 64 bits. Arrivals do not decrease, so none falls before the first.
    arrivalS -= *epochBase;
    const char* p = FindKey(row.cells, kPrompt, 5);
    const char* o = FindKey(row.cells, kOutput, 5);
    if (!p || !o)
    {
        throw fabricsim::InputError(file,
                                    where,
                                    std::string("a ") + (p ? "output_tokens" : "prompt_tokens")
                                        + " column",
                                    "none");
    }
    // Past 106 days an arrival wraps int64 ps (a negative TTFT follows).
    if (!(arrivalS >= 0 && arrivalS * timeScale <= units::kMaxSeconds))
    {
        throw fabricsim::InputError(file,
                                    where,
                                    "an arrival time (after time_scale) of at most 9223372 s",
                                    std::to_string(arrivalS * timeScale) + " s");
    }
    r.arrivalPs = units::SecondsToPs(arrivalS * timeScale, "request arrival");
    for (const char* k : {p, o})
    {
        const double n = NumberCell(row, k, file, true, 1);
        if (n > double(LengthDistribution::kMaxTokens))
        {
            throw fabricsim::InputError(file,
                                        JsonPath("line " + std::to_string(row.line), k),
                                        "a token count of at most 10^12",
                                        DescribeJson(row.cells[k]));
        }
        (k == p ? r.promptTokens : r.outputTokens) = uint64_t(n);
    }
    if (row.cells.contains("images"))
    {
        r.images = NumberCell(row, "images", file, false, 0);
    }
    if (row.cells.contains("audio_seconds"))
    {
        r.audioSeconds = NumberCell(row, "audio_seconds", file, false, 0);
    }
    return r;
}

/// A row of Mooncake's trace: {"timestamp": ms, "input_length", "output_length", "hash_ids"}.
Request
MooncakeRowToRequest(const TraceRow& row,
                     const std::string& file,
                     double timeScale,
                     const TraceFormat& format)
{
    const std::string where = "line " + std::to_string(row.line);
    for (const char* k : {"timestamp", "input_length", "output_length", "hash_ids"})
    {
        if (!row.cells.contains(k))
        {
            throw fabricsim::InputError(file, JsonPath(where, k), "Mooncake's key", "none");
        }
    }
    Request r;
    const double arrivalS = NumberCell(row, "timestamp", file, false, 0) / 1e3;
    if (!(arrivalS * timeScale <= units::kMaxSeconds))
    {
        throw fabricsim::InputError(file,
                                    JsonPath(where, "timestamp"),
                                    "an arrival time (after time_scale) of at most 9223372 s",
                                    std::to_string(arrivalS * timeScale) + " s");
    }
    r.arrivalPs = units::SecondsToPs(arrivalS * timeScale, "request arrival");
    const double maxTokens = double(LengthDistribution::kMaxTokens);
    r.promptTokens = uint64_t(NumberCell(row, "input_length", file, true, 1));
    r.outputTokens = uint64_t(NumberCell(row, "output_length", file, true, 1));
    if (double(r.promptTokens) > maxTokens || double(r.outputTokens) > maxTokens)
    {
        throw fabricsim::InputError(file, where, "token counts of at most 10^12", "more");
    }
    const json& ids = row.cells["hash_ids"];
    const uint64_t b = format.hashBlockTokens;
    const uint64_t blocks = (r.promptTokens + b - 1) / b;
    if (!ids.is_array() || ids.size() != blocks)
    {
        throw fabricsim::InputError(file,
                                    JsonPath(where, "hash_ids"),
                                    std::to_string(blocks) + " ids (input_length / "
                                        + std::to_string(b) + " tokens, rounded up)",
                                    DescribeJson(ids));
    }
    uint64_t left = r.promptTokens;
    for (const json& id : ids)
    {
        if (!id.is_number_unsigned() || id.get<uint64_t>() >> 56)
        {
            throw fabricsim::InputError(
                file, JsonPath(where, "hash_ids"), "ids below 2^56", DescribeJson(id));
        }
        const uint64_t n = std::min(left, b);
        r.content.push_back({ContentId(ContentKind::TraceBlock, id.get<uint64_t>()), n});
        left -= n;
    }
    return r;
}

std::vector<std::string>
SplitCsv(const std::string& line)
{
    std::vector<std::string> out;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ','))
    {
        out.push_back(Trim(cell));
    }
    if (!line.empty() && line.back() == ',')
    {
        out.emplace_back();
    }
    return out;
}

json
CsvCell(const std::string& text)
{
    if (text.empty())
    {
        return json();
    }
    char* end = nullptr;
    double x = std::strtod(text.c_str(), &end);
    if (end && *end == '\0')
    {
        return x;
    }
    return text;
}

} // namespace

RequestSpec
RequestSpec::FromJson(const json& j,
                      const std::string& file,
                      const std::string& field,
                      uint64_t defaultSeed)
{
    JsonObject o(j, file, field);
    RequestSpec s;
    s.seed = o.OptionalUint("seed", defaultSeed, 0);
    if (const json* t = o.Find("trace"))
    {
        o.CheckKeys({"trace", "time_scale", "limit", "seed", "format", "hash_block_tokens"},
                    "a trace replaces the synthetic fields");
        const std::string format = o.OptionalString("format", "generic");
        if (format != "generic" && format != "mooncake")
        {
            throw fabricsim::InputError(
                file, o.Field("format"), "\"generic\" or \"mooncake\"", "\"" + format + "\"");
        }
        s.traceFormat.mooncake = format == "mooncake";
        s.traceFormat.hashBlockTokens = o.OptionalUint("hash_block_tokens", 512, 1, 1 << 30);
        if (!t->is_string() || t->get<std::string>().empty())
        {
            throw fabricsim::InputError(file, o.Field("trace"), "a file path", DescribeJson(*t));
        }
        s.fromTrace = true;
        s.tracePath = t->get<std::string>();
        if (s.tracePath[0] != '/')
        {
            s.tracePath = Directory(file) + s.tracePath;
        }
        s.timeScale = o.OptionalNumber("time_scale", 1, 1e-12, 1e12);
        s.limit = o.OptionalUint("limit", 0, 0);
        return s;
    }
    o.CheckKeys({"trace",
                 "rate_per_s",
                 "count",
                 "prompt_tokens",
                 "output_tokens",
                 "arrival",
                 "images",
                 "audio_seconds",
                 "seed",
                 "concurrency",
                 "warmup",
                 "system_prompt",
                 "conversation"});
    if (!o.Has("rate_per_s"))
    {
        throw fabricsim::InputError(file,
                                    o.Field("rate_per_s"),
                                    "an arrival rate in requests/s (or a \"trace\")",
                                    "nothing");
    }
    s.ratePerSec = o.OptionalNumber("rate_per_s", 1, 0, 1e12);
    s.count = o.Uint("count", 1);
    // The requests' mean span, (count - 1) / rate, must leave room within ns-3's 106-day clock
    // for Poisson's spread: otherwise arrivals wrap int64 ps (a negative TTFT follows).
    const double minRate = double(s.count - 1) / (units::kMaxSeconds / 4);
    if (s.ratePerSec > 0 && s.ratePerSec < minRate)
    {
        throw fabricsim::InputError(file,
                                    o.Field("rate_per_s"),
                                    "0 (all at once) or at least " + std::to_string(minRate)
                                        + " requests/s, so that " + std::to_string(s.count)
                                        + " arrivals fit 106 days",
                                    DescribeJson(*o.Find("rate_per_s")));
    }
    for (const char* k : {"prompt_tokens", "output_tokens"})
    {
        const json* v = o.Find(k);
        if (!v)
        {
            throw fabricsim::InputError(
                file, o.Field(k), "a token count or distribution", "nothing");
        }
        (std::string(k) == "prompt_tokens" ? s.prompt : s.output)
            = LengthDistribution::FromJson(*v, file, o.Field(k));
    }
    std::string arrival = o.OptionalString("arrival", "poisson");
    if (arrival != "poisson" && arrival != "uniform")
    {
        throw fabricsim::InputError(
            file, o.Field("arrival"), "\"poisson\" or \"uniform\"", "\"" + arrival + "\"");
    }
    s.poisson = arrival == "poisson";
    s.concurrency = o.OptionalUint("concurrency", 0, 1);
    s.warmup = o.OptionalUint("warmup", 0, 0);
    s.images = o.OptionalNumber("images", 0, 0, 1e6);
    s.audioSeconds = o.OptionalNumber("audio_seconds", 0, 0, 1e7);
    s.systemPrompt = ReadSystemPrompt(o);
    s.conversation = ReadConversation(o);
    if (s.conversation.turns > 1)
    {
        // Not modelled yet: a benchmark client that sends conversations, and later turns that
        // repeat the earlier turns' media.
        for (const char* k : {"concurrency", "warmup", "images", "audio_seconds"})
        {
            const json* v = o.Find(k);
            if (v && !(v->is_number() && v->get<double>() == 0))
            {
                throw fabricsim::InputError(file,
                                            o.Field(k),
                                            "no " + std::string(k)
                                                + " with multi-turn conversations",
                                            DescribeJson(*v));
            }
        }
    }
    units::CheckedMul(s.count, s.conversation.turns, "requests (conversations x turns)");
    return s;
}

std::vector<Request>
GenerateRequests(const RequestSpec& spec)
{
    if (spec.fromTrace)
    {
        return LoadRequestTrace(spec.tracePath, spec.timeScale, spec.limit, spec.traceFormat);
    }
    // Separate streams for gaps and lengths: changing the rate keeps the same lengths.
    SeededStream gaps(spec.seed, 1);
    SeededStream prompts(spec.seed, 2);
    SeededStream outputs(spec.seed, 3);
    SeededStream turns(spec.seed, 4);
    std::vector<Request> out;
    const uint64_t total = units::CheckedAdd(spec.count, spec.warmup, "requests with warm-up");
    const ConversationSpec& conv = spec.conversation;
    out.reserve(total * conv.turns);
    const bool shared = spec.systemPrompt.tokens > 0 || conv.turns > 1;
    double t = 0;
    for (uint64_t i = 0; i < total; ++i)
    {
        if (i == spec.warmup)
        {
            t = 0; // the measured phase starts its own clock
        }
        else if (spec.ratePerSec > 0 && i > 0)
        {
            t += spec.poisson ? gaps.Exponential(spec.ratePerSec) : 1.0 / spec.ratePerSec;
        }
        uint64_t which = 0;
        const bool system = spec.systemPrompt.Has(i, which);
        // A conversation's turns get consecutive ids; turns after the first wait for the one
        // before (their arrival is set when sent).
        for (uint64_t k = 0; k < conv.turns; ++k)
        {
            Request r;
            r.id = out.size();
            r.arrivalPs = units::SecondsToPs(t, "request arrival");
            uint64_t user = k == 0 || !conv.turnTokens
                                ? spec.prompt.Sample(k == 0 ? prompts : turns)
                                : conv.turnTokens->Sample(turns);
            r.outputTokens = spec.output.Sample(outputs);
            r.images = spec.images;
            r.audioSeconds = spec.audioSeconds;
            if (shared)
            {
                ComposePrompt(r, user, spec.systemPrompt, system, which, k ? &out.back() : nullptr);
            }
            else
            {
                r.promptTokens = user;
            }
            if (k > 0)
            {
                r.previousTurn = r.id - 1;
                r.thinkPs = units::SecondsToPs(conv.thinkSec, "think time");
            }
            out.push_back(r);
        }
    }
    return out;
}

std::vector<Request>
LoadRequestTrace(const std::string& path,
                 double timeScale,
                 uint64_t limit,
                 const TraceFormat& format)
{
    LineReader in(path, "request trace (CSV or JSON lines)");
    std::vector<Request> out;
    std::vector<std::string> header;
    std::string line;
    bool jsonLines = false;
    bool decided = false;
    double outputTokens = 0;
    std::optional<double> epochBase;
    while ((limit == 0 || out.size() < limit) && in.Next(line))
    {
        const uint64_t lineNo = in.LineNumber();
        std::string t = Trim(line);
        if (t.empty() || t[0] == '#')
        {
            continue;
        }
        if (!decided)
        {
            jsonLines = t[0] == '{';
            decided = true;
            if (!jsonLines)
            {
                header = SplitCsv(t);
                continue;
            }
        }
        // Each row becomes a Request as it is read: a trace of a billion lines stops at the
        // line where the requests would no longer fit the memory limit, not at the end.
        TraceRow row{json::object(), lineNo};
        if (jsonLines)
        {
            row.cells = ParseJson(t, path, "line " + std::to_string(lineNo));
            if (!row.cells.is_object())
            {
                throw fabricsim::InputError(path,
                                            "line " + std::to_string(lineNo),
                                            "a JSON object",
                                            DescribeJson(row.cells));
            }
        }
        else
        {
            auto cells = SplitCsv(t);
            if (cells.size() != header.size())
            {
                throw fabricsim::InputError(path,
                                            "line " + std::to_string(lineNo),
                                            std::to_string(header.size())
                                                + " comma-separated cells",
                                            std::to_string(cells.size()));
            }
            for (size_t i = 0; i < cells.size(); ++i)
            {
                row.cells[header[i]] = CsvCell(cells[i]);
            }
        }
        Request r = format.mooncake ? MooncakeRowToRequest(row, path, timeScale, format)
                                    : RowToRequest(row, path, timeScale, epochBase);
        if (!out.empty() && r.arrivalPs < out.back().arrivalPs)
        {
            throw fabricsim::InputError(path,
                                        "line " + std::to_string(row.line),
                                        "arrival times that do not decrease",
                                        "an arrival before the previous line's");
        }
        r.id = out.size();
        out.push_back(r);
        outputTokens += double(r.outputTokens);
        // Without the steps (their batch size is the scenario's): the requests alone.
        CheckServingFitsMemory(double(out.size()),
                               outputTokens,
                               double(UINT32_MAX),
                               path,
                               "line " + std::to_string(lineNo));
    }
    if (out.empty())
    {
        throw fabricsim::InputError(path, "", "at least one request", "an empty trace");
    }
    return out;
}

} // namespace fabricsim
