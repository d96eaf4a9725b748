#include "inference-scenario.h"

#include "input-error.h"
#include "json-read.h"
#include "serving-memory.h"

#include <algorithm>
#include <set>

namespace fabricsim
{

using nlohmann::json;

namespace
{

std::vector<uint32_t>
ReadHostList(const JsonObject& o, const std::string& key)
{
    const json& v = o.Require(key, "a non-empty array of host indexes");
    if (!v.is_array() || v.empty())
    {
        o.Fail(key, "a non-empty array of host indexes", DescribeJson(v));
    }
    std::vector<uint32_t> out;
    std::set<uint32_t> seen;
    for (size_t i = 0; i < v.size(); ++i)
    {
        const uint32_t h = uint32_t(
            JsonObject::ToUint(v[i], o.File(), JsonIndex(o.Field(key), i), 0, UINT32_MAX));
        if (!seen.insert(h).second)
        {
            throw fabricsim::InputError(o.File(),
                                        JsonIndex(o.Field(key), i),
                                        "distinct host indexes",
                                        "host " + std::to_string(h) + " twice");
        }
        out.push_back(h);
    }
    return out;
}

BatchingSpec
ReadBatching(const std::optional<JsonObject>& j, const BatchingSpec& def)
{
    BatchingSpec b = def;
    if (!j)
    {
        return b;
    }
    const JsonObject& o = *j;
    o.CheckKeys({"max_num_batched_tokens", "max_num_seqs", "chunked_prefill"});
    b.maxNumBatchedTokens
        = uint32_t(o.OptionalUint("max_num_batched_tokens", def.maxNumBatchedTokens, 1));
    b.maxNumSeqs = uint32_t(o.OptionalUint("max_num_seqs", def.maxNumSeqs, 1));
    b.chunkedPrefill = o.OptionalBool("chunked_prefill", def.chunkedPrefill);
    return b;
}

PoolSpec
ReadPool(const JsonObject& o,
         const ParallelismSpec& defPar,
         const BatchingSpec& defBatching,
         const ModelSpec& model)
{
    o.CheckKeys({"parallelism", "hosts", "first_host", "batching"});
    PoolSpec p;
    p.par = defPar;
    if (const json* par = o.Find("parallelism"))
    {
        p.par = ParallelismSpec::FromJson(*par, o.File(), o.Field("parallelism"));
    }
    p.par.Validate(model, o.File(), o.Field("parallelism"));
    p.batching = ReadBatching(o.OptionalObject("batching"), defBatching);
    p.firstHost = uint32_t(o.OptionalUint("first_host", 0, 0));
    if (o.Has("hosts"))
    {
        p.hosts = ReadHostList(o, "hosts");
        if (p.hosts.size() != p.par.WorldSize())
        {
            throw fabricsim::InputError(o.File(),
                                        o.Field("hosts"),
                                        std::to_string(p.par.WorldSize()) + " hosts (tp x pp x dp)",
                                        std::to_string(p.hosts.size()));
        }
    }
    return p;
}

RouterSpec
ReadRouter(const std::optional<JsonObject>& j, const KvCacheSpec& kv)
{
    RouterSpec r;
    if (!j)
    {
        return r;
    }
    j->CheckKeys({"policy", "cache_threshold", "balance_abs_threshold", "balance_rel_threshold"});
    const std::string policy = j->OptionalString("policy", "least_loaded");
    if (policy != "least_loaded" && policy != "cache_aware")
    {
        throw fabricsim::InputError(j->File(),
                                    j->Field("policy"),
                                    "\"least_loaded\" or \"cache_aware\"",
                                    "\"" + policy + "\"");
    }
    r.cacheAware = policy == "cache_aware";
    if (r.cacheAware && !kv.prefixCaching)
    {
        throw fabricsim::InputError(j->File(),
                                    j->Field("policy"),
                                    "least_loaded without serving.kv_cache.prefix_caching",
                                    "\"cache_aware\"");
    }
    r.cacheThreshold = j->OptionalNumber("cache_threshold", r.cacheThreshold, 0, 1);
    r.balanceAbs = j->OptionalUint("balance_abs_threshold", r.balanceAbs, 0);
    r.balanceRel = j->OptionalNumber("balance_rel_threshold", r.balanceRel, 1, 1e12);
    return r;
}

KvCacheSpec
ReadKvCache(const std::optional<JsonObject>& j)
{
    KvCacheSpec kv;
    if (!j)
    {
        return kv;
    }
    const JsonObject& o = *j;
    o.CheckKeys({"placement",
                 "block_size",
                 "gpu_memory_utilization",
                 "num_blocks",
                 "capacity",
                 "bandwidth",
                 "pool_hosts",
                 "prefix_caching"});
    std::string place = o.OptionalString("placement", "hbm");
    if (place == "hbm")
    {
        kv.placement = KvPlacement::Hbm;
    }
    else if (place == "host")
    {
        kv.placement = KvPlacement::Host;
    }
    else if (place == "remote")
    {
        kv.placement = KvPlacement::Remote;
    }
    else
    {
        throw fabricsim::InputError(
            o.File(), o.Field("placement"), "\"hbm\", \"host\" or \"remote\"", "\"" + place + "\"");
    }
    kv.blockSize = uint32_t(o.OptionalUint("block_size", 16, 1));
    kv.gpuMemoryUtilization = o.OptionalNumber("gpu_memory_utilization", 0.9, 0.01, 1.0);
    kv.numBlocksOverride = o.OptionalUint("num_blocks", 0, 1);
    kv.prefixCaching = o.OptionalBool("prefix_caching", false);
    kv.tierCapacityBytes = o.OptionalQuantity("capacity", UnitKind::Bytes, kv.tierCapacityBytes);
    if (const json* b = o.Find("bandwidth"))
    {
        if (kv.placement == KvPlacement::Remote)
        {
            throw fabricsim::InputError(o.File(),
                                        o.Field("bandwidth"),
                                        "no bandwidth for a remote pool (the fabric sets it)",
                                        DescribeJson(*b));
        }
        kv.tierBwBytesPerSec = o.Quantity("bandwidth", UnitKind::BytesPerSec);
    }
    if (o.Has("pool_hosts"))
    {
        kv.poolHosts = ReadHostList(o, "pool_hosts");
    }
    if (kv.placement == KvPlacement::Remote && kv.poolHosts.empty())
    {
        throw fabricsim::InputError(o.File(),
                                    o.Field("pool_hosts"),
                                    "the hosts of the remote KV pool (placement \"remote\")",
                                    "nothing");
    }
    if (kv.placement != KvPlacement::Remote && !kv.poolHosts.empty())
    {
        throw fabricsim::InputError(o.File(),
                                    o.Field("pool_hosts"),
                                    "no pool hosts unless placement is \"remote\"",
                                    DescribeJson(*o.Find("pool_hosts")));
    }
    return kv;
}

ExecutionSpec
ReadExecution(const std::optional<JsonObject>& j)
{
    ExecutionSpec e;
    if (!j)
    {
        return e;
    }
    const JsonObject& o = *j;
    o.CheckKeys({"ep_overlap",
                 "cuda_graphs",
                 "cuda_graph_max_batch",
                 "cuda_graph_padding",
                 "dp_padding",
                 "graph_kernel_overhead",
                 "step_overhead",
                 "sequence_overhead",
                 "prefill_overhead",
                 "prefill_token_overhead",
                 "request_overhead",
                 "prompt_token_overhead",
                 "frontend_servers",
                 "async_scheduling"});
    std::string ov = o.OptionalString("ep_overlap", "none");
    if (ov == "none")
    {
        e.epOverlap = EpOverlap::None;
    }
    else if (ov == "two_batch")
    {
        e.epOverlap = EpOverlap::TwoBatch;
    }
    else
    {
        throw fabricsim::InputError(
            o.File(), o.Field("ep_overlap"), "\"none\" or \"two_batch\"", "\"" + ov + "\"");
    }
    e.cudaGraphs = o.OptionalBool("cuda_graphs", true);
    e.cudaGraphMaxBatch = uint32_t(o.OptionalUint("cuda_graph_max_batch", 512, 1));
    e.cudaGraphPadding = o.OptionalBool("cuda_graph_padding", true);
    e.dpPadding = o.OptionalBool("dp_padding", e.dpPadding);
    e.graphKernelOverheadSec = o.OptionalQuantity(
        "graph_kernel_overhead", UnitKind::Seconds, e.graphKernelOverheadSec, true);
    e.stepOverheadSec
        = o.OptionalQuantity("step_overhead", UnitKind::Seconds, e.stepOverheadSec, true);
    e.sequenceOverheadSec
        = o.OptionalQuantity("sequence_overhead", UnitKind::Seconds, e.sequenceOverheadSec, true);
    e.prefillOverheadSec
        = o.OptionalQuantity("prefill_overhead", UnitKind::Seconds, e.prefillOverheadSec, true);
    e.prefillTokenOverheadSec = o.OptionalQuantity(
        "prefill_token_overhead", UnitKind::Seconds, e.prefillTokenOverheadSec, true);
    e.requestOverheadSec
        = o.OptionalQuantity("request_overhead", UnitKind::Seconds, e.requestOverheadSec, true);
    e.promptTokenOverheadSec = o.OptionalQuantity(
        "prompt_token_overhead", UnitKind::Seconds, e.promptTokenOverheadSec, true);
    e.frontendServers = uint32_t(o.OptionalUint("frontend_servers", 0, 0, 1024));
    e.asyncScheduling = o.OptionalBool("async_scheduling", e.asyncScheduling);
    // Host work per step is milliseconds; past an hour a value is a typo (a unit left off), and
    // an engine step that long would not fit the simulator's clock once summed.
    for (const auto& [key, sec] :
         {std::pair<const char*, double>{"graph_kernel_overhead", e.graphKernelOverheadSec},
          {"step_overhead", e.stepOverheadSec},
          {"sequence_overhead", e.sequenceOverheadSec},
          {"prefill_overhead", e.prefillOverheadSec},
          {"prefill_token_overhead", e.prefillTokenOverheadSec},
          {"request_overhead", e.requestOverheadSec},
          {"prompt_token_overhead", e.promptTokenOverheadSec}})
    {
        if (sec > 3600)
        {
            o.Fail(key, "at most 1 hour (\"3ms\", \"5us\")", o.Find(key)->dump());
        }
    }
    return e;
}

PlacementSpec
ReadPlacement(const std::optional<JsonObject>& j, const json& topology)
{
    PlacementSpec p;
    // A rail-optimised topology tells how many accelerators a server has and how many hosts exist.
    if (topology.is_object())
    {
        auto positive = [&](const char* key) -> uint64_t
        {
            const json* v = JsonObject(topology, "", "topology").Find(key);
            return v ? JsonObject::AsUint(*v).value_or(0) : 0;
        };
        uint64_t a = positive("accels_per_server");
        uint64_t s = positive("servers");
        if (a > 0 && s > 0)
        {
            p.accelsPerServer = uint32_t(a);
            p.numHosts = uint32_t(a * s);
            p.servers = true;
        }
        else if (uint64_t h = positive("hosts"); h > 0)
        {
            p.numHosts = uint32_t(h);
        }
    }
    if (!j)
    {
        return p;
    }
    const JsonObject& o = *j;
    o.CheckKeys({"tp", "accels_per_server", "first_host", "hosts"});
    std::string tp = o.OptionalString("tp", "scale_up");
    if (tp == "scale_up")
    {
        p.tp = TpPlacement::ScaleUp;
    }
    else if (tp == "across_servers")
    {
        p.tp = TpPlacement::AcrossServers;
    }
    else
    {
        throw fabricsim::InputError(
            o.File(), o.Field("tp"), "\"scale_up\" or \"across_servers\"", "\"" + tp + "\"");
    }
    p.accelsPerServer = uint32_t(o.OptionalUint("accels_per_server", p.accelsPerServer, 1));
    p.servers = p.servers || o.Find("accels_per_server") != nullptr;
    return p;
}

SloSpec
ReadSlo(const std::optional<JsonObject>& j)
{
    SloSpec s;
    if (!j)
    {
        return s;
    }
    const JsonObject& o = *j;
    o.CheckKeys({"ttft_ms", "tpot_ms", "attainment"});
    for (const char* k : {"ttft_ms", "tpot_ms"})
    {
        if (!o.Has(k))
        {
            o.Fail(k, "a latency target in ms", "nothing");
        }
    }
    s.enabled = true;
    s.ttftMs = o.OptionalNumber("ttft_ms", 0, 1e-9, 1e9);
    s.tpotMs = o.OptionalNumber("tpot_ms", 0, 1e-9, 1e9);
    s.attainment = o.OptionalNumber("attainment", 0.9, 1e-6, 1.0);
    return s;
}

RecordSpec
ReadRecord(const std::optional<JsonObject>& j)
{
    RecordSpec r;
    if (!j)
    {
        return r;
    }
    const JsonObject& o = *j;
    o.CheckKeys({"programs", "timeline", "max_steps"});
    r.programs = o.OptionalBool("programs", false);
    r.timeline = o.OptionalBool("timeline", false);
    r.maxSteps = o.OptionalUint("max_steps", 0, 0);
    return r;
}

} // namespace

std::string
KvPlacementName(KvPlacement p)
{
    switch (p)
    {
    case KvPlacement::Hbm:
        return "hbm";
    case KvPlacement::Host:
        return "host";
    case KvPlacement::Remote:
        return "remote";
    }
    return "hbm";
}

bool
InferenceScenario::IsInference(const json& j)
{
    return j.is_object() && j.contains("serving");
}

InferenceScenario
InferenceScenario::FromJson(const json& j, const std::string& file)
{
    if (!j.is_object())
    {
        throw fabricsim::InputError(file, "", "a scenario object", DescribeJson(j));
    }
    InferenceScenario s;
    s.file = file;
    JsonObject root(j, file, "");
    for (const char* k : {"model", "hardware", "serving"})
    {
        if (!root.Has(k))
        {
            root.Fail(k, std::string("a \"") + k + "\" entry", "nothing");
        }
    }
    s.seed = root.OptionalUint("seed", 1, 0);
    s.model = ModelSpec::Load(j["model"], file, "model");
    s.hw = HardwareSpec::Load(j["hardware"], file, "hardware");
    ParallelismSpec par;
    if (const json* p = root.Find("parallelism"))
    {
        par = ParallelismSpec::FromJson(*p, file, "parallelism");
        // DeepEP's normal kernels hold ep_sms SMs beside the compute: fewer than the GPU has.
        const bool normalKernels
            = par.epBackend == EpBackend::DeepEpNormal || par.epBackend == EpBackend::DeepEpAuto;
        if (normalKernels && s.hw.sms > 0 && par.epSms >= s.hw.sms)
        {
            throw fabricsim::InputError(file,
                                        "parallelism.ep_sms",
                                        "fewer than the " + std::to_string(s.hw.sms) + " SMs of "
                                            + s.hw.name,
                                        std::to_string(par.epSms));
        }
    }

    JsonObject sv = root.Object("serving");
    sv.CheckKeys({"requests",
                  "batching",
                  "kv_cache",
                  "disaggregation",
                  "slo",
                  "execution",
                  "placement",
                  "expert_routing",
                  "record",
                  "router"});
    s.requests = RequestSpec::FromJson(
        sv.Require("requests", "a request source"), file, sv.Field("requests"), s.seed);
    BatchingSpec batching = ReadBatching(sv.OptionalObject("batching"), {});
    s.kv = ReadKvCache(sv.OptionalObject("kv_cache"));
    s.slo = ReadSlo(sv.OptionalObject("slo"));
    s.exec = ReadExecution(sv.OptionalObject("execution"));
    std::optional<JsonObject> placement = sv.OptionalObject("placement");
    s.placement = ReadPlacement(placement, j.contains("topology") ? j["topology"] : json());
    s.record = ReadRecord(sv.OptionalObject("record"));
    s.router = ReadRouter(sv.OptionalObject("router"), s.kv);
    if (const json* r = sv.Find("expert_routing"))
    {
        s.routing = RoutingModel::FromJson(*r, file, sv.Field("expert_routing"));
    }

    std::optional<JsonObject> dis = sv.OptionalObject("disaggregation");
    if (dis)
    {
        dis->CheckKeys({"enabled", "prefill", "decode", "kv_transfer"});
    }
    s.disagg.enabled = dis && dis->OptionalBool("enabled", true);
    if (s.disagg.enabled && s.model.NumLayersOf(LayerKind::Linear) > 0)
    {
        // The handoff moves KV per token; a linear layer's state would move once.
        dis->Fail("enabled",
                  "false for a model with linear-attention layers (moving their state to the "
                  "decode pool is not modelled yet)",
                  "true");
    }
    if (!s.disagg.enabled)
    {
        par.Validate(s.model, file, "parallelism");
        s.pool.par = par;
        s.pool.batching = batching;
        if (placement)
        {
            s.pool.firstHost = uint32_t(placement->OptionalUint("first_host", 0, 0));
            if (placement->Has("hosts"))
            {
                s.pool.hosts = ReadHostList(*placement, "hosts");
                if (s.pool.hosts.size() != par.WorldSize())
                {
                    placement->Fail("hosts",
                                    std::to_string(par.WorldSize()) + " hosts (tp x pp x dp)",
                                    std::to_string(s.pool.hosts.size()));
                }
            }
        }
    }
    else
    {
        for (const char* k : {"prefill", "decode"})
        {
            dis->Require(k, "a pool object");
        }
        s.disagg.prefill = ReadPool(dis->Object("prefill"), par, batching, s.model);
        JsonObject decode = dis->Object("decode");
        s.disagg.decode = ReadPool(decode, par, batching, s.model);
        if (placement && (placement->Has("hosts") || placement->Has("first_host")))
        {
            throw fabricsim::InputError(file,
                                        sv.Field("placement.hosts"),
                                        "hosts and first_host inside each disaggregation pool",
                                        "a single-pool placement");
        }
        if (!decode.Has("first_host") && s.disagg.decode.hosts.empty())
        {
            // By default the decode pool follows the prefill pool's hosts.
            s.disagg.decode.firstHost
                = s.disagg.prefill.firstHost + s.disagg.prefill.par.WorldSize();
        }
        std::string mode = dis->OptionalString("kv_transfer", "bulk");
        if (mode == "bulk")
        {
            s.disagg.transfer = KvTransferMode::Bulk;
        }
        else if (mode == "layerwise")
        {
            // Each chunk's KV is sent as computed; a sliding layer would send what its window
            // drops before decode, which the transfer does not model.
            if (s.model.NumLayersOf(LayerKind::Sliding) > 0)
            {
                dis->Fail("kv_transfer",
                          "\"bulk\" for a model with sliding-window layers (layerwise transfer "
                          "of windowed KV is not modelled yet)",
                          "\"layerwise\"");
            }
            s.disagg.transfer = KvTransferMode::Layerwise;
        }
        else
        {
            dis->Fail("kv_transfer", "\"bulk\" or \"layerwise\"", "\"" + mode + "\"");
        }
    }
    s.CheckFitsMemory();
    return s;
}

void
InferenceScenario::CheckFitsMemory() const
{
    if (requests.fromTrace)
    {
        return; // a trace is checked as it is read
    }
    // Estimated before anything is generated.
    const LengthDistribution& out = requests.output;
    const double meanOutput = std::clamp(out.Mean(), out.min, out.max);
    // A conversation of N turns is N requests, turn k repeating the 2k runs before it.
    const double turns = double(requests.conversation.turns);
    const double n = (double(requests.count) + double(requests.warmup)) * turns;
    const double contentBytes = turns > 1 ? n * (turns + 1) * double(sizeof(ContentSpan)) : 0.0;
    // The longest request sets the fewest steps a pool takes: a tail of a few deviations.
    using K = LengthDistribution::Kind;
    const double longest = out.kind == K::Constant ? out.value
                           : out.kind == K::Uniform
                               ? out.max
                               : std::min(out.max, out.mean + 4 * std::max(out.stddev, out.mean));
    CheckServingFitsMemory(n,
                           n * meanOutput,
                           MaxNumSeqs(),
                           file,
                           "serving.requests.count",
                           TimelineBytes(n * meanOutput, longest) + contentBytes);
}

double
InferenceScenario::TimelineBytes(double outputTokens, double maxOutputTokens) const
{
    if (!record.timeline)
    {
        return 0;
    }
    double steps = 0;
    double engineRanks = 1;
    for (const PoolSpec* p : Pools())
    {
        const ParallelismSpec& par = p->par;
        steps += std::max(outputTokens / std::max(1.0, double(p->batching.maxNumSeqs)),
                          maxOutputTokens);
        const double groups = par.ep > 1 && par.dpAttention ? double(par.ep) / par.tp : 1.0;
        engineRanks = std::max(engineRanks, double(par.tp) * par.pp * groups);
    }
    if (record.maxSteps > 0)
    {
        steps = std::min(steps, double(record.maxSteps));
    }
    return EstimateTimelineBytes(steps, engineRanks, double(model.numLayers));
}

double
InferenceScenario::MaxNumSeqs() const
{
    double seqs = 0;
    for (const PoolSpec* p : Pools())
    {
        seqs = seqs == 0 ? p->batching.maxNumSeqs : std::min(seqs, double(p->batching.maxNumSeqs));
    }
    return std::max(seqs, 1.0);
}

InferenceScenario
InferenceScenario::Load(const std::string& path)
{
    return FromJson(LoadJsonFile(path), path);
}

std::vector<const PoolSpec*>
InferenceScenario::Pools() const
{
    if (disagg.enabled)
    {
        return {&disagg.prefill, &disagg.decode};
    }
    return {&pool};
}

uint32_t
InferenceScenario::NumAccelerators() const
{
    uint32_t n = 0;
    for (const PoolSpec* p : Pools())
    {
        n += p->par.WorldSize();
    }
    return n;
}

} // namespace fabricsim
