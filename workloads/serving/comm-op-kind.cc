#include "comm-op-kind.h"

namespace fabricsim
{

std::optional<CollectiveKind>
CollectiveKindOf(CommOp op)
{
    switch (op)
    {
    case CommOp::AllReduce:
        return CollectiveKind::kAllReduce;
    case CommOp::ReduceScatter:
        return CollectiveKind::kReduceScatter;
    case CommOp::AllGather:
        return CollectiveKind::kAllGather;
    case CommOp::AllToAll:
        return CollectiveKind::kAllToAll;
    case CommOp::Gather:
    case CommOp::Send:
    case CommOp::Recv:
    case CommOp::KvFetch:
    case CommOp::KvSend:
        return std::nullopt;
    }
    return std::nullopt;
}

} // namespace fabricsim
