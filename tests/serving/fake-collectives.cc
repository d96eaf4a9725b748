#include "fake-collectives.h"

#include <algorithm>
#include <cmath>

namespace fabricsim
{

FakeCollectives::FakeCollectives(const Params& p)
    : m_p(p)
{
}

double
FakeCollectives::PairBw(uint32_t a, uint32_t b) const
{
    return a / m_p.accelsPerServer == b / m_p.accelsPerServer ? m_p.scaleUpBw : m_p.nicBw;
}

double
FakeCollectives::GroupBw(const std::vector<uint32_t>& ranks) const
{
    for (uint32_t r : ranks)
    {
        if (r / m_p.accelsPerServer != ranks[0] / m_p.accelsPerServer)
        {
            return m_p.nicBw;
        }
    }
    return m_p.scaleUpBw;
}

int64_t
FakeCollectives::CollectiveTimePs(const CollectiveRequest& req) const
{
    double n = double(req.ranks.size());
    double bw = GroupBw(req.ranks);
    double alpha = double(m_p.alphaPs) * 1e-12;
    double sec = 0;
    switch (req.kind)
    {
    case CollectiveKind::kAllReduce:
        sec = 2 * (n - 1) * (alpha + double(req.bytes) / (n * bw));
        break;
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllGather:
        sec = (n - 1) * (alpha + double(req.bytes) / (n * bw));
        break;
    case CollectiveKind::kAllToAll:
    {
        double worst = 0;
        for (size_t i = 0; i < req.ranks.size(); ++i)
        {
            double out = 0;
            double in = 0;
            for (size_t j = 0; j < req.ranks.size(); ++j)
            {
                if (i == j)
                {
                    continue;
                }
                double sij = req.alltoallBytes.empty() ? double(req.bytes) / (n - 1)
                                                       : double(req.alltoallBytes[i][j]);
                double sji = req.alltoallBytes.empty() ? double(req.bytes) / (n - 1)
                                                       : double(req.alltoallBytes[j][i]);
                out += sij / PairBw(req.ranks[i], req.ranks[j]);
                in += sji / PairBw(req.ranks[j], req.ranks[i]);
            }
            worst = std::max({worst, out, in});
        }
        sec = alpha + worst;
        break;
    }
    default:
        sec = (n - 1) * alpha + double(req.bytes) / bw;
    }
    return int64_t(std::llround(sec * 1e12));
}

int64_t
FakeCollectives::SendTimePs(uint32_t src, uint32_t dst, uint64_t bytes) const
{
    return m_p.alphaPs + int64_t(std::llround(double(bytes) / PairBw(src, dst) * 1e12));
}

void
FakeCollectives::Start(const CollectiveRequest& req, RankDone onRankDone, Done onDone)
{
    started.push_back(req);
    int64_t t = CollectiveTimePs(req);
    size_t n = req.ranks.size();
    Schedule(t,
             [onRankDone, onDone, n]()
             {
                 for (size_t i = 0; i < n; ++i)
                 {
                     onRankDone(uint32_t(i));
                 }
                 onDone();
             });
}

void
FakeCollectives::SendRecv(uint32_t src, uint32_t dst, uint64_t bytes, Done onDone)
{
    sends.emplace_back(src, dst, bytes);
    Schedule(SendTimePs(src, dst, bytes), onDone);
}

int64_t
FakeCollectives::NowPs() const
{
    return m_now;
}

void
FakeCollectives::Schedule(int64_t delayPs, Done fn)
{
    m_events.push(Event{m_now + std::max<int64_t>(0, delayPs), m_seq++, std::move(fn)});
}

void
FakeCollectives::Run()
{
    while (!m_events.empty())
    {
        Event e = m_events.top();
        m_events.pop();
        m_now = e.t;
        e.fn();
    }
}

} // namespace fabricsim
