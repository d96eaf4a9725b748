// Executor results: what an execution did and, when it could not finish, where each
// threadblock is stuck and why.
#include "executor.h"

#include <sstream>

namespace fabricsim
{

std::string
StuckThreadblock::ToString() const
{
    std::ostringstream os;
    os << "rank " << m_rank << " tb " << m_tb << " tile " << m_tile << " step " << m_step << " ("
       << MscclName(m_op) << "): waits for " << m_waitsOn;
    return os.str();
}

std::string
ExecutionResult::StuckReport(size_t maxLines) const
{
    if (m_complete)
    {
        return "";
    }
    std::ostringstream os;
    std::vector<int> ranks;
    for (size_t r = 0; r < m_rankDonePs.size(); ++r)
    {
        if (m_rankDonePs[r] < 0)
        {
            ranks.push_back(int(r));
        }
    }
    os << "collective did not complete: " << ranks.size() << " of " << m_rankDonePs.size()
       << " ranks stuck (";
    for (size_t i = 0; i < ranks.size() && i < 16; ++i)
    {
        os << (i ? " " : "") << ranks[i];
    }
    os << (ranks.size() > 16 ? " ...)" : ")") << "; " << m_undeliveredMessages
       << " message(s) in flight, " << m_unconsumedMessages << " delivered but not received\n";
    for (size_t i = 0; i < m_stuck.size() && i < maxLines; ++i)
    {
        os << "  " << m_stuck[i].ToString() << "\n";
    }
    if (m_stuck.size() > maxLines)
    {
        os << "  ... " << m_stuck.size() - maxLines << " more threadblocks\n";
    }
    return os.str();
}

std::string
Executor::DescribeWait(const TbState& t) const
{
    std::ostringstream os;
    switch (t.m_wait)
    {
    case Wait::kDependency:
    {
        os << "dependencies:";
        for (const Dependency& d : t.m_tb->m_steps[t.m_step].m_deps)
        {
            const TbState& o = m_tbs[m_rankTbs[t.m_rank][d.m_tb]];
            const uint64_t need
                = uint64_t(t.m_tile) * o.m_tb->m_steps.size() + uint64_t(d.m_step) + 1;
            if (o.m_stepsDone < need)
            {
                os << " tb " << d.m_tb << " step " << d.m_step << " (that tb is at tile "
                   << o.m_tile << " step " << o.m_step << ")";
            }
        }
        break;
    }
    case Wait::kMessage:
    {
        const Connection& c = m_conns[t.m_recvConn];
        os << "a message from rank " << c.m_src << " on channel " << c.m_channel << " (" << c.m_sent
           << " sent, " << c.m_delivered << " delivered, " << (c.m_sent - c.m_delivered)
           << " in flight";
        if (c.m_sent == c.m_delivered)
        {
            // Name where the sender is, so a chain of waits can be followed.
            for (const TbState& o : m_tbs)
            {
                if (o.m_rank == int(c.m_src) && o.m_sendConn == t.m_recvConn)
                {
                    os << "; sender tb " << o.m_tb->m_id
                       << (o.m_done ? " has finished"
                                    : " is at tile " + std::to_string(o.m_tile) + " step "
                                          + std::to_string(o.m_step));
                }
            }
        }
        os << ")";
        break;
    }
    case Wait::kSlot:
    {
        const Connection& c = m_conns[t.m_sendConn];
        os << "a free slot toward rank " << c.m_dst << " on channel " << c.m_channel << " ("
           << c.m_slotsUsed << " of " << m_config.m_slots << " slots hold slices rank " << c.m_dst
           << " has not received)";
        break;
    }
    case Wait::kTimer:
        os << "local work in progress";
        break;
    case Wait::kNone:
    default:
        os << "nothing (ready to run)";
        break;
    }
    return os.str();
}

ExecutionResult
Executor::Result() const
{
    ExecutionResult r;
    r.m_complete = Complete();
    r.m_startPs = m_startPs;
    r.m_endPs = r.m_complete ? m_endPs : m_transport.NowPs();
    r.m_rankDonePs = m_rankDonePs;
    r.m_messages = m_messages;
    r.m_payloadBytes = m_payloadBytes;
    r.m_transferBytes = m_transferBytes;
    r.m_tiles = uint32_t(m_tiles);
    r.m_tileChunkBytes = m_tiles > 0 ? TileChunkBytes(0) : 0;
    r.m_sliceBytes = m_sliceBytes;
    r.m_protocol = m_protocol;
    for (const Connection& c : m_conns)
    {
        r.m_undeliveredMessages += c.m_sent - c.m_delivered;
        r.m_unconsumedMessages += c.m_arrived.size();
    }
    if (!r.m_complete)
    {
        for (const TbState& t : m_tbs)
        {
            if (t.m_done)
            {
                continue;
            }
            StuckThreadblock s;
            s.m_rank = t.m_rank;
            s.m_tb = t.m_tb->m_id;
            s.m_tile = t.m_tile;
            s.m_step = t.m_step;
            s.m_op = t.m_tb->m_steps[t.m_step].m_op;
            s.m_waitsOn = m_started ? DescribeWait(t) : "the collective to start";
            r.m_stuck.push_back(s);
        }
    }
    return r;
}

} // namespace fabricsim
