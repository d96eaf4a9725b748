#include "buffer-layout.h"

#include <algorithm>

namespace fabricsim
{

std::vector<const RankProgram*>
ProgramsByRank(const Schedule& schedule)
{
    std::vector<const RankProgram*> out(std::max(schedule.m_ranks, 0), nullptr);
    for (const auto& p : schedule.m_programs)
    {
        if (p.m_rank >= 0 && p.m_rank < static_cast<int>(out.size()) && !out[p.m_rank])
        {
            out[p.m_rank] = &p;
        }
    }
    return out;
}

std::vector<RankLayout>
ComputeBufferLayouts(const Schedule& schedule, CollectiveKind collective, bool inPlace)
{
    const auto programs = ProgramsByRank(schedule);
    const auto geometry = ExpectedGeometry(collective, schedule.m_ranks, schedule.m_chunksPerLoop);
    const int in = static_cast<int>(BufferKind::kInput);
    const int out = static_cast<int>(BufferKind::kOutput);
    std::vector<RankLayout> layouts(programs.size());
    for (size_t r = 0; r < programs.size(); ++r)
    {
        RankLayout& l = layouts[r];
        if (!programs[r])
        {
            continue;
        }
        l.m_storageSize = {std::max(programs[r]->m_inputChunks, 0),
                           std::max(programs[r]->m_outputChunks, 0),
                           std::max(programs[r]->m_scratchChunks, 0)};
        for (int b = 0; b < 3; ++b)
        {
            l.m_views[b] = BufferView{b, 0, l.m_storageSize[b]};
        }
        if (!inPlace || !geometry)
        {
            continue;
        }
        const int perRank = schedule.m_chunksPerLoop / schedule.m_ranks;
        switch (collective)
        {
        case CollectiveKind::kAllGather:
            // Input chunk j is output[rank * K / N + j].
            l.m_storageSize[in] = 0;
            l.m_views[in] = BufferView{out, static_cast<int>(r) * perRank, perRank};
            break;
        case CollectiveKind::kReduceScatter:
            // Output chunk j is input[rank * K / N + j].
            l.m_storageSize[out] = 0;
            l.m_views[out] = BufferView{in, static_cast<int>(r) * perRank, perRank};
            break;
        default:
            // allreduce, alltoall, broadcast, reduce: o is i.
            l.m_storageSize[out] = 0;
            l.m_views[out] = BufferView{in, 0, l.m_storageSize[in]};
            break;
        }
    }
    return layouts;
}

} // namespace fabricsim
