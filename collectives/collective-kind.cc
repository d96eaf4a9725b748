#include "collective-kind.h"

#include <cctype>

namespace fabricsim
{

namespace
{

/// Lower case without '_', '-' and spaces: "Reduce_Scatter" -> "reducescatter".
std::string
FoldName(const std::string& name)
{
    std::string r;
    for (unsigned char c : name)
    {
        if (c != '_' && c != '-' && c != ' ')
        {
            r.push_back(static_cast<char>(std::tolower(c)));
        }
    }
    return r;
}

} // namespace

std::string
ToString(CollectiveKind kind)
{
    switch (kind)
    {
    case CollectiveKind::kAllReduce:
        return "allreduce";
    case CollectiveKind::kAllGather:
        return "allgather";
    case CollectiveKind::kReduceScatter:
        return "reducescatter";
    case CollectiveKind::kAllToAll:
        return "alltoall";
    case CollectiveKind::kBroadcast:
        return "broadcast";
    case CollectiveKind::kReduce:
        return "reduce";
    case CollectiveKind::kCustom:
        return "custom";
    }
    return "custom";
}

std::optional<CollectiveKind>
ParseCollectiveKind(const std::string& name)
{
    const std::string s = FoldName(name);
    if (s == "allreduce")
    {
        return CollectiveKind::kAllReduce;
    }
    if (s == "allgather")
    {
        return CollectiveKind::kAllGather;
    }
    if (s == "reducescatter")
    {
        return CollectiveKind::kReduceScatter;
    }
    if (s == "alltoall" || s == "alltoallv")
    {
        return CollectiveKind::kAllToAll;
    }
    if (s == "broadcast")
    {
        return CollectiveKind::kBroadcast;
    }
    if (s == "reduce")
    {
        return CollectiveKind::kReduce;
    }
    if (s == "custom")
    {
        return CollectiveKind::kCustom;
    }
    return std::nullopt;
}

} // namespace fabricsim
