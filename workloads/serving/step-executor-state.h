/*
 * The step executor's internal state (step-executor.cc and step-executor-collective.cc share
 * it): a running step, a rank's cursors and accounting, a collective and a point-to-point
 * transfer being gathered. Not for other users.
 */
#ifndef FABRICSIM_STEP_EXECUTOR_STATE_H
#define FABRICSIM_STEP_EXECUTOR_STATE_H

#include "step-executor.h"

#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace fabricsim
{

struct StepExecutor::StepRun
{
    std::shared_ptr<const StepProgram> prog; //!< the program
    StepDone done;                           //!< completion callback
    StepStats stats;                         //!< accounting
    size_t ranksLeft = 0;                    //!< ranks still running it
};

struct StepExecutor::RankState
{
    /// Cursor of one stream.
    struct Stream
    {
        std::vector<size_t> items; //!< indexes of its items in the program
        size_t pos = 0;            //!< next item
        bool blocked = false;      //!< waiting for `key`
        std::string key;           //!< what it waits for
    };

    uint32_t rank = 0;                             //!< global rank
    std::deque<std::pair<StepRun*, size_t>> queue; //!< programs to run (run, rank index)
    StepRun* cur = nullptr;                        //!< running program
    size_t idx = 0;                                //!< its rank index
    std::vector<Stream> streams;                   //!< stream cursors
    std::unordered_map<std::string, const ProgramItem*> comms; //!< communication items by key
    std::unordered_map<std::string, int64_t> arrival;          //!< when each was reached
    std::unordered_set<std::string> completed;                 //!< done, not yet consumed
    std::unordered_set<std::string> started;                   //!< started (for exposed vs sync)
    bool computing = false;                                    //!< compute engine busy
    double smHeld = 0;        //!< SM share held by its collectives in flight (ProgramItem::smShare)
    double computeLeft = 0;   //!< running compute: ps of work left at full rate, at computeSince
    int64_t computeSince = 0; //!< when computeLeft was taken
    double computeRate = 1;   //!< running compute's rate: the SMs its collectives leave it
    uint64_t computeGen = 0;  //!< bumped when the running compute's end moves (stale ends ignored)
    uint32_t computeStream = 0; //!< stream of the running compute
    int64_t last = 0;           //!< last accounting time
    int64_t pcieFree = 0;       //!< host-tier link free again
    int64_t sliceStart = -1;    //!< open compute slice
    int64_t sliceEnd = -1;      //!< its end so far
    uint32_t sliceOps = 0;      //!< ops merged into it
    std::string sliceFirst;     //!< its first op
    bool advancing = false;     //!< inside Advance
    bool again = false;         //!< Advance requested while inside

    RankStepProgram const& Program() const
    {
        return cur->prog->ranks[idx];
    }
};

struct StepExecutor::Collective
{
    std::vector<uint32_t> group;             //!< global ranks
    CommOp op = CommOp::AllReduce;           //!< kind
    std::vector<const ProgramItem*> members; //!< item of each member (null: not arrived)
    size_t arrived = 0;                      //!< members arrived
    size_t left = 0;                         //!< gather: sends not delivered
};

struct StepExecutor::PointToPoint
{
    uint32_t src = 0;         //!< sender
    uint32_t dst = 0;         //!< receiver
    bool sendIssued = false;  //!< sender reached its send
    bool recvArrived = false; //!< receiver reached its receive
    bool delivered = false;   //!< data arrived
};

} // namespace fabricsim

#endif
