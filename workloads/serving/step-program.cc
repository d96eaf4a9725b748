#include "step-program.h"

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

template <typename T>
T
Get(const json& j, const char* key)
{
    auto it = j.find(key);
    if (it == j.end())
    {
        throw std::invalid_argument(std::string("missing \"") + key + "\"");
    }
    return it->get<T>();
}

template <typename T>
T
GetOr(const json& j, const char* key, T def)
{
    auto it = j.find(key);
    return it == j.end() ? def : it->get<T>();
}

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
DepsFromJson(const json& j)
{
    StepDependencies d;
    d.afterSteps = GetOr<std::vector<uint64_t>>(j, "after_steps", {});
    d.afterTransfers = GetOr<std::vector<uint64_t>>(j, "after_transfers", {});
    d.notBeforePs = GetOr<int64_t>(j, "not_before_ps", 0);
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
ProgramItem::FromJson(const json& j)
{
    if (!j.is_object())
    {
        throw std::invalid_argument("program item is not an object");
    }
    ProgramItem it;
    std::string t = Get<std::string>(j, "t");
    it.stream = GetOr<uint32_t>(j, "s", 0);
    it.name = GetOr<std::string>(j, "name", "");
    it.layer = GetOr<int32_t>(j, "layer", -1);
    if (t == "c")
    {
        it.type = Type::Compute;
        it.durationPs = Get<int64_t>(j, "ps");
        it.flops = GetOr<double>(j, "flops", 0);
        it.hbmBytes = GetOr<double>(j, "hbm_bytes", 0);
        if (it.durationPs < 0)
        {
            throw std::invalid_argument("negative compute duration");
        }
    }
    else if (t == "w")
    {
        it.type = Type::Wait;
        it.key = Get<std::string>(j, "key");
    }
    else if (t == "x")
    {
        it.type = Type::Comm;
        auto op = ParseCommOp(Get<std::string>(j, "op"));
        if (!op)
        {
            throw std::invalid_argument("unknown communication op \"" + j["op"].get<std::string>()
                                        + "\"");
        }
        it.op = *op;
        it.category = Get<std::string>(j, "cat");
        it.key = Get<std::string>(j, "key");
        it.group = Get<std::vector<uint32_t>>(j, "group");
        it.groupIndex = Get<uint32_t>(j, "gi");
        it.bytes = Get<uint64_t>(j, "bytes");
        it.row = GetOr<std::vector<uint64_t>>(j, "row", {});
        it.async = GetOr<bool>(j, "async", false);
        it.detached = GetOr<bool>(j, "detached", false);
        it.transferId = GetOr<int64_t>(j, "transfer", -1);
        it.fetchFrom = GetOr<int64_t>(j, "from", -1);
        it.tierBwBytesPerSec = GetOr<double>(j, "tier_bw", 0);
        if (it.groupIndex >= it.group.size() && it.op != CommOp::KvFetch)
        {
            throw std::invalid_argument("group index outside its group");
        }
    }
    else
    {
        throw std::invalid_argument("unknown item type \"" + t + "\"");
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
StepProgram::FromJson(const json& j)
{
    StepProgram p;
    p.step = Get<uint64_t>(j, "step");
    p.pool = GetOr<uint32_t>(j, "pool", 0);
    p.engine = GetOr<uint32_t>(j, "engine", 0);
    p.virtualEngine = GetOr<uint32_t>(j, "virtual_engine", 0);
    p.deps = DepsFromJson(j.value("deps", json::object()));
    for (const auto& r : Get<json>(j, "ranks"))
    {
        RankStepProgram rp;
        rp.rank = Get<uint32_t>(r, "rank");
        rp.streams = GetOr<uint32_t>(r, "streams", 1);
        for (const auto& it : Get<json>(r, "items"))
        {
            rp.items.push_back(ProgramItem::FromJson(it));
            if (rp.items.back().stream >= rp.streams)
            {
                throw std::invalid_argument("item stream outside the rank's streams");
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
TransferRecord::FromJson(const json& j)
{
    TransferRecord t;
    t.id = Get<int64_t>(j, "transfer");
    t.request = GetOr<uint64_t>(j, "request", 0);
    t.deps = DepsFromJson(j.value("deps", json::object()));
    t.layerwise = GetOr<bool>(j, "layerwise", false);
    t.parts = GetOr<uint32_t>(j, "parts", 0);
    t.sends = GetOr<std::vector<std::array<uint64_t, 3>>>(j, "sends", {});
    return t;
}

} // namespace fabricsim
