/*
 * Runs step programs over the Collective API: each rank walks its program; compute items hold
 * the rank's compute engine for their duration; communication items join collectives, which
 * start when every member has arrived. Per rank and step it accounts compute, exposed
 * communication per category, synchronisation wait and idle time.
 */
#ifndef FABRICSIM_SERVING_STEP_EXECUTOR_H
#define FABRICSIM_SERVING_STEP_EXECUTOR_H

#include "chrome-trace.h"
#include "collective-api.h"
#include "step-program.h"

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace fabricsim
{

class CollectiveApi;

/**
 * \brief Where one rank's time went during one step.
 *
 * Exposed communication is time the compute engine is idle while a stream waits for a
 * communication that has started; before it starts (members still computing) the wait is
 * sync_wait, and a pipeline receive whose sender has not sent yet is idle (a bubble).
 */
struct RankStepStats
{
    uint32_t rank = 0;                     //!< global rank
    int64_t startPs = 0;                   //!< the rank began the step's program
    int64_t endPs = 0;                     //!< the rank finished it
    int64_t computePs = 0;                 //!< compute engine busy
    std::map<std::string, int64_t> commPs; //!< exposed communication per category
    int64_t syncPs = 0;                    //!< waiting for other members to arrive
    double flops = 0;                      //!< FLOPs executed
    double hbmBytes = 0;                   //!< HBM bytes moved by compute
};

/**
 * \brief Timing of one executed step.
 */
struct StepStats
{
    uint64_t step = 0;                //!< step id
    int64_t launchPs = 0;             //!< submitted
    int64_t endPs = 0;                //!< last rank done
    std::vector<RankStepStats> ranks; //!< per rank, in program order
};

/**
 * \brief The executor (see the file comment). Streams of a rank share its compute engine: when
 * several can compute, the one whose next item comes first in program order runs. A blocking
 * communication stalls only its stream; async items are waited by a Wait item; detached items
 * (layer-wise KV sends) are waited by nobody and report to the transfer callback. A rank runs
 * the programs submitted to it in submission order.
 *
 * Collective mapping: all-reduce, reduce-scatter, all-gather and all-to-all(v) go to
 * CollectiveApi::Start with the group's global ranks (all-to-all with the members' rows as the
 * byte matrix); a gather is point-to-point sends to group index 0; a send starts its transfer
 * when the sender reaches it and the paired receive completes at delivery (or when reached, if
 * later); a host-tier KV fetch is a delay of bytes / bandwidth on the rank's PCIe link (FIFO); a
 * remote fetch and every KV send are CollectiveApi::SendRecv.
 */
class StepExecutor : public CollectiveHorizon
{
  public:
    /// Called when every rank has finished a step.
    using StepDone = std::function<void(const StepStats&)>;
    /// Called when one detached KV send of a transfer is delivered.
    using TransferPartDone = std::function<void(int64_t transferId)>;

    /// Execute over \p api (which must outlive the executor).
    explicit StepExecutor(CollectiveApi& api);
    ~StepExecutor();

    StepExecutor(const StepExecutor&) = delete;
    StepExecutor& operator=(const StepExecutor&) = delete;

    /// Record slices of steps below \p maxSteps (0: all) into \p trace (nullptr: none).
    void SetTimeline(ChromeTrace* trace, uint64_t maxSteps = 0);

    /// Set the callback for detached KV sends.
    void SetTransferPartDone(TransferPartDone cb);

    /// Queue \p prog on its ranks; \p done runs once all have finished it.
    void Submit(std::shared_ptr<const StepProgram> prog, StepDone done);

    /**
     * \brief A point-to-point transfer outside step programs (bulk KV transfer), shown on the
     * timeline of \p src as "kv_transfer".
     */
    void Transfer(
        uint32_t src, uint32_t dst, uint64_t bytes, int64_t transferId, std::function<void()> done);

    /// Steps submitted and not finished.
    size_t InFlight() const;

    /**
     * \brief The horizon of a rank in the collective now starting (CollectiveHorizon): its
     * part done at \p donePs, the rank next posts after the compute that follows the
     * collective on its stream. It cannot tell (INT64_MIN) when the rank has another stream
     * with work left or another communication pending. With transfers expected, no later than
     * the earliest a KV handoff can start (SetTransfersExpected); INT64_MIN when that cannot be
     * bounded. Implemented in step-executor-horizon.cc.
     */
    int64_t QuietUntilPs(uint32_t rank, int64_t donePs) const override;

    bool Predictable() const override
    {
        return !m_transfersExpected || bool(m_transferTriggers);
    }

    /**
     * \brief Point-to-point transfers outside the programs (KV handoffs) may start. Without
     * \p triggers they may start at any time, and the horizon can never tell. With it, they
     * start only at the end of a step or at a time no earlier than what \p triggers returns
     * (the caller's next arrival or launch; INT64_MIN while a transfer already in flight can
     * end, and set off more, at any time): the horizon then also bounds them by the end of
     * every step in flight, no sooner than the compute its ranks have left.
     */
    void SetTransfersExpected(bool expected, std::function<int64_t()> triggers = {})
    {
        m_transfersExpected = expected;
        m_transferTriggers = std::move(triggers);
    }

    /// One line per rank stalled in a step: the rank, the step and what it waits for.
    std::vector<std::string> Blocked() const;

    /// The Collective API in use.
    CollectiveApi& Api()
    {
        return m_api;
    }

  private:
    struct StepRun;
    struct RankState;
    struct Collective;
    struct PointToPoint;

    /// Run rank \p r as far as it can go now.
    void Advance(uint32_t r);
    /// One pass of Advance.
    void AdvanceOnce(uint32_t r);
    /// Add the time since the last change to the bucket of the rank's current state.
    void Account(uint32_t r);
    /// Rank \p r has joined the communication of \p item.
    void Launch(uint32_t r, const ProgramItem& item);
    /// All members of collective \p key have arrived.
    void StartCollective(const std::string& key);
    /// Communication \p key is complete for rank \p r.
    void CommDone(uint32_t r, const std::string& key);
    /// Communication \p key has started for rank \p r (for the sync / exposed split).
    void CommStarted(uint32_t r, const std::string& key);
    /// Rank \p r's compute item finished.
    void ComputeDone(uint32_t r, uint64_t gen);
    /// Rank \p r's collectives in flight take \p delta more of its SMs (less when negative):
    /// a running compute goes on at the rate left to it.
    void ChangeSmHeld(uint32_t r, double delta);
    /// Schedule the end of rank \p r's running compute at its current rate.
    void ScheduleComputeEnd(uint32_t r);
    /// Close the rank's open compute slice on the timeline.
    void FlushComputeSlice(RankState& rs);
    /// True when the running step of \p rs is recorded on the timeline.
    bool Recording(const RankState& rs) const;
    /// The state of rank \p r (created on first use).
    RankState& Rank(uint32_t r);
    /// Compute rank \p rs has left in its running step at full rate (ps, rounded down).
    int64_t ComputeLeftPs(const RankState& rs, int64_t now) const;
    /// The earliest a KV handoff can start, asked for rank \p asking done at \p donePs.
    int64_t TransferBoundPs(const RankState& asking, int64_t donePs) const;

    CollectiveApi& m_api;                                   //!< the seam
    ChromeTrace* m_trace = nullptr;                         //!< timeline (optional)
    uint64_t m_traceMaxSteps = 0;                           //!< timeline step limit
    TransferPartDone m_transferPartDone;                    //!< KV send callback
    std::map<uint32_t, std::unique_ptr<RankState>> m_ranks; //!< per rank
    /// Pending collectives and send/recv pairs by key (hashed: looked up per item; never
    /// iterated where order would matter).
    std::unordered_map<std::string, std::unique_ptr<Collective>> m_colls;
    std::unordered_map<std::string, std::unique_ptr<PointToPoint>> m_p2p;
    std::set<StepRun*> m_runs;                   //!< steps not finished (owned)
    size_t m_inFlight = 0;                       //!< steps not finished
    const std::string* m_starting = nullptr;     //!< key of the collective being started
    bool m_transfersExpected = false;            //!< see SetTransfersExpected
    std::function<int64_t()> m_transferTriggers; //!< see SetTransfersExpected

    /// Step-end bounds of the steps in flight, kept while one collective starts.
    struct StepEndCache
    {
        int64_t now = -1;
        std::string key;
        std::map<const StepRun*, int64_t> ends;
    };

    mutable StepEndCache m_stepEndCache;
};

} // namespace fabricsim

#endif
