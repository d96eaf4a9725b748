// The step executor's collective path: a collective whose members have all arrived starts
// over the Collective API (a gather as point-to-point sends), and what blocked ranks wait for.
#include "collective-api.h"
#include "comm-op-kind.h"
#include "step-executor-state.h"
#include "step-executor.h"

#include <algorithm>
#include <climits>
#include <sstream>
#include <stdexcept>

namespace fabricsim
{

void
StepExecutor::StartCollective(const std::string& key)
{
    Collective& c = *m_colls.at(key);
    std::vector<uint32_t> ranks = c.group;
    for (uint32_t rank : ranks)
    {
        CommStarted(rank, key);
    }
    uint64_t total = 0;
    for (const ProgramItem* m : c.members)
    {
        total += m->bytes;
    }
    if (ranks.size() == 1 || total == 0)
    {
        // Nothing moves: every member is done at once.
        m_colls.erase(key);
        m_api.Schedule(0,
                       [this, ranks, key]()
                       {
                           for (uint32_t rank : ranks)
                           {
                               CommDone(rank, key);
                           }
                       });
        return;
    }
    if (c.op == CommOp::Gather)
    {
        // Point-to-point sends of each member's part to group index 0. The sizes are read
        // first: a backend that completes a send at once would erase the collective.
        c.left = ranks.size() - 1;
        std::vector<uint64_t> parts;
        for (const ProgramItem* m : c.members)
        {
            parts.push_back(m->bytes);
        }
        for (size_t i = 1; i < ranks.size(); ++i)
        {
            uint32_t src = ranks[i];
            auto delivered = [this, key, src, root = ranks[0]]()
            {
                Collective& g = *m_colls.at(key);
                bool last = --g.left == 0;
                if (last)
                {
                    m_colls.erase(key);
                }
                CommDone(src, key);
                if (last)
                {
                    CommDone(root, key);
                }
            };
            uint64_t bytes = parts[i];
            if (bytes == 0)
            {
                m_api.Schedule(0, delivered);
            }
            else
            {
                m_api.SendRecv(src, ranks[0], bytes, delivered);
            }
        }
        return;
    }
    CollectiveRequest req;
    const std::optional<CollectiveKind> kind = CollectiveKindOf(c.op);
    if (!kind)
    {
        throw std::logic_error("step executor: " + CommOpName(c.op)
                               + " reached the collective path");
    }
    req.kind = *kind;
    req.ranks = ranks;
    req.tag = c.members[0]->category + " " + key;
    if (c.op == CommOp::AllToAll)
    {
        for (size_t i = 0; i < ranks.size(); ++i)
        {
            const auto& row = c.members[i]->row;
            if (row.size() != ranks.size())
            {
                throw std::logic_error("all-to-all " + key + ": a row of "
                                       + std::to_string(row.size()) + " entries for "
                                       + std::to_string(ranks.size()) + " members");
            }
            req.alltoallBytes.push_back(row);
            // On own kernels the call lasts what its slowest member's copying takes.
            req.kernelLaunchPs = std::max(req.kernelLaunchPs, c.members[i]->kernelLaunchPs);
            req.kernelMinPs = std::max(req.kernelMinPs, c.members[i]->kernelMinPs);
            req.kernelFillPs = std::max(req.kernelFillPs, c.members[i]->kernelFillPs);
            uint64_t sent = 0;
            for (size_t j = 0; j < row.size(); ++j)
            {
                sent += j == i ? 0 : row[j];
            }
            req.bytes = std::max(req.bytes, sent);
        }
    }
    else
    {
        // Members agree except across EP groups of unequal batches (an idle group's dummy
        // token): the collective moves what its largest member needs.
        for (const ProgramItem* m : c.members)
        {
            req.bytes = std::max(req.bytes, m->bytes);
        }
    }
    m_starting = &key;
    m_api.Start(
        req,
        [this, ranks, key](uint32_t i) { CommDone(ranks.at(i), key); },
        [this, key]() { m_colls.erase(key); });
    m_starting = nullptr;
}

std::vector<std::string>
StepExecutor::Blocked() const
{
    std::vector<std::string> out;
    for (const auto& [r, rs] : m_ranks)
    {
        if (!rs->cur)
        {
            continue;
        }
        for (size_t k = 0; k < rs->streams.size(); ++k)
        {
            const auto& s = rs->streams[k];
            if (!s.blocked)
            {
                continue;
            }
            std::ostringstream os;
            os << "rank " << r << " step " << rs->cur->prog->step << " stream " << k
               << " waits for " << s.key;
            auto c = m_colls.find(s.key);
            if (c != m_colls.end())
            {
                os << " (" << c->second->arrived << " of " << c->second->group.size()
                   << " members arrived; missing:";
                for (size_t i = 0; i < c->second->group.size(); ++i)
                {
                    if (!c->second->members[i])
                    {
                        os << " " << c->second->group[i];
                    }
                }
                os << ")";
            }
            out.push_back(os.str());
        }
    }
    return out;
}

} // namespace fabricsim
