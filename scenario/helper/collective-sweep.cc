#include "collective-sweep.h"

#include <chrono>

namespace fabricsim
{

namespace
{

/// collective.json's row of a measured size.
nlohmann::json
RowJson(const CollectiveSweepRow& r)
{
    const CollectiveMeasurement& m = r.m;
    nlohmann::json jr = NcclRowsJson({r.row})[0];
    jr["algorithm"] = r.name;
    jr["protocol"] = ToString(m.m_last.m_protocol);
    jr["iterations_us"] = m.m_iterationUs;
    jr["tiles"] = m.m_last.m_tiles;
    jr["slice_bytes"] = m.m_last.m_sliceBytes;
    jr["messages_per_iteration"] = m.m_last.m_messages;
    jr["transfer_bytes_per_iteration"] = m.m_last.m_transferBytes;
    if (!m.m_fabric.is_null())
    {
        jr["fabric"] = m.m_fabric;
    }
    if (!m.m_complete)
    {
        jr["stuck"] = m.m_stuckReport;
        if (m.m_reachedStopTime)
        {
            jr["stopped_at_stop_ns"] = true;
        }
    }
    return jr;
}

} // namespace

void
MeasureCollectiveSweep(const FabricScenario& sc,
                       CollectiveKind kind,
                       int ranks,
                       ScheduleSource& source,
                       const std::vector<uint64_t>& sizes,
                       const CollectiveSweepOptions& opt,
                       const std::function<void(const CollectiveSweepRow&)>& onRow)
{
    for (uint64_t requested : sizes)
    {
        CollectiveSweepRow r;
        r.requested = requested;
        r.bytes = AlignedSize(kind, requested, ranks);
        if (r.bytes == 0)
        {
            onRow(r);
            continue;
        }
        const Schedule& s = source.For(r.bytes, r.name);
        const auto t0 = std::chrono::steady_clock::now();
        r.m = MeasureCollective(sc, opt.backend, s, r.bytes, opt.warmup, opt.iters, opt.ns3Args);
        r.wallS = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        r.row = MakeNcclRow(kind, ranks, r.bytes, r.m.m_timeUs, source.Wrong(s), int(opt.root));
        r.row.m_complete = r.m.m_complete;
        r.json = RowJson(r);
        onRow(r);
    }
}

nlohmann::json
ExecutorConfigJson(const ExecutorConfig& cfg)
{
    return {{"max_chunk_bytes", cfg.m_maxChunkBytes},
            {"slice_bytes", cfg.m_sliceBytes},
            {"slots", cfg.m_slots},
            {"step_latency_ns", double(cfg.m_stepLatencyPs) / 1000},
            {"launch_latency_ns", double(cfg.m_launchLatencyPs) / 1000},
            {"memory_bandwidth_gbps", cfg.m_memoryBytesPerSecond / 1e9}};
}

} // namespace fabricsim
