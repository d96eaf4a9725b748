#include "parallelism-spec.h"

#include "input-error.h"
#include "json-read.h"

#include <numeric>

namespace fabricsim
{

using nlohmann::json;

std::string
EpBackendName(EpBackend b)
{
    switch (b)
    {
    case EpBackend::AllToAll:
        return "all-to-all";
    case EpBackend::AllGatherReduceScatter:
        return "allgather-reducescatter";
    case EpBackend::DeepEpNormal:
        return "deepep-normal";
    case EpBackend::DeepEpAuto:
        return "deepep-auto";
    case EpBackend::DeepEpLowLatency:
        return "deepep-low-latency";
    case EpBackend::TpAllReduce:
        return "tp-allreduce";
    }
    return "";
}

EpBackend
ResolveEpBackend(EpBackend b, bool prefill)
{
    if (b != EpBackend::DeepEpAuto)
    {
        return b;
    }
    return prefill ? EpBackend::DeepEpNormal : EpBackend::DeepEpLowLatency;
}

ParallelismSpec
ParallelismSpec::FromJson(const json& j, const std::string& file, const std::string& prefix)
{
    JsonObject o(j, file, prefix);
    o.CheckKeys({"tp",
                 "pp",
                 "ep",
                 "dp",
                 "dp_attention",
                 "sequence_parallel",
                 "pp_send",
                 "pp_layers",
                 "ep_backend",
                 "ep_sms"});
    ParallelismSpec p;
    p.tp = uint32_t(o.OptionalUint("tp", 1, 1));
    p.pp = uint32_t(o.OptionalUint("pp", 1, 1));
    p.ep = uint32_t(o.OptionalUint("ep", 1, 1));
    p.dp = uint32_t(o.OptionalUint("dp", 1, 1));
    p.dpAttention = o.OptionalBool("dp_attention", false);
    p.sequenceParallel = o.OptionalBool("sequence_parallel", false);
    std::string flavor = o.OptionalString("pp_send", "megatron");
    if (flavor == "megatron")
    {
        p.ppSend = PpSendFlavor::Megatron;
    }
    else if (flavor == "vllm")
    {
        p.ppSend = PpSendFlavor::Vllm;
    }
    else
    {
        throw fabricsim::InputError(
            file, o.Field("pp_send"), "\"megatron\" or \"vllm\"", "\"" + flavor + "\"");
    }
    const std::string backend = o.OptionalString("ep_backend", "all-to-all");
    bool known = false;
    for (EpBackend b : {EpBackend::AllToAll,
                        EpBackend::AllGatherReduceScatter,
                        EpBackend::DeepEpNormal,
                        EpBackend::DeepEpLowLatency,
                        EpBackend::DeepEpAuto,
                        EpBackend::TpAllReduce})
    {
        if (backend == EpBackendName(b))
        {
            p.epBackend = b;
            known = true;
        }
    }
    if (!known)
    {
        throw fabricsim::InputError(file,
                                    o.Field("ep_backend"),
                                    "\"all-to-all\", \"allgather-reducescatter\", "
                                    "\"deepep-normal\", \"deepep-low-latency\", \"deepep-auto\" "
                                    "or \"tp-allreduce\"",
                                    "\"" + backend + "\"");
    }
    // No GPU has more than a few hundred SMs (H100 132, B200 148).
    p.epSms = uint32_t(o.OptionalUint("ep_sms", 20, 1, 1024));
    for (uint64_t n : o.UintArray("pp_layers", false, 1, UINT32_MAX))
    {
        p.ppLayers.push_back(uint32_t(n));
    }
    return p;
}

void
ParallelismSpec::Validate(const ModelSpec& m,
                          const std::string& file,
                          const std::string& prefix) const
{
    auto fail = [&](const std::string& key, const std::string& expected, uint64_t found)
    {
        throw fabricsim::InputError(file, JsonPath(prefix, key), expected, std::to_string(found));
    };
    if (m.numHeads % tp != 0)
    {
        fail("tp", "a divisor of num_attention_heads " + std::to_string(m.numHeads), tp);
    }
    if (m.attention == AttentionKind::Gqa && m.numKvHeads % tp != 0 && tp % m.numKvHeads != 0)
    {
        fail("tp",
             "a divisor or multiple of num_key_value_heads " + std::to_string(m.numKvHeads),
             tp);
    }
    bool anyDense = m.NumMoeLayers() < m.numLayers;
    if (anyDense && m.intermediateSize % tp != 0)
    {
        fail("tp", "a divisor of intermediate_size " + std::to_string(m.intermediateSize), tp);
    }
    if (pp > m.numLayers)
    {
        fail("pp", "at most num_hidden_layers " + std::to_string(m.numLayers), pp);
    }
    if (!ppLayers.empty())
    {
        if (ppLayers.size() != pp)
        {
            fail("pp_layers",
                 "one entry per stage (pp = " + std::to_string(pp) + ")",
                 ppLayers.size());
        }
        uint64_t sum = std::accumulate(ppLayers.begin(), ppLayers.end(), uint64_t(0));
        if (sum != m.numLayers)
        {
            fail("pp_layers", "layer counts summing to " + std::to_string(m.numLayers), sum);
        }
    }
    if (!m.moe)
    {
        if (ep > 1)
        {
            fail("ep", "1 (the model has no experts)", ep);
        }
        if (dpAttention)
        {
            throw fabricsim::InputError(file,
                                        JsonPath(prefix, "dp_attention"),
                                        "false (DP attention needs an MoE model)",
                                        "true");
        }
        return;
    }
    uint32_t e = m.moe->numExperts;
    if (ep == 1)
    {
        if (m.moe->expertIntermediate % tp != 0)
        {
            fail("tp",
                 "a divisor of moe_intermediate_size " + std::to_string(m.moe->expertIntermediate)
                     + " (experts split by tp)",
                 tp);
        }
        if (m.moe->sharedIntermediate % tp != 0)
        {
            fail("tp",
                 "a divisor of the shared expert width "
                     + std::to_string(m.moe->sharedIntermediate),
                 tp);
        }
        return;
    }
    if (e % ep != 0)
    {
        fail("ep", "a divisor of the number of experts " + std::to_string(e), ep);
    }
    if (epBackend == EpBackend::TpAllReduce && (ep != tp || dpAttention))
    {
        // Every rank of the EP group holds the same tokens only when it is the TP group.
        fail("ep",
             "tp = " + std::to_string(tp)
                 + " without dp_attention for ep_backend tp-allreduce (the experts sharded "
                   "over the TP group)",
             ep);
    }
    if (!dpAttention && ep != tp)
    {
        fail("ep",
             "1 or tp = " + std::to_string(tp) + " (or set dp_attention for EP across dp)",
             ep);
    }
    if (dpAttention && (ep % tp != 0 || dp % (ep / tp) != 0))
    {
        fail("ep",
             "tp x m with m dividing dp (tp = " + std::to_string(tp)
                 + ", dp = " + std::to_string(dp) + ")",
             ep);
    }
}

uint32_t
ParallelismSpec::WorldSize() const
{
    return tp * pp * dp;
}

std::vector<uint32_t>
ParallelismSpec::LayersPerStage(const ModelSpec& m) const
{
    if (!ppLayers.empty())
    {
        return ppLayers;
    }
    std::vector<uint32_t> out(pp, m.numLayers / pp);
    uint32_t extra = m.numLayers % pp;
    for (uint32_t i = 0; i < extra; ++i)
    {
        out[pp - 2 - i] += 1;
    }
    return out;
}

uint32_t
ParallelismSpec::FirstLayer(const ModelSpec& m, uint32_t stage) const
{
    auto layers = LayersPerStage(m);
    uint32_t first = 0;
    for (uint32_t s = 0; s < stage && s < layers.size(); ++s)
    {
        first += layers[s];
    }
    return first;
}

uint32_t
ParallelismSpec::ExpertsPerRank(const ModelSpec& m) const
{
    return m.moe ? m.moe->numExperts / ep : 0;
}

uint32_t
ParallelismSpec::ExpertTp() const
{
    return ep > 1 ? 1 : tp;
}

uint32_t
ParallelismSpec::AttentionGroupsPerEpGroup() const
{
    return ep > 1 ? ep / tp : 1;
}

} // namespace fabricsim
