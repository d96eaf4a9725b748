/*
 * The Collective API seam (workloads -> collectives): "run this collective of this size over
 * this rank group with this algorithm, call me when rank r is done". The workload layer never
 * knows how an algorithm is scheduled or which transport carries it.
 */
#ifndef FABRICSIM_COLLECTIVE_API_H
#define FABRICSIM_COLLECTIVE_API_H

#include "collective-kind.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace fabricsim
{

struct CollectiveRequest
{
    CollectiveKind kind = CollectiveKind::kAllReduce;
    /// nccl-tests size convention: AllReduce the buffer, AllGather the total output,
    /// ReduceScatter the total input, AlltoAll the total each rank sends.
    uint64_t bytes = 0;
    std::vector<uint32_t> ranks; ///< global ranks of the group, in group order
    std::string algorithm
        = "auto"; ///< "auto", "ring", "tree", "rhd", "rd", "direct", "bruck", "hierarchical", ...
    uint32_t root = 0; ///< group index of the root (broadcast, reduce)
    /// AlltoAll(v): bytes[i][j] group rank i sends to group rank j (empty = uniform bytes/size).
    std::vector<std::vector<uint64_t>> alltoallBytes;
    /// Kernels of the caller's own in place of NCCL's (DeepEP's dispatch and combine), for an
    /// all-to-all(v): their fixed cost per call replaces the executor's launch latency (-1: the
    /// executor's), and no rank has its result sooner than \c kernelMinPs after the start,
    /// whatever the fabric delivers earlier (the kernels' own bound, e.g. copying on a budget
    /// of SMs). The fabric still carries the traffic as soon as the launch is over. The kernels
    /// pipeline their copying with the fabric only past a depth: the shorter of a rank's
    /// delivery (its last transfer in, from the launch) and their own work (kernelMinPs less
    /// the launch) adds itself to its result, up to \c kernelFillPs (0: full overlap).
    int64_t kernelLaunchPs = -1;
    int64_t kernelMinPs = 0;
    int64_t kernelFillPs = 0;
    std::string tag; ///< free text for traces ("tp_allreduce layer 3")
};

/**
 * \brief What a caller of the Collective API can tell about its own future, for the collective
 * memo: a replayed collective commits its effect on the fabric at its start, so it may replay
 * only when nothing else can put traffic on its part of the fabric before the span it replays
 * ends.
 */
class CollectiveHorizon
{
  public:
    virtual ~CollectiveHorizon()
    {
        *m_alive = false;
    }

    /// False once this horizon is destroyed: an API that keeps it checks before asking (the
    /// caller need not outlive the API, nor the API the caller).
    std::shared_ptr<const bool> Alive() const
    {
        return m_alive;
    }

    /**
     * \brief Asked inside Start of the collective now starting: the earliest absolute time (ps)
     * at which the caller may put other traffic on global rank \p rank's links, given that
     * rank's part of this collective completes at \p donePs. A value before \p donePs (e.g.
     * INT64_MIN) means it cannot tell.
     */
    virtual int64_t QuietUntilPs(uint32_t rank, int64_t donePs) const = 0;

    /// False when the caller can never tell (other traffic may start at any time): then the
    /// memo neither probes nor records, which would only cost time.
    virtual bool Predictable() const
    {
        return true;
    }

  private:
    std::shared_ptr<bool> m_alive = std::make_shared<bool>(true);
};

class CollectiveApi
{
  public:
    using RankDone = std::function<void(uint32_t groupIndex)>;
    using Done = std::function<void()>;

    virtual ~CollectiveApi() = default;

    /// Start a collective; `onRankDone(i)` when group rank i has its result, `onDone` after all.
    virtual void Start(const CollectiveRequest& req, RankDone onRankDone, Done onDone) = 0;

    /// Point-to-point transfer between global ranks (pipeline sends, KV-cache transfer).
    virtual void SendRecv(uint32_t src, uint32_t dst, uint64_t bytes, Done onDone) = 0;

    virtual int64_t NowPs() const = 0;
    virtual void Schedule(int64_t delayPs, Done fn) = 0;

    /// The caller's horizon (nullptr: none); an API that replays collectives asks it.
    virtual void SetHorizon(const CollectiveHorizon* horizon)
    {
        (void)horizon;
    }
};

} // namespace fabricsim

#endif
