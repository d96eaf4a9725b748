#include "measured-run-config.h"

#include "file-reader.h"
#include "hardware-spec.h"
#include "input-error.h"
#include "json-reader.h"
#include "model-spec.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>

namespace fabricsim
{

namespace
{

using nlohmann::json;

/// Letters and digits of \p s, lower case.
std::string
Squeeze(const std::string& s)
{
    std::string out;
    for (unsigned char c : s)
    {
        if (std::isalnum(c))
        {
            out += char(std::tolower(c));
        }
    }
    return out;
}

/// The memory size a GPU name states as a word of digits and "GB" ("A100-SXM4-40GB": 40); 0
/// when it states none.
double
StatedMemoryGb(const std::string& device)
{
    for (size_t i = 0; i + 1 < device.size(); ++i)
    {
        if (std::tolower((unsigned char)device[i]) != 'g'
            || std::tolower((unsigned char)device[i + 1]) != 'b')
        {
            continue;
        }
        size_t start = i;
        while (start > 0 && std::isdigit((unsigned char)device[start - 1]))
        {
            --start;
        }
        const bool word
            = start < i && (start == 0 || !std::isalnum((unsigned char)device[start - 1]));
        if (word && i - start <= 6)
        {
            return std::strtod(device.substr(start, i - start).c_str(), nullptr);
        }
    }
    return 0;
}

/// \p s without the vendor and brand words runs put before the part name.
std::string
WithoutVendor(std::string s)
{
    for (const char* prefix : {"nvidia", "geforce", "amd", "instinct"})
    {
        const std::string p(prefix);
        if (s.compare(0, p.size(), p) == 0)
        {
            s.erase(0, p.size());
        }
    }
    return s;
}

std::string
LastComponent(std::string path)
{
    while (path.size() > 1 && path.back() == '/')
    {
        path.pop_back();
    }
    const size_t slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

/// The GPU named by config.json (LLMServingSim's cluster config): nodes[].instances[].hardware,
/// the first one; "" when the file or the key is absent.
std::string
ConfigJsonHardware(const std::string& path)
{
    if (!IsReadableRegularFile(path))
    {
        return "";
    }
    const json doc = ParseJson(ReadFileBounded(path, "LLMServingSim cluster config (JSON)"), path);
    if (!doc.is_object() || !doc.contains("nodes") || !doc["nodes"].is_array())
    {
        return "";
    }
    for (const json& node : doc["nodes"])
    {
        if (!node.is_object() || !node.contains("instances") || !node["instances"].is_array())
        {
            continue;
        }
        for (const json& inst : node["instances"])
        {
            const std::string hw = JsonObject::MemberString(inst, "hardware");
            if (!hw.empty())
            {
                return hw;
            }
        }
    }
    return "";
}

/// Engine setting \p key of \p kw as an integer, or \p def (noted in \p run.assumed) when the run
/// does not record it.
uint64_t
EngineUint(const JsonObject& kw,
           const std::string& key,
           uint64_t def,
           uint64_t min,
           uint64_t max,
           MeasuredRunConfig& run)
{
    if (!kw.Has(key))
    {
        run.assumed.push_back(key);
    }
    return kw.OptionalUint(key, def, min, max);
}

} // namespace

MeasuredRunConfig
ReadMeasuredRunConfig(const std::string& runDir)
{
    MeasuredRunConfig run;
    run.dir = runDir;
    run.label = LastComponent(runDir);
    run.metaPath = runDir + "/vllm/meta.json";
    const std::string& meta = run.metaPath;
    const json doc = ParseJson(ReadFileBounded(meta, "vLLM run metadata (meta.json)"), meta);
    const JsonObject root(doc, meta, "");
    run.model = root.String("model");
    run.vllmVersion = root.OptionalString("vllm_version", "");

    const JsonObject kw = root.Object("engine_kwargs");
    const uint64_t k32 = UINT32_MAX;
    run.tp = uint32_t(EngineUint(kw, "tensor_parallel_size", 1, 1, 4096, run));
    run.pp = uint32_t(kw.OptionalUint("pipeline_parallel_size", 1, 1, 4096));
    run.dp = uint32_t(EngineUint(kw, "data_parallel_size", 1, 1, 4096, run));
    if (uint64_t(run.tp) * run.pp * run.dp > 65535)
    {
        kw.Fail("tensor_parallel_size", "tp x pp x dp of at most 65535 GPUs", "more");
    }
    run.expertParallel = kw.OptionalBool("enable_expert_parallel", false);
    // vLLM's defaults for these depend on the GPU and the entry point; a run that does not
    // record them is replayed at the V1 LLM-class defaults and says so.
    run.maxNumSeqs = uint32_t(EngineUint(kw, "max_num_seqs", 256, 1, k32, run));
    run.maxNumBatchedTokens = uint32_t(EngineUint(kw, "max_num_batched_tokens", 8192, 1, k32, run));
    run.chunkedPrefill = kw.OptionalBool("enable_chunked_prefill", true);
    run.dtype = kw.OptionalString("dtype", "auto");
    run.kvCacheDtype = kw.OptionalString("kv_cache_dtype", "auto");
    run.quantization = kw.OptionalString("quantization", "");
    run.seed = kw.OptionalUint("seed", 0);
    run.blockSize = uint32_t(kw.OptionalUint("block_size", 16, 1, 1 << 20));
    run.gpuMemoryUtilization = kw.OptionalNumber("gpu_memory_utilization", 0.9, 0.01, 1.0);
    run.prefixCaching = kw.OptionalBool("enable_prefix_caching", true);

    // Runs recorded later carry what the engine resolved: the KV cache it allocated and the GPU.
    if (const auto kv = root.OptionalObject("kv_cache"))
    {
        run.blockSize = uint32_t(kv->OptionalUint("block_size", run.blockSize, 1, 1 << 20));
        run.gpuMemoryUtilization
            = kv->OptionalNumber("gpu_memory_utilization", run.gpuMemoryUtilization, 0.01, 1.0);
        run.numGpuBlocks = kv->OptionalUint("num_gpu_blocks", 0, 1, k32);
        run.prefixCaching = kv->OptionalBool("enable_prefix_caching", run.prefixCaching);
    }
    if (const auto resolved = root.OptionalObject("resolved_config"))
    {
        if (const auto pc = resolved->OptionalObject("parallel_config"))
        {
            run.all2allBackend = pc->OptionalString("all2all_backend", run.all2allBackend);
        }
    }
    if (run.all2allBackend != "allgather_reducescatter")
    {
        throw InputError(meta,
                         "resolved_config.parallel_config.all2all_backend",
                         "allgather_reducescatter (naive, DeepEP and pplx are not modelled in "
                         "the serving loop yet)",
                         "\"" + run.all2allBackend + "\"");
    }
    if (const auto hw = root.OptionalObject("hardware"); hw && hw->Has("device_name"))
    {
        run.device = hw->String("device_name");
        run.deviceSource = "meta.json hardware.device_name";
    }
    else
    {
        const std::string cfg = runDir + "/config.json";
        run.device = ConfigJsonHardware(cfg);
        run.deviceSource = "config.json nodes[].instances[].hardware";
        if (run.device.empty())
        {
            throw InputError(meta,
                             "hardware.device_name",
                             "the GPU the run used (here, or as nodes[].instances[].hardware in "
                                 + cfg + ")",
                             "neither");
        }
    }

    static const std::vector<std::string> kDtypes = {"auto", "bfloat16", "float16", "half"};
    if (std::find(kDtypes.begin(), kDtypes.end(), run.dtype) == kDtypes.end())
    {
        kw.Fail("dtype", "auto, bfloat16, float16 or half", "\"" + run.dtype + "\"");
    }
    static const std::vector<std::string> kKvDtypes
        = {"auto", "bfloat16", "float16", "fp8", "fp8_e4m3", "fp8_e5m2"};
    if (std::find(kKvDtypes.begin(), kKvDtypes.end(), run.kvCacheDtype) == kKvDtypes.end())
    {
        kw.Fail("kv_cache_dtype",
                "auto, bfloat16, float16, fp8, fp8_e4m3 or fp8_e5m2",
                "\"" + run.kvCacheDtype + "\"");
    }
    if (!run.quantization.empty() && run.quantization != "fp8")
    {
        kw.Fail("quantization", "none or fp8", "\"" + run.quantization + "\"");
    }
    return run;
}

std::optional<std::string>
HardwarePresetForDevice(const std::string& device)
{
    const std::string name = WithoutVendor(Squeeze(device));
    if (name == "rtxpro6000")
    {
        return std::string("RTX-PRO-6000-Server");
    }
    // Words that make another part of the same number (other memory, clocks or power): a name
    // with one matches only a preset named with it.
    static const char* const kVariants[] = {"server", "pcie", "nvl", "maxq"};
    std::optional<std::string> best;
    size_t bestLen = 0;
    for (const std::string& preset : HardwareSpec::PresetNames())
    {
        const std::string p = WithoutVendor(Squeeze(preset));
        std::string base = p;
        std::string suffix;
        for (const char* v : kVariants)
        {
            const std::string w(v);
            if (base.size() > w.size() && base.compare(base.size() - w.size(), w.size(), w) == 0)
            {
                suffix = w;
                base.erase(base.size() - w.size());
                break;
            }
        }
        if (name.compare(0, base.size(), base) != 0)
        {
            continue;
        }
        const std::string rest = name.substr(base.size());
        bool variantMismatch = false;
        for (const char* v : kVariants)
        {
            const bool inName = rest.find(v) != std::string::npos;
            variantMismatch = variantMismatch || inName != (suffix == v);
        }
        // A memory size in the name ("40GB") must be the preset's.
        if (const double stated = StatedMemoryGb(device); stated > 0)
        {
            const double capacity = HardwareSpec::Preset(preset).hbmCapacityBytes / 1e9;
            variantMismatch = variantMismatch || std::fabs(stated - capacity) > 0.1 * capacity;
        }
        if (variantMismatch)
        {
            continue;
        }
        if (p.size() > bestLen)
        {
            best = preset;
            bestLen = p.size();
        }
    }
    return best;
}

nlohmann::json
MeasuredRunScenario(const MeasuredRunConfig& run, const std::string& tracePath)
{
    const std::optional<std::string> hwPreset = HardwarePresetForDevice(run.device);
    if (!hwPreset)
    {
        std::string known;
        for (const std::string& p : HardwareSpec::PresetNames())
        {
            known += (known.empty() ? "" : ", ") + p;
        }
        throw InputError(run.metaPath,
                         run.deviceSource,
                         "a GPU with a hardware preset (" + known + ")",
                         "\"" + run.device + "\"");
    }
    ModelSpec model;
    try
    {
        model = ModelSpec::Preset(run.model);
    }
    catch (const InputError& e)
    {
        throw InputError(run.metaPath,
                         "model",
                         "a model with a preset: " + e.Expected(),
                         "\"" + run.model + "\"");
    }
    json modelField = run.model;
    json overrides = json::object();
    if (run.dtype == "float16" || run.dtype == "half")
    {
        overrides["torch_dtype"] = "float16";
    }
    if (run.kvCacheDtype.rfind("fp8", 0) == 0)
    {
        overrides["kv_cache_dtype"] = "fp8";
    }
    if (run.quantization == "fp8")
    {
        overrides["weight_dtype"] = "fp8";
    }
    if (!overrides.empty())
    {
        overrides["preset"] = run.model;
        modelField = overrides;
    }
    return ServingReplayScenario(run, *hwPreset, model, modelField, {{"trace", tracePath}});
}

nlohmann::json
ServingReplayScenario(const MeasuredRunConfig& run,
                      const std::string& hwPreset,
                      const ModelSpec& model,
                      const nlohmann::json& modelField,
                      const nlohmann::json& requests)
{
    const HardwareSpec hw = HardwareSpec::Preset(hwPreset);
    json par = {{"tp", run.tp}, {"pp", run.pp}, {"dp", run.dp}};
    if (model.moe)
    {
        if (run.dp > 1 && !run.expertParallel)
        {
            throw InputError(run.metaPath,
                             "engine_kwargs.enable_expert_parallel",
                             "true for a MoE model with data_parallel_size > 1 (without it vLLM "
                             "shards every expert over dp x tp GPUs, which is not modelled)",
                             "false");
        }
        if (run.expertParallel && run.tp * run.dp > 1)
        {
            // vLLM's enable_expert_parallel: the MoE layers run expert-parallel over all the
            // tp x dp GPUs of a stage; attention stays data-parallel between the dp groups.
            par["ep"] = run.tp * run.dp;
            par["dp_attention"] = run.dp > 1;
            // vLLM runs its all-to-all kernels only at dp > 1 (use_all2all_kernels: dp_size > 1
            // and use_ep). There, without DeepEP, it gathers every token to every EP rank and
            // reduce-scatters the results back; at dp 1 the experts are sharded over the TP
            // group, every rank runs every token and one all-reduce sums the MoE output.
            par["ep_backend"] = run.dp > 1 ? "allgather-reducescatter" : "tp-allreduce";
        }
    }

    json kv = {{"block_size", run.blockSize}, {"gpu_memory_utilization", run.gpuMemoryUtilization}};
    if (run.numGpuBlocks > 0)
    {
        kv["num_blocks"] = run.numGpuBlocks;
    }

    // The GPUs of one machine on one switch: a PCIe switch (or root complex) at x16 for
    // workstation cards, whose preset scale-up bandwidth is PCIe's. Lossless, as PCIe is. The
    // links run at the bus bandwidth collectives reach over them where the preset has a
    // measurement (NCCL over PCIe takes a fraction of the link), else at the link rate.
    const double linkBytesPerSec = hw.collectiveBwBytesPerSec > 0 ? hw.collectiveBwBytesPerSec
                                   : hw.scaleUpBwBytesPerSec > 0  ? hw.scaleUpBwBytesPerSec
                                                                  : hw.nicBwBytesPerSec;
    char rate[64];
    std::snprintf(rate, sizeof rate, "%.6gGbps", linkBytesPerSec * 8 / 1e9);
    json topo = {{"type", "single-switch"},
                 {"hosts", run.Gpus()},
                 {"host_link", {{"rate", rate}, {"delay", "1us"}}}};

    json sc = {{"name",
                "measured vLLM run " + run.label + ": " + run.model + " on "
                    + std::to_string(run.Gpus()) + " x " + hwPreset},
               {"seed", run.seed == 0 ? 1 : run.seed},
               {"model", modelField},
               {"hardware", hwPreset},
               {"parallelism", par},
               {"serving",
                {{"requests", requests},
                 {"batching",
                  {{"max_num_batched_tokens", run.maxNumBatchedTokens},
                   {"max_num_seqs", run.maxNumSeqs},
                   {"chunked_prefill", run.chunkedPrefill}}},
                 {"kv_cache", kv},
                 // vLLM captures decode graphs up to min(2 x max_num_seqs, 512) sequences.
                 {"execution",
                  {{"cuda_graph_max_batch", std::min<uint64_t>(2ULL * run.maxNumSeqs, 512)}}}}},
               {"topology", topo},
               {"transport", {{"cc", "none"}, {"pfc", true}}}};
    return sc;
}

std::string
ArrivalTrace(const std::vector<MeasuredRequest>& reqs)
{
    const std::vector<size_t> order = ArrivalOrder(reqs);
    const std::vector<double> t = ReplayArrivals(reqs);
    std::string out;
    char line[160];
    for (size_t i : order)
    {
        std::snprintf(line,
                      sizeof line,
                      "{\"arrival_s\": %.9f, \"prompt_tokens\": %llu, \"output_tokens\": %llu}\n",
                      t[i],
                      static_cast<unsigned long long>(reqs[i].inputTokens),
                      static_cast<unsigned long long>(reqs[i].outputTokens));
        out += line;
    }
    return out;
}

} // namespace fabricsim
