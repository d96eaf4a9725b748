#include "step-program.h"

#include "input-error.h"
#include "json-describe.h"

#include <stdexcept>

namespace fabricsim
{

using nlohmann::json;

namespace
{

const char* const kCommOpNames[] = {"all_reduce",
                                    "reduce_scatter",
                                    "all_gather",
                                    "all_to_all",
                                    "gather",
                                    "send",
                                    "recv",
                                    "kv_fetch",
                                    "kv_send"};

json
DepsToJson(const StepDependencies& d)
{
    json j = json::object();
    if (!d.afterSteps.empty())
    {
        j["after_steps"] = d.afterSteps;
    }
    if (!d.afterTransfers.empty())
    {
        j["after_transfers"] = d.afterTransfers;
    }
    if (d.notBeforePs > 0)
    {
        j["not_before_ps"] = d.notBeforePs;
    }
    return j;
}

StepDependencies
DepsFromJson(const JsonObject& record)
{
    StepDependencies d;
    if (std::optional<JsonObject> j = record.OptionalObject("deps"))
    {
        d.afterSteps = j->UintArray("after_steps", false);
        d.afterTransfers = j->UintArray("after_transfers", false);
        d.notBeforePs = j->OptionalInt("not_before_ps", 0, 0, INT64_MAX);
    }
    return d;
}

} // namespace

std::string
CommOpName(CommOp op)
{
    return kCommOpNames[size_t(op)];
}

std::optional<CommOp>
ParseCommOp(const std::string& name)
{
    for (size_t i = 0; i < sizeof(kCommOpNames) / sizeof(kCommOpNames[0]); ++i)
    {
        if (name == kCommOpNames[i])
        {
            return CommOp(i);
        }
    }
    return std::nullopt;
}

json
ProgramItem::ToJson() const
{
    json j;
    if (stream != 0)
    {
        j["s"] = stream;
    }
    if (!name.empty())
    {
        j["name"] = name;
    }
    if (layer >= 0)
    {
        j["layer"] = layer;
    }
    switch (type)
    {
    case Type::Compute:
        j["t"] = "c";
        j["ps"] = durationPs;
        j["flops"] = flops;
        j["hbm_bytes"] = hbmBytes;
        break;
    case Type::Wait:
        j["t"] = "w";
        j["key"] = key;
        break;
    case Type::Comm:
        j["t"] = "x";
        j["op"] = CommOpName(op);
        j["cat"] = category;
        j["key"] = key;
        j["group"] = group;
        j["gi"] = groupIndex;
        j["bytes"] = bytes;
        if (!row.empty())
        {
            j["row"] = row;
        }
        if (kernelLaunchPs >= 0)
        {
            j["kernel_launch_ps"] = kernelLaunchPs;
        }
        if (kernelMinPs > 0)
        {
            j["kernel_min_ps"] = kernelMinPs;
        }
        if (kernelFillPs > 0)
        {
            j["kernel_fill_ps"] = kernelFillPs;
        }
        if (smShare > 0)
        {
            j["sm_share"] = smShare;
        }
        if (async)
        {
            j["async"] = true;
        }
        if (detached)
        {
            j["detached"] = true;
        }
        if (transferId >= 0)
        {
            j["transfer"] = transferId;
        }
        if (fetchFrom >= 0)
        {
            j["from"] = fetchFrom;
        }
        if (tierBwBytesPerSec > 0)
        {
            j["tier_bw"] = tierBwBytesPerSec;
        }
        break;
    }
    return j;
}

ProgramItem
ProgramItem::FromJson(const JsonObject& j)
{
    ProgramItem it;
    const std::string t = j.String("t");
    it.stream = uint32_t(j.OptionalUint("s", 0, 0, UINT32_MAX));
    it.name = j.OptionalString("name", "");
    it.layer = int32_t(j.OptionalInt("layer", -1, -1, INT32_MAX));
    if (t == "c")
    {
        it.type = Type::Compute;
        it.durationPs = j.Int("ps", 0, INT64_MAX);
        it.flops = j.OptionalNumber("flops", 0, 0, 1e300);
        it.hbmBytes = j.OptionalNumber("hbm_bytes", 0, 0, 1e300);
    }
    else if (t == "w")
    {
        it.type = Type::Wait;
        it.key = j.String("key");
    }
    else if (t == "x")
    {
        it.type = Type::Comm;
        const std::string opName = j.String("op");
        auto op = ParseCommOp(opName);
        if (!op)
        {
            j.Fail("op", "a communication op", "\"" + opName + "\"");
        }
        it.op = *op;
        it.category = j.String("cat");
        it.key = j.String("key");
        for (uint64_t h : j.UintArray("group", true, 0, UINT32_MAX))
        {
            it.group.push_back(uint32_t(h));
        }
        it.groupIndex = uint32_t(j.Uint("gi", 0, UINT32_MAX));
        it.bytes = j.Uint("bytes");
        it.row = j.UintArray("row", false);
        it.kernelLaunchPs = j.OptionalInt("kernel_launch_ps", -1, -1, INT64_MAX);
        it.kernelMinPs = j.OptionalInt("kernel_min_ps", 0, 0, INT64_MAX);
        it.kernelFillPs = j.OptionalInt("kernel_fill_ps", 0, 0, INT64_MAX);
        it.smShare = j.OptionalNumber("sm_share", 0, 0, 1);
        it.async = j.OptionalBool("async", false);
        it.detached = j.OptionalBool("detached", false);
        it.transferId = j.OptionalInt("transfer", -1, -1, INT64_MAX);
        it.fetchFrom = j.OptionalInt("from", -1, -1, INT64_MAX);
        it.tierBwBytesPerSec = j.OptionalNumber("tier_bw", 0, 0, 1e300);
        if (it.groupIndex >= it.group.size() && it.op != CommOp::KvFetch)
        {
            j.Fail("gi",
                   "an index into its group of " + std::to_string(it.group.size()),
                   std::to_string(it.groupIndex));
        }
    }
    else
    {
        j.Fail("t", "an item type (\"c\", \"w\" or \"x\")", "\"" + t + "\"");
    }
    return it;
}

json
StepProgram::ToJson() const
{
    json j;
    j["type"] = "step";
    j["step"] = step;
    j["pool"] = pool;
    j["engine"] = engine;
    j["virtual_engine"] = virtualEngine;
    j["deps"] = DepsToJson(deps);
    json rs = json::array();
    for (const auto& r : ranks)
    {
        json items = json::array();
        for (const auto& it : r.items)
        {
            items.push_back(it.ToJson());
        }
        rs.push_back({{"rank", r.rank}, {"streams", r.streams}, {"items", std::move(items)}});
    }
    j["ranks"] = std::move(rs);
    return j;
}

StepProgram
StepProgram::FromJson(const JsonObject& j)
{
    StepProgram p;
    p.step = j.Uint("step");
    p.pool = uint32_t(j.OptionalUint("pool", 0, 0, UINT32_MAX));
    p.engine = uint32_t(j.OptionalUint("engine", 0, 0, UINT32_MAX));
    p.virtualEngine = uint32_t(j.OptionalUint("virtual_engine", 0, 0, UINT32_MAX));
    p.deps = DepsFromJson(j);
    const json& ranks = j.Array("ranks");
    for (size_t i = 0; i < ranks.size(); ++i)
    {
        const JsonObject r(ranks[i], j.File(), JsonIndex(j.Field("ranks"), i));
        RankStepProgram rp;
        rp.rank = uint32_t(r.Uint("rank", 0, UINT32_MAX));
        rp.streams = uint32_t(r.OptionalUint("streams", 1, 1, UINT32_MAX));
        const json& items = r.Array("items");
        for (size_t k = 0; k < items.size(); ++k)
        {
            const JsonObject item(items[k], j.File(), JsonIndex(r.Field("items"), k));
            rp.items.push_back(ProgramItem::FromJson(item));
            if (rp.items.back().stream >= rp.streams)
            {
                item.Fail("s",
                          "a stream below the rank's " + std::to_string(rp.streams),
                          std::to_string(rp.items.back().stream));
            }
        }
        p.ranks.push_back(std::move(rp));
    }
    return p;
}

json
TransferRecord::ToJson() const
{
    json j;
    j["type"] = "transfer";
    j["transfer"] = id;
    j["request"] = request;
    j["deps"] = DepsToJson(deps);
    if (layerwise)
    {
        j["layerwise"] = true;
        j["parts"] = parts;
    }
    else
    {
        j["sends"] = sends;
    }
    return j;
}

TransferRecord
TransferRecord::FromJson(const JsonObject& j)
{
    TransferRecord t;
    t.id = j.Int("transfer", 0, INT64_MAX);
    t.request = j.OptionalUint("request", 0);
    t.deps = DepsFromJson(j);
    t.layerwise = j.OptionalBool("layerwise", false);
    t.parts = uint32_t(j.OptionalUint("parts", 0, 0, UINT32_MAX));
    if (j.Has("sends"))
    {
        const json& sends = j.Array("sends");
        for (size_t i = 0; i < sends.size(); ++i)
        {
            const std::string at = JsonIndex(j.Field("sends"), i);
            if (!sends[i].is_array() || sends[i].size() != 3)
            {
                throw InputError(
                    j.File(), at, "[source, destination, bytes]", DescribeJson(sends[i]));
            }
            std::array<uint64_t, 3> s{};
            for (size_t k = 0; k < 3; ++k)
            {
                s[k] = JsonObject::ToUint(sends[i][k], j.File(), JsonIndex(at, k));
            }
            t.sends.push_back(s);
        }
    }
    return t;
}

} // namespace fabricsim
