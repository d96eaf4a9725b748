/*
 * Symbolic chunk-level execution of a schedule: every buffer slot holds a multiset of
 * (rank, chunk) contributions; messages are FIFO per (sender, receiver, channel) with
 * unbounded capacity (sends never block); threadblocks run their steps in order, waiting on
 * dependencies and on receives. Event-driven: a blocked threadblock is woken only when the
 * threadblock or channel it waits on makes progress. Internal to the validator.
 */
#ifndef FABRICSIM_SYMBOLIC_EXECUTION_H
#define FABRICSIM_SYMBOLIC_EXECUTION_H

#include "buffer-layout.h"
#include "contribution-set.h"
#include "schedule-ir.h"
#include "schedule-validator.h"

#include <array>
#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

namespace fabricsim
{

/// One buffer slot: its contributions and the step that last wrote it.
struct Slot
{
    ContributionSet m_value;
    int m_writerTb = -1;   ///< -1: initial value
    int m_writerStep = -1; ///< -1: initial value
};

/// Executes a schedule symbolically over a given buffer layout.
class SymbolicExecution
{
  public:
    /// Order in which ready threadblocks run. Results of a race-free schedule do not depend
    /// on it; running both exposes many races between unordered threadblocks.
    enum class Order
    {
        kForward,  ///< rank/tb ascending, first-woken first
        kReverse,  ///< rank/tb descending, last-woken first
        kLazyLocal ///< as kReverse, and local-only steps (cpy, re, nop) wait until nothing
                   ///< else can run
    };

    /// Sets input slots to {(rank, j)} and applies initial copies.
    SymbolicExecution(const Schedule& schedule,
                      const std::vector<RankLayout>& layouts,
                      Order order = Order::kForward);

    /**
     * Runs until every step executed or nothing can run. Appends kCountMismatch,
     * kUninitializedRead, kDeadlock and kUnmatchedMessage problems. \return true when every step
     * executed
     */
    bool Run(std::vector<Problem>& problems);

    /// Steps executed so far.
    size_t StepsExecuted() const
    {
        return m_stepsExecuted;
    }

    /// Slot \p offset of logical buffer \p buffer on \p rank, or nullptr when out of range.
    const Slot* Read(int rank, BufferKind buffer, int offset) const;

  private:
    struct Message
    {
        std::vector<ContributionSet> m_data;
        int m_srcTb;
        int m_srcStep;
    };

    struct Channel
    {
        int m_sender;
        int m_receiver;
        int m_channel;
        std::deque<Message> m_queue;
        std::vector<int> m_waiters; ///< tb indices on the receiver
        size_t m_delivered = 0;
    };

    struct TbState
    {
        const Threadblock* m_tb = nullptr;
        size_t m_pc = 0; ///< next step position
        bool m_queued = false;
        bool m_forced = false; ///< kLazyLocal: may run its delayed local step now
        std::vector<std::vector<std::pair<int, int>>> m_deps; ///< per step: (tb index, step)
        std::vector<int> m_depWaiters; ///< tb indices on the same rank waiting on this one
    };

    struct RankState
    {
        const RankProgram* m_program = nullptr;
        std::vector<TbState> m_tbs;
        std::array<std::vector<Slot>, 3> m_storage;
    };

    static uint64_t ChannelKey(int sender, int receiver, int channel);
    Channel& GetChannel(int sender, int receiver, int channel);
    Slot* Locate(int rank, BufferKind buffer, int offset);
    void Enqueue(int rank, int tb);
    void Advance(int rank, int tb, std::vector<Problem>& problems);
    void Execute(
        int rank, int tb, const Step& step, Message* incoming, std::vector<Problem>& problems);
    void ReportBlocked(std::vector<Problem>& problems) const;
    std::string DescribeWait(int rank, int tb, std::pair<int, int>* next) const;

    const Schedule& m_schedule;
    const std::vector<RankLayout>& m_layouts;
    std::vector<RankState> m_ranks;
    std::unordered_map<uint64_t, Channel> m_channels;
    std::deque<std::pair<int, int>> m_ready;
    std::vector<std::pair<int, int>> m_delayed; ///< kLazyLocal: tbs whose next step is local
    const ContributionSet m_empty;
    size_t m_stepsExecuted = 0;
    Order m_order;
};

} // namespace fabricsim

#endif
