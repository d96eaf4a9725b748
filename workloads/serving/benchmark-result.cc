#include "benchmark-result.h"

#include "file-reader.h"
#include "input-error.h"
#include "json-reader.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <regex>

namespace fabricsim
{

using nlohmann::json;

namespace
{

/// Natural order: runs of digits compare as numbers, so conc8 sorts before conc16.
bool
NaturalLess(const std::string& a, const std::string& b)
{
    size_t i = 0;
    size_t j = 0;
    while (i < a.size() && j < b.size())
    {
        if (std::isdigit(static_cast<unsigned char>(a[i]))
            && std::isdigit(static_cast<unsigned char>(b[j])))
        {
            size_t ie = i;
            size_t je = j;
            while (ie < a.size() && std::isdigit(static_cast<unsigned char>(a[ie])))
            {
                ++ie;
            }
            while (je < b.size() && std::isdigit(static_cast<unsigned char>(b[je])))
            {
                ++je;
            }
            const std::string na = a.substr(i, ie - i);
            const std::string nb = b.substr(j, je - j);
            const std::string ta = na.substr(std::min(na.find_first_not_of('0'), na.size()));
            const std::string tb = nb.substr(std::min(nb.find_first_not_of('0'), nb.size()));
            if (ta.size() != tb.size())
            {
                return ta.size() < tb.size();
            }
            if (ta != tb)
            {
                return ta < tb;
            }
            i = ie;
            j = je;
            continue;
        }
        if (a[i] != b[j])
        {
            return a[i] < b[j];
        }
        ++i;
        ++j;
    }
    return a.size() - i < b.size() - j;
}

/// A per-request length: the listed ones where the file has them (all equal: that length),
/// else total / completed, which must be a whole number of tokens per request or is rounded
/// and said so.
uint64_t
LengthPerRequest(const JsonObject& o,
                 const std::string& listKey,
                 const std::string& totalKey,
                 uint64_t completed,
                 std::vector<uint64_t>& lens,
                 std::vector<std::string>& derived)
{
    if (o.Has(listKey))
    {
        lens = o.UintArray(listKey, true, 0, 1000000000000ULL);
        if (lens.size() != completed)
        {
            o.Fail(listKey,
                   "one length per completed request (" + std::to_string(completed) + ")",
                   std::to_string(lens.size()) + " lengths");
        }
    }
    // At most 10^12 tokens a request, as a scenario's lengths (and no overflow of the sum).
    constexpr uint64_t kMaxPerRequest = 1000000000000ULL;
    const uint64_t total = o.Uint(
        totalKey,
        1,
        completed > UINT64_MAX / 2 / kMaxPerRequest ? UINT64_MAX / 2 : completed * kMaxPerRequest);
    if (!lens.empty())
    {
        uint64_t sum = 0;
        for (uint64_t l : lens)
        {
            sum += l;
        }
        if (sum != total)
        {
            o.Fail(totalKey,
                   "the sum of " + listKey + " (" + std::to_string(sum) + ")",
                   std::to_string(total));
        }
        if (std::all_of(lens.begin(), lens.end(), [&](uint64_t l) { return l == lens.front(); }))
        {
            const uint64_t l = lens.front();
            lens.clear();
            return l;
        }
        return (total + completed / 2) / completed;
    }
    const uint64_t mean = (total + completed / 2) / completed;
    if (mean * completed != total)
    {
        derived.push_back(totalKey + " / completed = " + std::to_string(double(total) / completed)
                          + ", rounded to " + std::to_string(mean) + " per request");
    }
    else
    {
        derived.push_back("length per request: " + totalKey + " / completed");
    }
    return std::max<uint64_t>(mean, 1);
}

/// request_rate: a number of requests per second, or "inf" / Infinity (0 here: all at once).
double
RequestRate(const JsonObject& o)
{
    const json* v = o.Find("request_rate");
    if (!v || v->is_null())
    {
        return 0;
    }
    if (v->is_string())
    {
        const std::string s = v->get<std::string>();
        if (s == "inf" || s == "Infinity" || s == "infinity")
        {
            return 0;
        }
        o.Fail("request_rate", "a number of requests per second or \"inf\"", "\"" + s + "\"");
    }
    const double r = o.Number("request_rate", 0, 1e9);
    return std::isfinite(r) ? r : 0;
}

} // namespace

std::optional<ParallelTag>
ParseParallelTag(const std::string& tag)
{
    static const std::regex kTag("(tp|tep|dep|dp)([0-9]{1,5})", std::regex::icase);
    std::smatch m;
    if (!std::regex_match(tag, m, kTag))
    {
        return std::nullopt;
    }
    std::string kind = m[1].str();
    std::transform(kind.begin(),
                   kind.end(),
                   kind.begin(),
                   [](unsigned char c) { return char(std::tolower(c)); });
    const uint32_t n = uint32_t(std::stoul(m[2].str()));
    if (n == 0)
    {
        return std::nullopt;
    }
    ParallelTag p;
    if (kind == "tp" || kind == "tep")
    {
        p.tp = n;
    }
    else
    {
        p.dp = n;
    }
    p.expertParallel = kind == "tep" || kind == "dep";
    return p;
}

BenchmarkResult
ReadBenchmarkResult(const std::string& path)
{
    BenchmarkResult r;
    r.path = path;
    r.label = std::filesystem::path(path).stem().string();
    const json doc = ParseJson(ReadFileBounded(path, "benchmark result (JSON)"), path);
    const JsonObject o(doc, path, "");
    if (o.Has("median_ttft_ms"))
    {
        r.format = "vllm";
    }
    else if (o.Has("median_ttft"))
    {
        r.format = "inferencex";
    }
    else
    {
        o.Fail("median_ttft_ms",
               "a benchmark result: vLLM bench serve's (median_ttft_ms, ...) or InferenceX's "
               "(median_ttft, ... in seconds)",
               "neither key");
    }
    if (const json* m = o.Find("model_id"); m && m->is_string())
    {
        r.model = m->get<std::string>();
    }
    r.completed = o.Uint("completed", 1, UINT32_MAX);
    r.numPrompts = o.OptionalUint("num_prompts", r.completed, 1, UINT32_MAX);
    if (r.completed != r.numPrompts)
    {
        // A run that lost requests reports figures over the survivors: not a closed loop of
        // num_prompts, and not replayable as one.
        o.Fail("completed",
               "every prompt completed (" + std::to_string(r.numPrompts) + ")",
               std::to_string(r.completed));
    }
    if (const json* c = o.Find("max_concurrency"); c && !c->is_null())
    {
        r.concurrency = uint32_t(o.Uint("max_concurrency", 1, UINT32_MAX));
    }
    r.requestRate = RequestRate(o);
    r.burstiness = o.Has("burstiness") && !o.Find("burstiness")->is_null()
                       ? o.Number("burstiness", 1e-6, 1e6)
                       : 1.0;
    r.durationS = o.Number("duration", 1e-9, 1e9);

    // Lengths: an InferenceX file name states them; else the lists or the totals.
    // At most 9 digits a number: lengths and concurrency a name can state without overflow.
    static const std::regex kInferenceX(
        "(.+)_vllm_([A-Za-z]+[0-9]{1,5})_isl([0-9]{1,9})_osl([0-9]{1,9})_conc([0-9]{1,9})");
    std::smatch m;
    const bool named = std::regex_match(r.label, m, kInferenceX);
    if (r.format == "inferencex")
    {
        if (!named)
        {
            throw InputError(path,
                             "file name",
                             "<model>_vllm_<tp8|tep8|dep8>_isl<I>_osl<O>_conc<C>.json (InferenceX "
                             "states lengths and concurrency only there)",
                             "\"" + std::filesystem::path(path).filename().string() + "\"");
        }
        r.parallelTag = m[2].str();
        r.inputTokens = std::stoull(m[3].str());
        r.outputTokens = std::stoull(m[4].str());
        const uint32_t conc = uint32_t(std::stoul(m[5].str()));
        if (r.concurrency != conc)
        {
            o.Fail("max_concurrency",
                   "the file name's concurrency (" + std::to_string(conc) + ")",
                   std::to_string(r.concurrency));
        }
        for (const auto& [key, per] :
             {std::pair<const char*, uint64_t>{"total_input_tokens", r.inputTokens},
              std::pair<const char*, uint64_t>{"total_output_tokens", r.outputTokens}})
        {
            const uint64_t total = o.Uint(key, 1, UINT64_MAX / 2);
            if (total != per * r.completed)
            {
                o.Fail(key,
                       "completed x the file name's length (" + std::to_string(per * r.completed)
                           + ")",
                       std::to_string(total));
            }
        }
        static const char* const kSeconds[]
            = {"median_ttft", "p99_ttft", "median_tpot", "p99_tpot", "median_e2el", "p99_e2el"};
        for (const char* k : kSeconds)
        {
            r.measured[std::string(k) + "_ms"] = o.Number(k, 0, 1e9) * 1e3;
        }
        for (const char* k : {"median_itl", "p99_itl", "mean_ttft", "mean_tpot", "mean_e2el"})
        {
            if (o.Has(k))
            {
                r.measured[std::string(k) + "_ms"] = o.Number(k, 0, 1e9) * 1e3;
            }
        }
    }
    else
    {
        if (named)
        {
            r.parallelTag = m[2].str();
        }
        r.inputTokens = LengthPerRequest(
            o, "input_lens", "total_input_tokens", r.completed, r.inputLens, r.derived);
        r.outputTokens = LengthPerRequest(
            o, "output_lens", "total_output_tokens", r.completed, r.outputLens, r.derived);
        static const std::regex kLatency(
            "(mean|median|p[0-9]+(\\.[0-9]+)?)_(ttft|tpot|itl|e2el)_ms");
        for (const auto& [key, value] : doc.items())
        {
            if (std::regex_match(key, kLatency) && !value.is_null())
            {
                r.measured[key] = o.Number(key, 0, 1e12);
            }
        }
    }
    for (const char* k : {"request_throughput", "input_throughput", "output_throughput"})
    {
        if (o.Has(k) && !o.Find(k)->is_null())
        {
            r.measured[k] = o.Number(k, 0, 1e12);
        }
    }
    if (!r.measured.count("output_throughput"))
    {
        o.Fail("output_throughput", "output tokens per second", "nothing");
    }
    return r;
}

std::vector<std::string>
BenchmarkResultFiles(const std::string& dir)
{
    std::error_code ec;
    std::vector<std::string> files;
    for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    {
        if (it->path().extension() == ".json" && it->is_regular_file())
        {
            files.push_back(it->path().string());
        }
    }
    if (ec)
    {
        throw InputError(dir, "folder", "a readable folder of benchmark results", ec.message());
    }
    if (files.empty())
    {
        throw InputError(dir, "folder", "benchmark result files (*.json)", "none");
    }
    std::sort(files.begin(), files.end(), NaturalLess);
    return files;
}

namespace
{
const std::regex&
VersionPattern()
{
    static const std::regex kVersion("v?([0-9]{1,4})\\.([0-9]{1,4})([.+-].*)?");
    return kVersion;
}
} // namespace

bool
IsVllmVersion(const std::string& version)
{
    return version.empty() || version == "nightly" || std::regex_match(version, VersionPattern());
}

VllmEngineDefaults
VllmServeDefaults(const std::string& version, double memoryBytes, const std::string& gpuName)
{
    VllmEngineDefaults d;
    int major = 1 << 20; // "" and "nightly": the newest
    int minor = 0;
    std::smatch m;
    if (std::regex_match(version, m, VersionPattern()))
    {
        major = std::stoi(m[1].str());
        minor = std::stoi(m[2].str());
    }
    std::string lower = gpuName;
    std::transform(lower.begin(),
                   lower.end(),
                   lower.begin(),
                   [](unsigned char c) { return char(std::tolower(c)); });
    const bool big = memoryBytes >= 70.0 * (1ULL << 30) && lower.find("a100") == std::string::npos;
    if ((major > 0 || minor >= 9) && big)
    {
        d.maxNumBatchedTokens = 8192;
        d.maxNumSeqs = 1024;
    }
    return d;
}

} // namespace fabricsim
