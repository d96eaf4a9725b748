#include "serving-metrics.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace fabricsim
{

using nlohmann::json;

namespace
{

constexpr double kPsPerMs = 1e9;

double
Ms(double ps)
{
    return ps / kPsPerMs;
}

} // namespace

double
Percentile(const std::vector<double>& sorted, double p)
{
    if (sorted.empty())
    {
        return 0;
    }
    double pos = p / 100.0 * double(sorted.size() - 1);
    size_t lo = size_t(std::floor(pos));
    size_t hi = std::min(lo + 1, sorted.size() - 1);
    double frac = pos - double(lo);
    return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

Distribution
Distribution::Of(std::vector<double> samples)
{
    Distribution d;
    if (samples.empty())
    {
        return d;
    }
    std::sort(samples.begin(), samples.end());
    d.count = samples.size();
    d.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / double(d.count);
    d.p50 = Percentile(samples, 50);
    d.p90 = Percentile(samples, 90);
    d.p99 = Percentile(samples, 99);
    d.max = samples.back();
    return d;
}

json
Distribution::ToJson() const
{
    return {
        {"count", count}, {"mean", mean}, {"p50", p50}, {"p90", p90}, {"p99", p99}, {"max", max}};
}

int64_t
RequestRecord::FirstTokenPs() const
{
    if (tokenPs.empty())
    {
        return 0;
    }
    return kvTransferEndPs >= 0 ? std::max(tokenPs.front(), kvTransferEndPs) : tokenPs.front();
}

double
RequestRecord::TtftMs() const
{
    return tokenPs.empty() ? 0 : Ms(double(FirstTokenPs() - arrivalPs));
}

double
RequestRecord::TpotMs() const
{
    if (tokenPs.size() < 2)
    {
        return 0;
    }
    return Ms(double(tokenPs.back() - FirstTokenPs())) / double(tokenPs.size() - 1);
}

std::vector<double>
RequestRecord::ItlMs() const
{
    std::vector<double> out;
    for (size_t i = 1; i < tokenPs.size(); ++i)
    {
        out.push_back(Ms(double(tokenPs[i] - (i == 1 ? FirstTokenPs() : tokenPs[i - 1]))));
    }
    return out;
}

double
RequestRecord::E2eMs() const
{
    return tokenPs.empty() ? 0 : Ms(double(tokenPs.back() - arrivalPs));
}

bool
RequestRecord::MeetsSlo(const SloSpec& slo) const
{
    if (!Finished())
    {
        return false;
    }
    return TtftMs() <= slo.ttftMs && (tokenPs.size() < 2 || TpotMs() <= slo.tpotMs);
}

void
StepRecord::SetTiming(const StepStats& stats)
{
    launchPs = stats.launchPs;
    endPs = stats.endPs;
    double n = stats.ranks.empty() ? 1.0 : double(stats.ranks.size());
    double duration = double(stats.endPs - stats.launchPs);
    computePs = syncPs = idlePs = flops = hbmBytes = 0;
    commPs.clear();
    for (const auto& r : stats.ranks)
    {
        double used = double(r.computePs + r.syncPs);
        computePs += double(r.computePs) / n;
        syncPs += double(r.syncPs) / n;
        for (const auto& [cat, ps] : r.commPs)
        {
            commPs[cat] += double(ps) / n;
            used += double(ps);
        }
        idlePs += std::max(0.0, duration - used) / n;
        flops += r.flops;
        hbmBytes += r.hbmBytes;
    }
}

json
StepRecord::ToJson() const
{
    json comm = json::object();
    for (const auto& [cat, ps] : commPs)
    {
        comm[cat] = Ms(ps);
    }
    return {{"step", step},
            {"pool", pool},
            {"engine", engine},
            {"virtual_engine", virtualEngine},
            {"launch_ms", Ms(double(launchPs))},
            {"duration_ms", Ms(double(DurationPs()))},
            {"sequences", sequences},
            {"prefill_tokens", prefillTokens},
            {"decode_tokens", decodeTokens},
            {"compute_ms", Ms(computePs)},
            {"comm_ms", comm},
            {"sync_wait_ms", Ms(syncPs)},
            {"idle_ms", Ms(idlePs)}};
}

namespace
{

/// First arrival to the last token of the requests \p counted selects, in seconds.
template <typename Pred>
double
SpanOf(const std::vector<RequestRecord>& requests, Pred counted)
{
    int64_t first = INT64_MAX;
    int64_t last = INT64_MIN;
    for (const auto& r : requests)
    {
        first = std::min(first, r.arrivalPs);
        if (!r.tokenPs.empty() && counted(r))
        {
            last = std::max(last, r.tokenPs.back());
        }
    }
    return last <= first ? 0.0 : double(last - first) / 1e12;
}

} // namespace

double
ServingResult::DurationSec() const
{
    return SpanOf(requests, [](const RequestRecord& r) { return r.Finished(); });
}

double
ServingResult::SpanSec() const
{
    return SpanOf(requests, [](const RequestRecord&) { return true; });
}

size_t
ServingResult::Completed() const
{
    return size_t(std::count_if(
        requests.begin(), requests.end(), [](const RequestRecord& r) { return r.Finished(); }));
}

Distribution
ServingResult::Ttft() const
{
    std::vector<double> v;
    for (const auto& r : requests)
    {
        if (r.Finished())
        {
            v.push_back(r.TtftMs());
        }
    }
    return Distribution::Of(v);
}

Distribution
ServingResult::Tpot() const
{
    std::vector<double> v;
    for (const auto& r : requests)
    {
        if (r.Finished() && r.tokenPs.size() >= 2)
        {
            v.push_back(r.TpotMs());
        }
    }
    return Distribution::Of(v);
}

Distribution
ServingResult::Itl() const
{
    std::vector<double> v;
    for (const auto& r : requests)
    {
        if (r.Finished())
        {
            auto itl = r.ItlMs();
            v.insert(v.end(), itl.begin(), itl.end());
        }
    }
    return Distribution::Of(v);
}

Distribution
ServingResult::E2e() const
{
    std::vector<double> v;
    for (const auto& r : requests)
    {
        if (r.Finished())
        {
            v.push_back(r.E2eMs());
        }
    }
    return Distribution::Of(v);
}

double
ServingResult::PromptTokensPerSec() const
{
    double d = DurationSec();
    double t = 0;
    for (const auto& r : requests)
    {
        t += r.Finished() ? double(r.promptTokens) : 0.0;
    }
    return d > 0 ? t / d : 0.0;
}

double
ServingResult::GenerationTokensPerSec() const
{
    double d = DurationSec();
    double t = 0;
    for (const auto& r : requests)
    {
        t += r.Finished() ? double(r.tokenPs.size()) : 0.0;
    }
    return d > 0 ? t / d : 0.0;
}

double
ServingResult::SloAttainment() const
{
    const size_t finished = Completed();
    if (finished == 0)
    {
        return 0;
    }
    size_t ok = size_t(std::count_if(
        requests.begin(), requests.end(), [&](const RequestRecord& r) { return r.MeetsSlo(slo); }));
    return double(ok) / double(finished);
}

double
ServingResult::GoodputRequestsPerSec() const
{
    double d = DurationSec();
    return d > 0 ? SloAttainment() * double(Completed()) / d : 0.0;
}

double
ServingResult::CostPerMillionTokens() const
{
    double tokens = GenerationTokensPerSec() * DurationSec();
    if (tokens <= 0 || pricePerHour <= 0)
    {
        return 0;
    }
    return pricePerHour * accelerators * (DurationSec() / 3600.0) / (tokens / 1e6);
}

double
ServingResult::Mfu() const
{
    double d = SpanSec();
    double f = 0;
    for (const auto& s : steps)
    {
        f += s.flops;
    }
    return d > 0 && peakFlops > 0 ? f / (accelerators * peakFlops * d) : 0.0;
}

double
ServingResult::Mbu() const
{
    double d = SpanSec();
    double b = 0;
    for (const auto& s : steps)
    {
        b += s.hbmBytes;
    }
    return d > 0 && hbmBwBytesPerSec > 0 ? b / (accelerators * hbmBwBytesPerSec * d) : 0.0;
}

json
ServingResult::Breakdown() const
{
    double compute = 0;
    double sync = 0;
    double idle = 0;
    double total = 0;
    std::map<std::string, double> comm;
    for (const auto& s : steps)
    {
        compute += s.computePs;
        sync += s.syncPs;
        idle += s.idlePs;
        total += double(s.DurationPs());
        for (const auto& [cat, ps] : s.commPs)
        {
            comm[cat] += ps;
        }
    }
    json c = json::object();
    double commTotal = 0;
    for (const auto& [cat, ps] : comm)
    {
        c[cat] = Ms(ps);
        commTotal += ps;
    }
    return {{"steps", steps.size()},
            {"step_time_ms", Ms(total)},
            {"compute_ms", Ms(compute)},
            {"exposed_comm_ms", c},
            {"exposed_comm_total_ms", Ms(commTotal)},
            {"sync_wait_ms", Ms(sync)},
            {"idle_ms", Ms(idle)}};
}

json
ServingResult::PrefixCacheJson() const
{
    uint64_t prompt = 0;
    uint64_t cached = 0;
    uint64_t hits = 0;
    for (const RequestRecord& r : requests)
    {
        if (r.prefillStartPs >= 0) // admitted: its cache lookup happened
        {
            prompt += r.promptTokens;
            cached += r.cachedPromptTokens;
            hits += r.cachedPromptTokens > 0;
        }
    }
    json j = {{"prompt_tokens", prompt},
              {"cached_tokens", cached},
              {"hit_rate", prompt > 0 ? double(cached) / double(prompt) : 0.0},
              {"requests_with_hits", hits}};
    if (pools.size() > 1)
    {
        uint64_t decode = 0;
        for (const RequestRecord& r : requests)
        {
            decode += r.decodeCachedTokens;
        }
        j["decode_cached_tokens"] = decode;
    }
    return j;
}

json
ServingResult::ToJson(bool perStep) const
{
    json j;
    // A run a stop_ns cap cut short says so; every metric below is over finished requests.
    j["complete"] = Completed() == requests.size() && incomplete.empty();
    j["requests"]
        = {{"count", requests.size()},
           {"completed", Completed()},
           {"preemptions",
            std::accumulate(requests.begin(),
                            requests.end(),
                            uint64_t(0),
                            [](uint64_t a, const RequestRecord& r) { return a + r.preemptions; })}};
    if (warmupRequests > 0)
    {
        j["requests"]["warmup"] = warmupRequests;
    }
    if (prefixCaching)
    {
        j["prefix_cache"] = PrefixCacheJson();
    }
    j["duration_s"] = DurationSec();
    j["ttft_ms"] = Ttft().ToJson();
    j["tpot_ms"] = Tpot().ToJson();
    j["itl_ms"] = Itl().ToJson();
    j["e2e_ms"] = E2e().ToJson();
    double d = DurationSec();
    j["requests_per_s"] = d > 0 ? double(Completed()) / d : 0.0;
    j["prompt_tokens_per_s"] = PromptTokensPerSec();
    j["generation_tokens_per_s"] = GenerationTokensPerSec();
    j["throughput_tokens_per_s"] = PromptTokensPerSec() + GenerationTokensPerSec();
    if (slo.enabled)
    {
        j["slo"] = {{"ttft_ms", slo.ttftMs},
                    {"tpot_ms", slo.tpotMs},
                    {"attainment", SloAttainment()},
                    {"goodput_requests_per_s", GoodputRequestsPerSec()}};
    }
    j["accelerators"] = accelerators;
    j["cost_per_million_tokens"] = CostPerMillionTokens();
    j["mfu"] = Mfu();
    j["mbu"] = Mbu();
    // Disaggregated TTFT, split three ways per request: arrival -> the first step computing
    // the prompt (queueing), -> first token on the prefill pool (prefill), -> KV on the decode
    // pool (transfer).
    std::vector<double> kv;
    std::vector<double> kvAfterPrefill;
    std::vector<double> ttftQueue;
    std::vector<double> ttftPrefill;
    for (const auto& r : requests)
    {
        if (r.kvTransferEndPs >= 0 && r.Finished())
        {
            kv.push_back(Ms(double(r.kvTransferEndPs - r.kvTransferStartPs)));
            kvAfterPrefill.push_back(Ms(double(r.FirstTokenPs() - r.tokenPs.front())));
            ttftQueue.push_back(Ms(double(r.prefillStartPs - r.arrivalPs)));
            ttftPrefill.push_back(Ms(double(r.tokenPs.front() - r.prefillStartPs)));
        }
    }
    if (!kv.empty())
    {
        j["kv_transfer_ms"] = Distribution::Of(kv).ToJson();
        j["kv_transfer_after_prefill_ms"] = Distribution::Of(kvAfterPrefill).ToJson();
        j["ttft_queue_ms"] = Distribution::Of(ttftQueue).ToJson();
        j["ttft_prefill_ms"] = Distribution::Of(ttftPrefill).ToJson();
    }
    j["pools"] = pools;
    j["breakdown"] = Breakdown();
    if (perStep)
    {
        json s = json::array();
        for (const auto& st : steps)
        {
            s.push_back(st.ToJson());
        }
        j["per_step"] = std::move(s);
    }
    if (!incomplete.empty())
    {
        j["incomplete"] = incomplete;
    }
    return j;
}

void
ServingResult::WriteProgramTrace(std::ostream& out) const
{
    for (const auto& line : programTrace)
    {
        out << line.dump() << "\n";
    }
}

} // namespace fabricsim
