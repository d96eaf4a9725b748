#include "inference-scenario.h"

#include "input-error.h"
#include "json-read.h"

#include <algorithm>
#include <set>

namespace fabricsim
{

using nlohmann::json;

namespace
{

std::vector<uint32_t>
ReadHostList(const json& v, const JsonWhere& w, const std::string& key)
{
    if (!v.is_array() || v.empty())
    {
        throw fabricsim::InputError(
            w.file, w.Field(key), "a non-empty array of host indexes", DescribeJson(v));
    }
    std::vector<uint32_t> out;
    std::set<uint32_t> seen;
    for (size_t i = 0; i < v.size(); ++i)
    {
        const uint32_t h
            = uint32_t(JsonObject::ToUint(v[i], w.file, JsonIndex(w.Field(key), i), 0, UINT32_MAX));
        if (!seen.insert(h).second)
        {
            throw fabricsim::InputError(w.file,
                                        JsonIndex(w.Field(key), i),
                                        "distinct host indexes",
                                        "host " + std::to_string(h) + " twice");
        }
        out.push_back(h);
    }
    return out;
}

BatchingSpec
ReadBatching(const json* j, const JsonWhere& w, const BatchingSpec& def)
{
    BatchingSpec b = def;
    if (!j)
    {
        return b;
    }
    JsonObject(*j, w.file, w.prefix)
        .CheckKeys({"max_num_batched_tokens", "max_num_seqs", "chunked_prefill"});
    b.maxNumBatchedTokens
        = uint32_t(JsonObject(*j, w.file, w.prefix)
                       .OptionalUint("max_num_batched_tokens", def.maxNumBatchedTokens, 1));
    b.maxNumSeqs = uint32_t(
        JsonObject(*j, w.file, w.prefix).OptionalUint("max_num_seqs", def.maxNumSeqs, 1));
    b.chunkedPrefill
        = JsonObject(*j, w.file, w.prefix).OptionalBool("chunked_prefill", def.chunkedPrefill);
    return b;
}

PoolSpec
ReadPool(const json& j,
         const JsonWhere& w,
         const ParallelismSpec& defPar,
         const BatchingSpec& defBatching,
         const ModelSpec& model)
{
    JsonObject(j, w.file, w.prefix).CheckKeys({"parallelism", "hosts", "first_host", "batching"});
    PoolSpec p;
    p.par = defPar;
    if (const json* par = FindField(j, "parallelism"))
    {
        p.par = ParallelismSpec::FromJson(*par, w.file, w.Field("parallelism"));
    }
    p.par.Validate(model, w.file, w.Field("parallelism"));
    p.batching = ReadBatching(FindField(j, "batching"), w.Child("batching"), defBatching);
    p.firstHost = uint32_t(JsonObject(j, w.file, w.prefix).OptionalUint("first_host", 0, 0));
    if (const json* h = FindField(j, "hosts"))
    {
        p.hosts = ReadHostList(*h, w, "hosts");
        if (p.hosts.size() != p.par.WorldSize())
        {
            throw fabricsim::InputError(w.file,
                                        w.Field("hosts"),
                                        std::to_string(p.par.WorldSize()) + " hosts (tp x pp x dp)",
                                        std::to_string(p.hosts.size()));
        }
    }
    return p;
}

KvCacheSpec
ReadKvCache(const json* j, const JsonWhere& w)
{
    KvCacheSpec kv;
    if (!j)
    {
        return kv;
    }
    JsonObject(*j, w.file, w.prefix)
        .CheckKeys({"placement",
                    "block_size",
                    "gpu_memory_utilization",
                    "num_blocks",
                    "capacity",
                    "bandwidth",
                    "pool_hosts"});
    std::string place = JsonObject(*j, w.file, w.prefix).OptionalString("placement", "hbm");
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
            w.file, w.Field("placement"), "\"hbm\", \"host\" or \"remote\"", "\"" + place + "\"");
    }
    kv.blockSize = uint32_t(JsonObject(*j, w.file, w.prefix).OptionalUint("block_size", 16, 1));
    kv.gpuMemoryUtilization
        = JsonObject(*j, w.file, w.prefix).OptionalNumber("gpu_memory_utilization", 0.9, 0.01, 1.0);
    kv.numBlocksOverride = JsonObject(*j, w.file, w.prefix).OptionalUint("num_blocks", 0, 1);
    if (const json* c = FindField(*j, "capacity"))
    {
        kv.tierCapacityBytes = ReadQuantity(*c, UnitKind::Bytes, w.file, w.Field("capacity"));
    }
    if (const json* b = FindField(*j, "bandwidth"))
    {
        if (kv.placement == KvPlacement::Remote)
        {
            throw fabricsim::InputError(w.file,
                                        w.Field("bandwidth"),
                                        "no bandwidth for a remote pool (the fabric sets it)",
                                        DescribeJson(*b));
        }
        kv.tierBwBytesPerSec
            = ReadQuantity(*b, UnitKind::BytesPerSec, w.file, w.Field("bandwidth"));
    }
    if (const json* p = FindField(*j, "pool_hosts"))
    {
        kv.poolHosts = ReadHostList(*p, w, "pool_hosts");
    }
    if (kv.placement == KvPlacement::Remote && kv.poolHosts.empty())
    {
        throw fabricsim::InputError(w.file,
                                    w.Field("pool_hosts"),
                                    "the hosts of the remote KV pool (placement \"remote\")",
                                    "nothing");
    }
    if (kv.placement != KvPlacement::Remote && !kv.poolHosts.empty())
    {
        throw fabricsim::InputError(w.file,
                                    w.Field("pool_hosts"),
                                    "no pool hosts unless placement is \"remote\"",
                                    DescribeJson(j->at("pool_hosts")));
    }
    return kv;
}

ExecutionSpec
ReadExecution(const json* j, const JsonWhere& w)
{
    ExecutionSpec e;
    if (!j)
    {
        return e;
    }
    JsonObject(*j, w.file, w.prefix)
        .CheckKeys({"ep_overlap", "cuda_graphs", "cuda_graph_max_batch", "graph_kernel_overhead"});
    std::string ov = JsonObject(*j, w.file, w.prefix).OptionalString("ep_overlap", "none");
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
            w.file, w.Field("ep_overlap"), "\"none\" or \"two_batch\"", "\"" + ov + "\"");
    }
    e.cudaGraphs = JsonObject(*j, w.file, w.prefix).OptionalBool("cuda_graphs", true);
    e.cudaGraphMaxBatch
        = uint32_t(JsonObject(*j, w.file, w.prefix).OptionalUint("cuda_graph_max_batch", 512, 1));
    if (const json* g = FindField(*j, "graph_kernel_overhead"))
    {
        e.graphKernelOverheadSec
            = ReadQuantity(*g, UnitKind::Seconds, w.file, w.Field("graph_kernel_overhead"), true);
    }
    return e;
}

PlacementSpec
ReadPlacement(const json* j, const JsonWhere& w, const json& topology)
{
    PlacementSpec p;
    // A rail-optimised topology tells how many accelerators a server has and how many hosts exist.
    if (topology.is_object())
    {
        auto positive = [&](const char* key) -> uint64_t
        {
            const json* v = FindField(topology, key);
            return v && v->is_number_integer() && v->get<int64_t>() > 0 ? v->get<uint64_t>() : 0;
        };
        uint64_t a = positive("accels_per_server");
        uint64_t s = positive("servers");
        if (a > 0 && s > 0)
        {
            p.accelsPerServer = uint32_t(a);
            p.numHosts = uint32_t(a * s);
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
    JsonObject(*j, w.file, w.prefix).CheckKeys({"tp", "accels_per_server", "first_host", "hosts"});
    std::string tp = JsonObject(*j, w.file, w.prefix).OptionalString("tp", "scale_up");
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
            w.file, w.Field("tp"), "\"scale_up\" or \"across_servers\"", "\"" + tp + "\"");
    }
    p.accelsPerServer = uint32_t(
        JsonObject(*j, w.file, w.prefix).OptionalUint("accels_per_server", p.accelsPerServer, 1));
    return p;
}

SloSpec
ReadSlo(const json* j, const JsonWhere& w)
{
    SloSpec s;
    if (!j)
    {
        return s;
    }
    JsonObject(*j, w.file, w.prefix).CheckKeys({"ttft_ms", "tpot_ms", "attainment"});
    for (const char* k : {"ttft_ms", "tpot_ms"})
    {
        if (!FindField(*j, k))
        {
            throw fabricsim::InputError(w.file, w.Field(k), "a latency target in ms", "nothing");
        }
    }
    s.enabled = true;
    s.ttftMs = JsonObject(*j, w.file, w.prefix).OptionalNumber("ttft_ms", 0, 1e-9, 1e9);
    s.tpotMs = JsonObject(*j, w.file, w.prefix).OptionalNumber("tpot_ms", 0, 1e-9, 1e9);
    s.attainment = JsonObject(*j, w.file, w.prefix).OptionalNumber("attainment", 0.9, 1e-6, 1.0);
    return s;
}

RecordSpec
ReadRecord(const json* j, const JsonWhere& w)
{
    RecordSpec r;
    if (!j)
    {
        return r;
    }
    JsonObject(*j, w.file, w.prefix).CheckKeys({"programs", "timeline", "max_steps"});
    r.programs = JsonObject(*j, w.file, w.prefix).OptionalBool("programs", false);
    r.timeline = JsonObject(*j, w.file, w.prefix).OptionalBool("timeline", false);
    r.maxSteps = JsonObject(*j, w.file, w.prefix).OptionalUint("max_steps", 0, 0);
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
    JsonWhere root{file, ""};
    for (const char* k : {"model", "hardware", "serving"})
    {
        if (!FindField(j, k))
        {
            throw fabricsim::InputError(file, k, std::string("a \"") + k + "\" entry", "nothing");
        }
    }
    s.seed = JsonObject(j, root.file, root.prefix).OptionalUint("seed", 1, 0);
    s.model = ModelSpec::Load(j["model"], file, "model");
    s.hw = HardwareSpec::Load(j["hardware"], file, "hardware");
    ParallelismSpec par;
    if (const json* p = FindField(j, "parallelism"))
    {
        par = ParallelismSpec::FromJson(*p, file, "parallelism");
    }

    const json& sv = j["serving"];
    JsonWhere w{file, "serving"};
    JsonObject(sv, w.file, w.prefix)
        .CheckKeys({"requests",
                    "batching",
                    "kv_cache",
                    "disaggregation",
                    "slo",
                    "execution",
                    "placement",
                    "expert_routing",
                    "record"});
    if (!FindField(sv, "requests"))
    {
        throw fabricsim::InputError(file, w.Field("requests"), "a request source", "nothing");
    }
    s.requests = RequestSpec::FromJson(sv["requests"], file, w.Field("requests"), s.seed);
    BatchingSpec batching = ReadBatching(FindField(sv, "batching"), w.Child("batching"), {});
    s.kv = ReadKvCache(FindField(sv, "kv_cache"), w.Child("kv_cache"));
    s.slo = ReadSlo(FindField(sv, "slo"), w.Child("slo"));
    s.exec = ReadExecution(FindField(sv, "execution"), w.Child("execution"));
    s.placement = ReadPlacement(FindField(sv, "placement"),
                                w.Child("placement"),
                                j.contains("topology") ? j["topology"] : json());
    s.record = ReadRecord(FindField(sv, "record"), w.Child("record"));
    if (const json* r = FindField(sv, "expert_routing"))
    {
        s.routing = RoutingModel::FromJson(*r, file, w.Field("expert_routing"));
    }

    const json* dis = FindField(sv, "disaggregation");
    JsonWhere dw = w.Child("disaggregation");
    if (dis)
    {
        JsonObject(*dis, dw.file, dw.prefix)
            .CheckKeys({"enabled", "prefill", "decode", "kv_transfer"});
    }
    s.disagg.enabled = dis && JsonObject(*dis, dw.file, dw.prefix).OptionalBool("enabled", true);
    if (!s.disagg.enabled)
    {
        par.Validate(s.model, file, "parallelism");
        s.pool.par = par;
        s.pool.batching = batching;
        if (const json* pl = FindField(sv, "placement"))
        {
            JsonWhere pw = w.Child("placement");
            s.pool.firstHost
                = uint32_t(JsonObject(*pl, pw.file, pw.prefix).OptionalUint("first_host", 0, 0));
            if (const json* hosts = FindField(*pl, "hosts"))
            {
                s.pool.hosts = ReadHostList(*hosts, pw, "hosts");
                if (s.pool.hosts.size() != par.WorldSize())
                {
                    throw fabricsim::InputError(file,
                                                pw.Field("hosts"),
                                                std::to_string(par.WorldSize())
                                                    + " hosts (tp x pp x dp)",
                                                std::to_string(s.pool.hosts.size()));
                }
            }
        }
    }
    else
    {
        for (const char* k : {"prefill", "decode"})
        {
            if (!FindField(*dis, k))
            {
                throw fabricsim::InputError(file, dw.Field(k), "a pool object", "nothing");
            }
        }
        s.disagg.prefill = ReadPool((*dis)["prefill"], dw.Child("prefill"), par, batching, s.model);
        s.disagg.decode = ReadPool((*dis)["decode"], dw.Child("decode"), par, batching, s.model);
        if (const json* pl = FindField(sv, "placement");
            pl && (FindField(*pl, "hosts") || FindField(*pl, "first_host")))
        {
            throw fabricsim::InputError(file,
                                        w.Field("placement.hosts"),
                                        "hosts and first_host inside each disaggregation pool",
                                        "a single-pool placement");
        }
        if (!FindField((*dis)["decode"], "first_host") && s.disagg.decode.hosts.empty())
        {
            // By default the decode pool follows the prefill pool's hosts.
            s.disagg.decode.firstHost
                = s.disagg.prefill.firstHost + s.disagg.prefill.par.WorldSize();
        }
        std::string mode
            = JsonObject(*dis, dw.file, dw.prefix).OptionalString("kv_transfer", "bulk");
        if (mode == "bulk")
        {
            s.disagg.transfer = KvTransferMode::Bulk;
        }
        else if (mode == "layerwise")
        {
            s.disagg.transfer = KvTransferMode::Layerwise;
        }
        else
        {
            throw fabricsim::InputError(
                file, dw.Field("kv_transfer"), "\"bulk\" or \"layerwise\"", "\"" + mode + "\"");
        }
    }
    return s;
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
