/*
 * The Collective API over a Transport: each request is turned into a schedule (a generated
 * algorithm, NCCL-like automatic choice, or a user schedule registered for the collective) and
 * run by an Executor on the request's ranks. AlltoAll(v) with per-pair sizes and point-to-point
 * transfers go straight to the transport, sliced like the executor's messages.
 */
#ifndef FABRICSIM_SCHEDULE_COLLECTIVES_H
#define FABRICSIM_SCHEDULE_COLLECTIVES_H

#include "collective-api.h"
#include "executor.h"
#include "generators.h"
#include "transport.h"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

namespace fabricsim
{

/// How requests become schedules.
struct CollectiveOptions
{
    int m_channels = 1;      ///< channels of generated schedules
    int m_chunksPerRank = 1; ///< pipelining units of generated schedules
    /// Ranks per scale-up domain, for "hierarchical" and the automatic choice (0 = flat).
    int m_localSize = 0;
    Protocol m_protocol = Protocol::kSimple;
    /// "auto" picks latency-optimal algorithms (tree, recursive doubling) up to this size.
    uint64_t m_smallBytes = 256 * 1024;
    /**
     * A fresh, idle transport of the same fabric and ranks. When set, "auto" times every
     * candidate algorithm on one and takes the fastest, as NCCL's tuner takes the cheapest by its
     * cost model, so no call gets a slower algorithm than a larger one because of a fixed size
     * threshold; unset, the fixed preference by size above.
     */
    std::function<std::unique_ptr<Transport>()> m_probe;
};

/**
 * The fixed choice of "auto" (what it takes with no probe to time candidates on):
 * logarithmic-depth algorithms up to options.m_smallBytes, the ring above, the two-level
 * algorithm when the ranks span several scale-up domains; the first preference that generates
 * for \p ranks wins.
 */
std::string AutoAlgorithm(CollectiveKind kind,
                          uint64_t bytes,
                          int ranks,
                          const CollectiveOptions& options);

/// Every algorithm "auto" may take for \p kind on \p ranks: the fixed choice (AutoAlgorithm)
/// first, then the ring (hierarchical across scale-up domains; direct for all-to-all) and, for
/// all-reduce, the tree.
std::vector<std::string> AutoCandidates(CollectiveKind kind,
                                        uint64_t bytes,
                                        int ranks,
                                        const CollectiveOptions& options);

/// Time (ps) \p schedule takes for \p bytes on the idle transport \p idle (schedule rank i on
/// transport rank rankMap[i]); -1 when it does not complete.
int64_t IdleRunPs(Transport& idle,
                  const Schedule& schedule,
                  const ExecutorConfig& config,
                  const std::vector<uint32_t>& rankMap,
                  uint64_t bytes);

/**
 * The algorithm "auto" takes for \p bytes on \p ranks: the candidate (AutoCandidates) that is
 * fastest on \p probe (an idle transport; null: a new one from options.m_probe), generated
 * with \p gen and run with \p config (a tie keeps the earlier candidate); AutoAlgorithm when
 * there is no probe.
 */
std::string FastestAlgorithm(CollectiveKind kind,
                             uint64_t bytes,
                             const std::vector<uint32_t>& ranks,
                             const GeneratorOptions& gen,
                             const CollectiveOptions& options,
                             const ExecutorConfig& config,
                             Transport* probe = nullptr);

class ScheduleCollectives : public CollectiveApi
{
  public:
    ScheduleCollectives(Transport& transport,
                        const ExecutorConfig& config = {},
                        const CollectiveOptions& options = {});
    ~ScheduleCollectives() override;

    /**
     * \throws fabricsim::InputError on a bad request (empty or repeated ranks, ranks the transport
     *         does not have, an algorithm that does not exist or cannot run the collective)
     */
    void Start(const CollectiveRequest& req, RankDone onRankDone, Done onDone) override;
    void SendRecv(uint32_t src, uint32_t dst, uint64_t bytes, Done onDone) override;
    int64_t NowPs() const override;
    void Schedule(int64_t delayPs, Done fn) override;

    /// Run \p schedule for every request of its collective and rank count ("custom algorithm").
    void UseSchedule(const fabricsim::Schedule& schedule);

    /// The fixed choice of "auto" for this collective, size and group size (AutoAlgorithm).
    std::string ChooseAlgorithm(CollectiveKind kind, uint64_t bytes, int ranks) const;

    /// Collectives started and not finished.
    size_t Running() const
    {
        return m_running.size();
    }

    /// Stuck report of every unfinished collective (after the transport ran dry).
    std::vector<std::string> StuckReports() const;

  private:
    struct Active
    {
        std::string m_tag;
        std::unique_ptr<Executor> m_executor; ///< null for direct AlltoAllv
        uint32_t m_pending = 0;               ///< direct transfers left (AlltoAllv)
    };

    const fabricsim::Schedule& ScheduleFor(const CollectiveRequest& req,
                                           const std::string& algorithm);
    /// The algorithm an "auto" request runs (timed on the probe once per size and group).
    std::string AutoFor(const CollectiveRequest& req);
    Transport* Probe();
    GeneratorOptions GeneratorOptionsFor(uint32_t root) const;
    uint32_t ChannelBase(const std::vector<uint32_t>& ranks);
    void CheckRequest(const CollectiveRequest& req) const;
    void StartAllToAllV(const CollectiveRequest& req,
                        RankDone onRankDone,
                        Done onDone,
                        uint32_t channel);
    void SendSliced(uint32_t src, uint32_t dst, uint32_t channel, uint64_t bytes, Done onDelivered);
    void Finish(uint64_t id);

    Transport& m_transport;
    ExecutorConfig m_config;
    CollectiveOptions m_options;
    std::map<std::tuple<int, std::string, int, uint32_t>, fabricsim::Schedule> m_schedules;
    std::map<std::pair<int, int>, fabricsim::Schedule> m_userSchedules; ///< (kind, ranks)
    /// "auto"'s timed choice per (kind, bytes, group, root).
    std::map<std::tuple<int, uint64_t, std::vector<uint32_t>, uint32_t>, std::string> m_tuned;
    std::unique_ptr<Transport> m_probeTransport; ///< from m_options.m_probe, made on first use
    std::map<std::vector<uint32_t>, uint32_t> m_groups; ///< rank group -> index
    std::map<uint64_t, Active> m_running;
    uint64_t m_nextId = 0;
    std::shared_ptr<bool> m_alive = std::make_shared<bool>(true);
};

} // namespace fabricsim

#endif
