/*
 * Where each rank's logical buffers (i, o, s) live in storage during validation, with MSCCL's
 * in-place aliasing applied. Internal to the validator.
 */
#ifndef FABRICSIM_BUFFER_LAYOUT_H
#define FABRICSIM_BUFFER_LAYOUT_H

#include "schedule-ir.h"

#include <array>
#include <vector>

namespace fabricsim
{

/// A logical buffer as a window [m_base, m_base + m_size) of storage buffer m_storage.
struct BufferView
{
    int m_storage = 0; ///< index of a BufferKind
    int m_base = 0;
    int m_size = 0;
};

/// Views of i, o, s and the sizes of the three storage buffers of one rank.
struct RankLayout
{
    std::array<BufferView, 3> m_views;
    std::array<int, 3> m_storageSize = {0, 0, 0};

    const BufferView& View(BufferKind b) const
    {
        return m_views[static_cast<int>(b)];
    }
};

/**
 * Layout per rank (index = rank, size = schedule.m_ranks). Buffer sizes come from the
 * declared i/o/s chunk counts; with \p inPlace the aliased buffer is a window of the other one
 * as \p collective implies (no aliasing for custom).
 */
std::vector<RankLayout> ComputeBufferLayouts(const Schedule& schedule,
                                             CollectiveKind collective,
                                             bool inPlace);

/// Program of each rank 0..m_ranks-1 (nullptr when missing; first one when duplicated).
std::vector<const RankProgram*> ProgramsByRank(const Schedule& schedule);

} // namespace fabricsim

#endif
