/*
 * The collectives executor: runs any schedule IR program over the Transport seam with MSCCL
 * semantics (threadblocks run their steps in order, cross-threadblock dependencies, receives
 * match FIFO per (sender, receiver, channel)). Buffers are cut into tiles and steps into slices
 * so pipelines fill as in NCCL; each connection holds a bounded number of slices in flight.
 * Pure C++: the transport decides what a byte costs.
 */
#ifndef FABRICSIM_EXECUTOR_H
#define FABRICSIM_EXECUTOR_H

#include "schedule-ir.h"
#include "transport.h"

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

namespace fabricsim
{

/**
 * Executor tunables. Zero sizes mean "the protocol's NCCL-like default" (see
 * ProtocolBufferBytes); the ns-3 attributes of ns3::CollectiveExecutor map onto these fields.
 */
struct ExecutorConfig
{
    /// Most bytes one chunk carries per tile (MSCCL tile); 0 = connection buffer / largest
    /// step count, so one step always fits the connection's slots.
    uint64_t m_maxChunkBytes = 0;
    /// Pipelining unit (one transport message); 0 = connection buffer / slots.
    uint64_t m_sliceBytes = 0;
    /// Slices in flight per connection (NCCL_STEPS = 8); 0 = unbounded.
    uint32_t m_slots = 8;
    /// GPU cost of starting one step of one tile (primitive set-up and flag synchronisation).
    int64_t m_stepLatencyPs = 500000;
    /// Kernel launch before the first step of a collective.
    int64_t m_launchLatencyPs = 4000000;
    /// Memory bandwidth for reductions and copies (bytes/s): a reduction of b bytes reads two
    /// operands and writes one (3b), a copy reads and writes (2b).
    double m_memoryBytesPerSecond = 3.35e12;
    /// Protocol override; Protocol of the schedule when false.
    bool m_overrideProtocol = false;
    Protocol m_protocol = Protocol::kSimple;
};

/// Payload bytes of one connection buffer under \p p (Simple 4 MiB, LL 256 KiB of data in
/// 512 KiB of lines, LL128 4,915,200 B x 120/128).
uint64_t ProtocolBufferBytes(Protocol p);

/// Fraction of transferred bytes that is payload (Simple 1, LL 0.5, LL128 120/128).
double ProtocolEfficiency(Protocol p);

/// A threadblock that could not finish, and what it waits for.
struct StuckThreadblock
{
    int m_rank = 0; ///< schedule rank
    int m_tb = 0;
    int m_tile = 0;
    int m_step = 0;
    StepOp m_op = StepOp::kNop;
    std::string m_waitsOn; ///< "a message from rank 3 on channel 0 (none sent yet)", ...

    /// "rank 2 tb 0 tile 0 step 5 (rrs): waits for ..."
    std::string ToString() const;
};

/// Outcome of one execution.
struct ExecutionResult
{
    bool m_complete = false;
    int64_t m_startPs = 0;
    int64_t m_endPs = 0;               ///< last rank done (or when the transport ran dry)
    std::vector<int64_t> m_rankDonePs; ///< per schedule rank; -1 when not done
    uint64_t m_messages = 0;           ///< transport messages (slices) sent
    uint64_t m_payloadBytes = 0;       ///< bytes of user data moved between ranks
    uint64_t m_transferBytes = 0;      ///< bytes handed to the transport (protocol overhead in)
    uint32_t m_tiles = 0;
    uint64_t m_tileChunkBytes = 0; ///< bytes of one chunk in one (full) tile
    uint64_t m_sliceBytes = 0;
    Protocol m_protocol = Protocol::kSimple;
    uint64_t m_undeliveredMessages = 0; ///< sent but not delivered when execution stopped
    uint64_t m_unconsumedMessages = 0;  ///< delivered but never received by a step
    std::vector<StuckThreadblock> m_stuck;

    /// Elapsed simulated time.
    int64_t DurationPs() const
    {
        return m_endPs - m_startPs;
    }

    /// Multi-line report of the stuck ranks (empty when complete).
    std::string StuckReport(size_t maxLines = 32) const;
};

/**
 * Runs one schedule over a transport. The executor must outlive the transport's run (it owns
 * the state its callbacks use). Schedule rank i runs on transport rank RankMap[i].
 */
class Executor
{
  public:
    using RankDone = std::function<void(uint32_t scheduleRank)>;
    using Done = std::function<void()>;

    /**
     * \param rankMap transport rank of each schedule rank (empty = identity)
     * \param channelBase added to each threadblock channel, so concurrent collectives on the
     *        same ranks use their own connections
     * \throws fabricsim::InputError when the schedule cannot be executed at all (bad structure:
     *         peers, channels or dependencies that do not exist, rank count mismatch)
     */
    Executor(Transport& transport,
             const Schedule& schedule,
             const ExecutorConfig& config,
             std::vector<uint32_t> rankMap = {},
             uint32_t channelBase = 0);
    ~Executor();
    Executor(const Executor&) = delete;
    Executor& operator=(const Executor&) = delete;

    /// Start the collective on \p bytes (nccl-tests size convention) now.
    void Start(uint64_t bytes, RankDone onRankDone = {}, Done onDone = {});

    bool Complete() const
    {
        return m_ranksDone == m_ranks.size();
    }

    /// Result so far; when incomplete, the stuck threadblocks and what they wait on.
    ExecutionResult Result() const;

  private:
    enum class Wait
    {
        kNone,
        kDependency,
        kMessage,
        kSlot,
        kTimer
    };

    struct Connection
    {
        uint32_t m_src = 0; ///< schedule ranks
        uint32_t m_dst = 0;
        uint32_t m_channel = 0;
        std::deque<uint64_t> m_arrived; ///< delivered, not yet received by a step
        uint32_t m_slotsUsed = 0;       ///< sent and not yet received by a step
        uint64_t m_sent = 0;
        uint64_t m_delivered = 0;
        std::vector<int> m_waiters; ///< tbs blocked on this connection
    };

    struct TbState
    {
        int m_rank = 0;
        const Threadblock* m_tb = nullptr;
        int m_sendConn = -1;
        int m_recvConn = -1;
        int m_tile = 0;
        int m_step = 0;
        bool m_started = false; ///< step latency paid for the current step
        uint32_t m_slice = 0;
        uint32_t m_slices = 0;
        bool m_received = false;  ///< current slice received
        bool m_slotTaken = false; ///< current slice holds a send slot
        bool m_computed = false;  ///< current slice's local work done
        bool m_done = false;
        Wait m_wait = Wait::kNone;
        uint64_t m_stepsDone = 0; ///< over all tiles
    };

    void CheckExecutable() const;
    int ConnectionIndex(uint32_t src, uint32_t dst, uint32_t channel);
    uint64_t TileChunkBytes(int tile) const;
    uint64_t SliceBytes(const TbState& t, uint32_t slice) const;
    int64_t ComputePs(StepOp op, uint64_t bytes) const;
    bool DependenciesMet(const TbState& t) const;
    void Wake(int tb);
    void Drain();
    void Advance(int tb);
    void StartTimer(int tb, int64_t delayPs);
    void Delivered(int conn, uint64_t bytes);
    void StepFinished(int tb);
    std::string DescribeWait(const TbState& t) const;

    Transport& m_transport;
    Schedule m_schedule;
    ExecutorConfig m_config;
    std::vector<uint32_t> m_rankMap;
    uint32_t m_channelBase;
    Protocol m_protocol;
    double m_efficiency;
    uint64_t m_sliceBytes = 0;
    uint64_t m_chunkBytes = 0; ///< bytes of one chunk over all tiles
    int m_tiles = 1;
    std::vector<std::vector<int>> m_rankTbs; ///< tb state indices per rank, by tb id
    std::vector<TbState> m_tbs;
    std::vector<Connection> m_conns;
    std::map<std::tuple<uint32_t, uint32_t, uint32_t>, int> m_connIndex;
    std::vector<int> m_ranks; ///< tbs left per rank
    std::vector<int64_t> m_rankDonePs;
    size_t m_ranksDone = 0;
    std::deque<int> m_ready;
    std::vector<bool> m_queued;
    bool m_draining = false;
    bool m_started = false;
    int64_t m_startPs = 0;
    int64_t m_endPs = 0;
    uint64_t m_messages = 0;
    uint64_t m_payloadBytes = 0;
    uint64_t m_transferBytes = 0;
    RankDone m_onRankDone;
    Done m_onDone;
    /// Cleared on destruction: transport callbacks that fire later (a run stopped by a
    /// watchdog) find it false and do nothing.
    std::shared_ptr<bool> m_alive = std::make_shared<bool>(true);
};

/**
 * Convenience: run \p schedule on \p bytes over \p transport until the transport is idle and
 * return the result (complete, or the stuck report).
 */
ExecutionResult RunSchedule(Transport& transport,
                            const Schedule& schedule,
                            uint64_t bytes,
                            const ExecutorConfig& config = {});

} // namespace fabricsim

#endif
